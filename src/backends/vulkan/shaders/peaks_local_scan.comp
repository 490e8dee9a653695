#version 450
// Local peaks, pass 2 of 3 (peaks_local.glsl; its SLEAPC_FP16 variant
// differs only in the maps' binding, which this pass does not read): one
// workgroup. The rows' exclusive offsets into rows[p.rows + r], the total
// into dst[0] and each sample's count into dst[1 + b].
#include "peaks_local.glsl"

shared uint s_n[64];

void main()
{
    int t = int(gl_LocalInvocationID.x);
    uint carry = 0u;
    for (int r0 = 0; r0 < p.rows; r0 += 64) {
        int r = r0 + t;
        uint v = r < p.rows ? rows[r] : 0u;
        s_n[t] = v;
        barrier();
        for (int d = 1; d < 64; d <<= 1) {
            uint add = t >= d ? s_n[t - d] : 0u;
            barrier();
            s_n[t] += add;
            barrier();
        }
        if (r < p.rows)
            rows[p.rows + r] = carry + s_n[t] - v;
        carry += s_n[63];
        barrier();
    }
    if (t == 0)
        dst[0] = carry;
    for (int b = t; b < p.b; b += 64) {
        uint n = 0u;
        for (int y = 0; y < p.h; y++)
            n += rows[b * p.h + y];
        dst[1 + b] = n;
    }
}
