#version 450
// Depthwise k x k convolution, stride 1, pad (k-1)/2, bias
// (SLEAPC_OP_DWCONV); weight (C, 1, k, k). One thread per output value.
#include "common.glsl"
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c, h, w, k, act;
} p;

void main()
{
    int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    int plane = int(gl_GlobalInvocationID.z);
    if (x >= p.w || y >= p.h)
        return;
    int ci = plane % p.c, pad = (p.k - 1) / 2;
    int base = plane * p.h * p.w;
    float acc = float(bias[ci]);
    for (int ky = 0; ky < p.k; ky++) {
        int iy = y + ky - pad;
        if (iy < 0 || iy >= p.h)
            continue;
        for (int kx = 0; kx < p.k; kx++) {
            int ix = x + kx - pad;
            if (ix >= 0 && ix < p.w)
                acc += prod16(wts[(ci * p.k + ky) * p.k + kx], src0[base + iy * p.w + ix]);
        }
    }
    dst[base + y * p.w + x] = to_store(activate(acc, p.act));
}
