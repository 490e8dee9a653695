#version 450
// Local peaks, pass 1 of 3 (peaks_local.glsl; SLEAPC_FP16: the fp16-storage
// variant): one workgroup per row (sample, map row), which counts the local
// peaks of that row over every channel and column into rows[row] (in any
// order: channel by channel, so neighbouring threads read neighbouring
// cells).
#include "peaks_local.glsl"

shared uint s_n[64];

void main()
{
    int r = row_id(), t = int(gl_LocalInvocationID.x);
    if (r >= p.rows)
        return; // the whole workgroup
    int b = r / p.h, y = r - b * p.h, n = p.w * p.c;
    uint count = 0u;
    for (int i = t; i < n; i += 64) {
        int ch = i / p.w, x = i - ch * p.w; // along the rows: neighbours read neighbours
        uint v;
        if (is_peak((b * p.c + ch) * p.h * p.w, y, x, v))
            count++;
    }
    s_n[t] = count;
    barrier();
    for (int s = 32; s > 0; s >>= 1) {
        if (t < s)
            s_n[t] += s_n[t + s];
        barrier();
    }
    if (t == 0)
        rows[r] = s_n[0];
}
