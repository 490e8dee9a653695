#version 450
// 3 x 3 stride-2 transposed convolution (SLEAPC_OP_CONV_TRANSPOSE2D), output
// 2H x 2W, one thread per output value. Output (y, x) is full position
// (y + off, x + off), off 1 for PyTorch's padding 1 / output_padding 1 and 0
// for Keras "same"; full row p takes input row i through kernel row a when
// p = 2i + a. Weight (c_in, c_out, 3, 3) as PyTorch stores it.
#include "common.glsl"
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c_in, c_out, h, w, off, act;
} p;

void main()
{
    int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y);
    int b = int(gl_GlobalInvocationID.z) / p.c_out, co = int(gl_GlobalInvocationID.z) % p.c_out;
    int oh = 2 * p.h, ow = 2 * p.w;
    if (ox >= ow || oy >= oh)
        return;
    int py = oy + p.off, px = ox + p.off;
    float acc = float(bias[co]);
    for (int a = 0; a < 3; a++) {
        int ry = py - a;
        if (ry < 0 || (ry & 1) != 0 || (ry >> 1) >= p.h)
            continue;
        for (int bb = 0; bb < 3; bb++) {
            int rx = px - bb;
            if (rx < 0 || (rx & 1) != 0 || (rx >> 1) >= p.w)
                continue;
            int in_off = (b * p.c_in * p.h + (ry >> 1)) * p.w + (rx >> 1);
            for (int ci = 0; ci < p.c_in; ci++)
                acc += float(src0[in_off + ci * p.h * p.w]) *
                       float(wts[(ci * p.c_out + co) * 9 + a * 3 + bb]);
        }
    }
    dst[((b * p.c_out + co) * oh + oy) * ow + ox] = to_store(activate(acc, p.act));
}
