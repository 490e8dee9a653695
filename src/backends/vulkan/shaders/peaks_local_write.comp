#version 450
// Local peaks, pass 3 of 3 (peaks_local.glsl; SLEAPC_FP16: the fp16-storage
// variant): one workgroup per row writes the row's peaks from its offset in
// the host's order (a workgroup scan of each 64 candidates), as far as the
// room (p.cap) goes: grid and refined coordinates, value (its bits), sample
// and channel. The integral refinement is peaks.c's: Torch's summation
// order (torch_sum) without fused multiply-adds (precise); only the division
// is not correctly rounded on every GPU (Vulkan allows 2.5 ulp), so a
// refined coordinate may differ from the host's by that much of the offset
// plus one rounding.
#include "peaks_local.glsl"

shared uint s_n[64];

int g_base, g_x0, g_y0; // the patch being refined: its map and origin

float term(int which, int i)
{
    int r = i / p.k, c = i - r * p.k;
    int y = g_y0 + r, x = g_x0 + c;
    float v = (y >= 0 && y < p.h && x >= 0 && x < p.w) ? uintBitsToFloat(load(g_base + y * p.w + x))
                                                       : 0.0;
    precise float half_ = float(p.k - 1) * 0.5;
    precise float g = float(which == 1 ? c : r) - half_;
    precise float t = g * v;
    return which == 0 ? v : t;
}

// Torch's float32 sum of n < 512 values (peaks.c's torch_sum).
float torch_sum(int which, int n)
{
    if (n < 8) {
        precise float a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        int n4 = n / 4 * 4;
        for (int i = 0; i < n4; i += 4) {
            a0 += term(which, i);
            a1 += term(which, i + 1);
            a2 += term(which, i + 2);
            a3 += term(which, i + 3);
        }
        for (int i = n4; i < n; i++)
            a0 += term(which, i);
        precise float s = ((a0 + a1) + a2) + a3;
        return s;
    }
    int m = n / 8, q = m / 4;
    precise float lanes[32];
    for (int l = 0; l < 32; l++)
        lanes[l] = 0.0;
    for (int g = 0; g < q; g++)
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 8; l++)
                lanes[c * 8 + l] += term(which, (4 * g + c) * 8 + l);
    for (int v = 4 * q; v < m; v++)
        for (int l = 0; l < 8; l++)
            lanes[l] += term(which, v * 8 + l);
    for (int c = 1; c < 4; c++)
        for (int l = 0; l < 8; l++)
            lanes[l] += lanes[c * 8 + l];
    precise float s = 0.0;
    for (int i = 8 * m; i < n; i++)
        s += term(which, i);
    for (int l = 0; l < 8; l++)
        s += lanes[l];
    return s;
}

void write_peak(uint slot, int b, int ch, int x, int y, uint v)
{
    int hdr = 1 + p.b, i = int(slot);
    float ox = float(x), oy = float(y);
    if (p.k > 0) {
        g_base = (b * p.c + ch) * p.h * p.w;
        g_x0 = x - p.k / 2;
        g_y0 = y - p.k / 2;
        int n = p.k * p.k;
        float z = torch_sum(0, n);
        float sx = torch_sum(1, n);
        float sy = torch_sum(2, n);
        precise float rx = float(x) + sx / z;
        precise float ry = float(y) + sy / z;
        ox = rx;
        oy = ry;
    }
    dst[hdr + 2 * i] = floatBitsToUint(ox);
    dst[hdr + 2 * i + 1] = floatBitsToUint(oy);
    dst[hdr + 2 * p.cap + i] = v;
    int e = hdr + 3 * p.cap + 4 * i;
    dst[e] = uint(b);
    dst[e + 1] = uint(ch);
    dst[e + 2] = uint(x);
    dst[e + 3] = uint(y);
}

void main()
{
    int r = row_id(), t = int(gl_LocalInvocationID.x);
    if (r >= p.rows)
        return; // the whole workgroup
    int b = r / p.h, y = r - b * p.h, n = p.w * p.c;
    uint next = rows[p.rows + r]; // the slot of this chunk's first peak
    for (int i0 = 0; i0 < n; i0 += 64) {
        int i = i0 + t, x = 0, ch = 0;
        uint v = 0u;
        bool found = false;
        if (i < n) {
            x = i / p.c;
            ch = i - x * p.c;
            found = is_peak((b * p.c + ch) * p.h * p.w, y, x, v);
        }
        uint mine = found ? 1u : 0u;
        s_n[t] = mine;
        barrier();
        for (int d = 1; d < 64; d <<= 1) {
            uint add = t >= d ? s_n[t - d] : 0u;
            barrier();
            s_n[t] += add;
            barrier();
        }
        uint slot = next + s_n[t] - mine;
        next += s_n[63];
        barrier();
        if (found && slot < uint(p.cap))
            write_peak(slot, b, ch, x, y, v);
    }
}
