#version 450
// k x k patches at `stride`, zero padding `pad` (SLEAPC_OP_PATCHES): output
// channel (c, ky, kx) as a conv weight flattens, or for a patch merge
// (k = stride = 2) channel (2*kx+ky)*C + c, torchvision's x0..x3 order.
#include "common.glsl"
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c, h, w, oh, ow, k, stride, pad, merge;
} p;

void main()
{
    int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y);
    int plane = int(gl_GlobalInvocationID.z);
    if (ox >= p.ow || oy >= p.oh)
        return;
    int kk = p.k * p.k, out_c = p.c * kk;
    int b = plane / out_c, oc = plane % out_c, ci, ky, kx;
    if (p.merge != 0) {
        int idx = oc / p.c;
        ci = oc % p.c;
        ky = idx % 2;
        kx = idx / 2;
    } else {
        ci = oc / kk;
        ky = oc % kk / p.k;
        kx = oc % p.k;
    }
    int iy = oy * p.stride - p.pad + ky, ix = ox * p.stride - p.pad + kx;
    float v = 0.0;
    if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w)
        v = float(src0[((b * p.c + ci) * p.h + iy) * p.w + ix]);
    dst[(plane * p.oh + oy) * p.ow + ox] = to_store(v);
}
