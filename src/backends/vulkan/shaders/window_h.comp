#version 450
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#define to_store(v) float16_t(v)
#else
#define ELEM float
#define to_store(v) (v)
#endif
// Windows cut from uploaded uint8 frames, second half (vulkan_window.c):
// tmp's columns resized to rs_h rows as core/resize_aa.c's height pass does
// (same sums, same order) or copied when the height stays, rounded half to
// even into uint8 as the host rounds, 0 in the pad below and right of
// (rs_h, rs_w), then normalised as input_u8.comp normalises: the host's
// table v / 255.0f, 1 -> 3 replication, 3 -> 1 luma in the host's order
// without fused multiply-adds. Into node 0 (n, in_c, out_h, out_w); fp16:
// each value rounded once on store.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer Dst { ELEM dst[]; };
layout(std430, set = 0, binding = 1) readonly buffer Tmp { float tmp[]; };
layout(std430, set = 0, binding = 2) readonly buffer Geom { uint geom[]; };
layout(push_constant) uniform P {
    int c, in_c, win_h, rs_h, rs_w, out_h, out_w, taps, off_bounds, off_weights;
} p;

// Words [0, 256) of geom: the table v / 255.0f.
float level(int k, int ch, int oy, int ox)
{
    int plane = (k * p.c + ch) * p.win_h;
    precise float acc = 0.0;
    if (p.win_h == p.rs_h) {
        acc = tmp[(plane + oy) * p.rs_w + ox];
    } else {
        int lo = int(geom[p.off_bounds + 2 * oy]), n = int(geom[p.off_bounds + 2 * oy + 1]);
        int w0 = p.off_weights + oy * p.taps;
        if (n > 0) {
            acc = tmp[(plane + lo) * p.rs_w + ox] * uintBitsToFloat(geom[w0]);
            int n_plain = 1 + ((n - 1) / 4) * 4, j = 1;
            for (; j < n_plain; j++) {
                precise float prod = tmp[(plane + lo + j) * p.rs_w + ox] *
                                     uintBitsToFloat(geom[w0 + j]);
                acc = acc + prod;
            }
            for (; j < n; j++)
                acc = fma(tmp[(plane + lo + j) * p.rs_w + ox], uintBitsToFloat(geom[w0 + j]), acc);
        }
    }
    float r = roundEven(acc);
    uint v = r > 0.0 ? (r > 255.0 ? 255u : uint(r)) : 0u;
    return uintBitsToFloat(geom[v]);
}

void main()
{
    int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y);
    int k = int(gl_GlobalInvocationID.z);
    if (ox >= p.out_w || oy >= p.out_h)
        return;
    bool inside = ox < p.rs_w && oy < p.rs_h;
    int hw = p.out_h * p.out_w, out0 = k * p.in_c * hw + oy * p.out_w + ox;
    if (p.c == p.in_c) {
        for (int ch = 0; ch < p.c; ch++)
            dst[out0 + ch * hw] = to_store(inside ? level(k, ch, oy, ox) : 0.0);
    } else if (p.c == 1) {
        float v = inside ? level(k, 0, oy, ox) : 0.0;
        for (int ch = 0; ch < p.in_c; ch++)
            dst[out0 + ch * hw] = to_store(v);
    } else {
        precise float y = 0.0;
        if (inside) {
            y = 0.2989 * level(k, 0, oy, ox);
            y = y + 0.587 * level(k, 1, oy, ox);
            y = y + 0.114 * level(k, 2, oy, ox);
        }
        dst[out0] = to_store(y);
    }
}
