#version 450
// k x k convolution, stride 1, "same" zero padding, bias and activation
// (SLEAPC_OP_CONV2D). Each workgroup computes a TS x TS tile of CO output
// channels of one image; the input tile (with its halo) and the weights of CI
// input channels at a time are staged in shared memory, so each input value
// is read from memory once per tile instead of k*k*CO times.
#include "common.glsl"
#define TS 16
#define MAXK 7
#define SPAN (TS + MAXK - 1)
#define CI 4
#define CO 8
layout(local_size_x = TS, local_size_y = TS, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c_in, c_out, h, w, k, act, co_groups;
} p;

#ifdef SLEAPC_FP16_MATH
// fp16 arithmetic (common.glsl): the tiles hold the buffers' binary16 values
// as they are, and four output channels' products are one f16vec4 product,
// widened and accumulated in float32.
#define TILE_T float16_t
shared f16vec4 wtile[CO / 4][CI][MAXK * MAXK];
#else
#define TILE_T float
shared float wtile[CO][CI][MAXK * MAXK];
#endif
shared TILE_T tile[CI][SPAN][SPAN];

void main()
{
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
    int lid = ty * TS + tx;
    int x0 = int(gl_WorkGroupID.x) * TS, y0 = int(gl_WorkGroupID.y) * TS;
    int b = int(gl_WorkGroupID.z) / p.co_groups;
    int co0 = int(gl_WorkGroupID.z) % p.co_groups * CO;
    int pad = (p.k - 1) / 2, span = TS + p.k - 1, kk = p.k * p.k;
    int hw = p.h * p.w;
    int xbase = b * p.c_in * hw;
#ifdef SLEAPC_FP16_MATH
    vec4 acc4[CO / 4];
    for (int q = 0; q < CO / 4; q++)
        acc4[q] = vec4(0.0);
#else
    float acc[CO];
    for (int o = 0; o < CO; o++)
        acc[o] = 0.0;
#endif
    for (int ci0 = 0; ci0 < p.c_in; ci0 += CI) {
        barrier();
        for (int e = lid; e < CI * span * span; e += TS * TS) {
            int c = e / (span * span), r = e % (span * span);
            int yy = r / span, xx = r % span;
            int iy = y0 + yy - pad, ix = x0 + xx - pad;
            TILE_T v = TILE_T(0.0);
            if (ci0 + c < p.c_in && iy >= 0 && iy < p.h && ix >= 0 && ix < p.w)
                v = TILE_T(src0[xbase + (ci0 + c) * hw + iy * p.w + ix]);
            tile[c][yy][xx] = v;
        }
        for (int e = lid; e < CO * CI * kk; e += TS * TS) {
            int o = e / (CI * kk), r = e % (CI * kk);
            int c = r / kk, t = r % kk;
            TILE_T v = TILE_T(0.0);
            if (co0 + o < p.c_out && ci0 + c < p.c_in)
                v = TILE_T(wts[((co0 + o) * p.c_in + ci0 + c) * kk + t]);
#ifdef SLEAPC_FP16_MATH
            wtile[o / 4][c][t][o % 4] = v;
#else
            wtile[o][c][t] = v;
#endif
        }
        barrier();
        for (int c = 0; c < CI; c++)
            for (int ky = 0; ky < p.k; ky++)
                for (int kx = 0; kx < p.k; kx++) {
                    TILE_T v = tile[c][ty + ky][tx + kx];
#ifdef SLEAPC_FP16_MATH
                    for (int q = 0; q < CO / 4; q++)
                        acc4[q] += vec4(v * wtile[q][c][ky * p.k + kx]);
#else
                    for (int o = 0; o < CO; o++)
                        acc[o] += v * wtile[o][c][ky * p.k + kx];
#endif
                }
    }
    int ox = x0 + tx, oy = y0 + ty;
    if (ox >= p.w || oy >= p.h)
        return;
#ifdef SLEAPC_FP16_MATH
    float acc[CO];
    for (int o = 0; o < CO; o++)
        acc[o] = acc4[o / 4][o % 4];
#endif
    for (int o = 0; o < CO; o++) {
        int co = co0 + o;
        if (co < p.c_out)
            dst[(b * p.c_out + co) * hw + oy * p.w + ox] =
                to_store(activate(acc[o] + float(bias[co]), p.act));
    }
}
