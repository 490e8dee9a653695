#version 450
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#else
#define ELEM float
#endif
// sleapc__peaks_find_global (core/peaks.c) on the device, one
// workgroup per (sample, channel) map: the maximum, Torch's NaN-propagating
// max (the first NaN, else the first of equal maxima); x the first column
// and y the first row holding it; below the threshold NaN coordinates and
// value 0; else the integral refinement with Torch's summation order
// (torch_sum) and no fused multiply-adds (precise). Writes (maps, 2) peaks
// then (maps) values. Only the division is not correctly rounded on every
// GPU (Vulkan allows 2.5 ulp): a refined coordinate may differ from the
// host's by that much of the offset plus one rounding.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Dst { float dst[]; };
// fp16: the maps are binary16, each widened as the host widens them.
layout(std430, set = 0, binding = 1) readonly buffer Src { ELEM src[]; };
layout(push_constant) uniform P {
    int maps, h, w, k;
    float thr;
} p;

shared float s_v[64];
shared int s_i[64];

// Of two candidates (index -1: none), the one the host's scan keeps.
bool first_is_kept(float av, int ai, float bv, int bi)
{
    if (bi < 0)
        return true;
    if (ai < 0)
        return false;
    bool na = isnan(av), nb = isnan(bv);
    if (na != nb)
        return na;
    if (!na && av != bv)
        return av > bv;
    return ai < bi;
}

int base;

float term(int which, int i)
{
    int r = i / p.k, c = i - r * p.k;
    int y = s_i[1] + r, x = s_i[2] + c;
    float v = (y >= 0 && y < p.h && x >= 0 && x < p.w) ? float(src[base + y * p.w + x]) : 0.0;
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

void main()
{
    int m = int(gl_WorkGroupID.x), t = int(gl_LocalInvocationID.x);
    int hw = p.h * p.w;
    base = m * hw;
    float bv = 0.0;
    int bi = -1;
    for (int i = t; i < hw; i += 64) {
        float v = float(src[base + i]);
        if (!first_is_kept(bv, bi, v, i)) {
            bv = v;
            bi = i;
        }
    }
    s_v[t] = bv;
    s_i[t] = bi;
    barrier();
    for (int s = 32; s > 0; s >>= 1) {
        if (t < s && !first_is_kept(s_v[t], s_i[t], s_v[t + s], s_i[t + s])) {
            s_v[t] = s_v[t + s];
            s_i[t] = s_i[t + s];
        }
        barrier();
    }
    float best = s_v[0];
    int y = s_i[0] / p.w;
    barrier();
    // x: the first column holding the maximum in any row.
    int x = p.w;
    for (int i = t; i < hw; i += 64) {
        float v = float(src[base + i]);
        if (isnan(best) ? isnan(v) : v == best)
            x = min(x, i % p.w);
    }
    s_i[t] = x;
    barrier();
    for (int s = 32; s > 0; s >>= 1) {
        if (t < s)
            s_i[t] = min(s_i[t], s_i[t + s]);
        barrier();
    }
    x = s_i[0];
    barrier();
    if (t != 0)
        return;
    if (best < p.thr) {
        dst[2 * m] = uintBitsToFloat(0x7fc00000u);
        dst[2 * m + 1] = uintBitsToFloat(0x7fc00000u);
        dst[2 * p.maps + m] = 0.0;
        return;
    }
    dst[2 * p.maps + m] = best;
    if (p.k == 0) {
        dst[2 * m] = float(x);
        dst[2 * m + 1] = float(y);
        return;
    }
    // The patch origin, read by term().
    s_i[1] = y - p.k / 2;
    s_i[2] = x - p.k / 2;
    int n = p.k * p.k;
    float z = torch_sum(0, n);
    float sx = torch_sum(1, n);
    float sy = torch_sum(2, n);
    precise float ox = float(x) + sx / z;
    precise float oy = float(y) + sy / z;
    dst[2 * m] = ox;
    dst[2 * m + 1] = oy;
}
