// Shared by peaks_local_count.comp, peaks_local_scan.comp and
// peaks_local_write.comp: sleapc__peaks_find_local (core/peaks.c) on
// the device. Binding 0 the host-visible result (words: the total, a count
// per sample, then room for `cap` peaks: (cap, 2) refined x, y, (cap)
// values, (cap, 4) sample, channel, grid x, grid y), 1 the head's maps
// (B, C, H, W), 2 the rows' peak counts then their offsets (vulkan_impl.h's
// vk_local_peaks). A "row" is one map row y of one sample across every
// channel: the host's order is sample, row, column, channel, so the rows in
// order, each read column by column and channel by channel, give it.
//
// Comparisons are made on the bits (an order-preserving integer key, -0 and
// +0 equal, NaN never greater nor smaller), so they are exact where a GPU
// flushes subnormals or assumes no NaN. fp16 (SLEAPC_FP16): the maps are
// binary16, widened to float32 by integer operations exactly as the host
// widens them (vulkan_half.c).
#extension GL_GOOGLE_include_directive : require
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Dst { uint dst[]; };
#ifdef SLEAPC_FP16
layout(std430, set = 0, binding = 1) readonly buffer Src { uint16_t src[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer Src { uint src[]; };
#endif
layout(std430, set = 0, binding = 2) buffer Rows { uint rows[]; };
layout(push_constant) uniform P {
    int rows, b, c, h, w, k, cap;
    uint thr; // float32 bits of the threshold
} p;

#ifdef SLEAPC_FP16
uint half_bits(uint h)
{
    uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu)
        return s | 0x7f800000u | (m << 13);
    if (e != 0u)
        return s | ((e + 112u) << 23) | (m << 13);
    if (m == 0u)
        return s;
    int top = findMSB(m); // 0..9: m * 2^-24 = 1.f * 2^(top - 24)
    return s | (uint(top + 103) << 23) | ((m << (23 - top)) & 0x7fffffu);
}

uint load(int i) { return half_bits(uint(src[i])); }
#else
uint load(int i) { return src[i]; }
#endif

bool is_nan(uint u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// Float order as integers: -0 as +0, negatives below with their magnitude
// reversed.
int key(uint u)
{
    int i = int(u == 0x80000000u ? 0u : u);
    return i >= 0 ? i : i ^ 0x7fffffff;
}

// a > b as float32 compares them (false with a NaN).
bool gt(uint a, uint b) { return !is_nan(a) && !is_nan(b) && key(a) > key(b); }

// The row's sample and map row from the workgroup (a 2-D grid of rows).
int row_id() { return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x); }

// peaks.c: above the threshold and strictly above every neighbour inside
// the map. *v: the value's bits.
bool is_peak(int base, int y, int x, out uint v)
{
    v = load(base + y * p.w + x);
    if (!gt(v, p.thr))
        return false;
    for (int dy = -1; dy <= 1; dy++) {
        int yy = y + dy;
        if (yy < 0 || yy >= p.h)
            continue;
        for (int dx = -1; dx <= 1; dx++) {
            int xx = x + dx;
            if ((dy == 0 && dx == 0) || xx < 0 || xx >= p.w)
                continue;
            if (!gt(v, load(base + yy * p.w + xx)))
                return false;
        }
    }
    return true;
}
