#version 450
// Bilinear resize, align_corners=False, as PyTorch's upsample_bilinear2d
// computes it for float tensors (SLEAPC_OP_UPSAMPLE2X with scale 0.5 and
// SLEAPC_OP_RESIZE_LIKE with in/out): src = max(scale * (dst + 0.5) - 0.5, 0),
// i0 = floor(src), i1 = i0 + (i0 < in - 1), l1 = src - i0.
#include "common.glsl"
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(push_constant) uniform P {
    int h, w, oh, ow;
    float scale_h, scale_w;
} p;

void coef(float scale, int d, int n, out int i0, out int i1, out float l1)
{
    float s = scale * (float(d) + 0.5) - 0.5;
    if (!(s > 0.0))
        s = 0.0;
    if (s > float(n - 1))
        s = float(n - 1);
    i0 = int(s);
    l1 = s - float(i0);
    i1 = i0 + (i0 < n - 1 ? 1 : 0);
}

void main()
{
    int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y);
    int plane = int(gl_GlobalInvocationID.z);
    if (ox >= p.ow || oy >= p.oh)
        return;
    int y0, y1, x0, x1;
    float ly, lx;
    coef(p.scale_h, oy, p.h, y0, y1, ly);
    coef(p.scale_w, ox, p.w, x0, x1, lx);
    int base = plane * p.h * p.w;
    int r0 = base + y0 * p.w, r1 = base + y1 * p.w;
    float top = (1.0 - lx) * float(src0[r0 + x0]) + lx * float(src0[r0 + x1]);
    float bot = (1.0 - lx) * float(src0[r1 + x0]) + lx * float(src0[r1 + x1]);
    dst[(plane * p.oh + oy) * p.ow + ox] = to_store((1.0 - ly) * top + ly * bot);
}
