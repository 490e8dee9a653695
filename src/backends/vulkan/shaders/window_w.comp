#version 450
// Windows cut from uploaded uint8 frames, first half (vulkan_window.c):
// per sample, channel and window row, the window's row (0 outside the
// frame) resized to rs_w columns as core/resize_aa.c's width pass does
// (its sums in its order: the first product, then rounded product plus
// rounded sum in groups of four, then the last taps fused), or copied when
// the width stays. A pixel's channels are converted first as
// sleapc__channels_coerce_u8 converts fc frame channels into c: channel 0
// replicated (1 -> 3), alpha dropped (4 -> 3), or the luma of its first
// three (3 or 4 -> 1: sleapc__channels_luma_u8's float32 products and
// sums, unfused, truncated). Also the size matcher's width pass (then the
// frames are whole windows). Into tmp (n, c, win_h, rs_w), float32 in both
// variants (the SLEAPC_FP16 one too: the host's intermediate is float32).
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer Tmp { float tmp[]; };
layout(std430, set = 0, binding = 1) readonly buffer Frames { uint frames[]; };
layout(std430, set = 0, binding = 2) readonly buffer Geom { uint geom[]; };
layout(push_constant) uniform P {
    int c, fc, fh, fw, win_h, win_w, rs_w, taps, off_bounds, off_weights, off_samples;
} p;

// Samples start at word off_samples of geom: frame, x0, y0 each.

float byte_at(int idx)
{
    return float((frames[idx >> 2] >> (uint(idx & 3) * 8u)) & 255u);
}

float pix(int f, int ch, int y, int x)
{
    if (y < 0 || y >= p.fh || x < 0 || x >= p.fw)
        return 0.0;
    int plane = p.fh * p.fw, idx = f * p.fc * plane + y * p.fw + x;
    if (p.c == 1 && p.fc >= 3) {
        // preprocess.c's luma: float32 0.2989f, 0.587f, 0.114f (their bits).
        precise float pr = uintBitsToFloat(0x3E99096Cu) * byte_at(idx);
        precise float pg = uintBitsToFloat(0x3F1645A2u) * byte_at(idx + plane);
        precise float s = pr + pg;
        precise float pb = uintBitsToFloat(0x3DE978D5u) * byte_at(idx + 2 * plane);
        precise float l = s + pb;
        return trunc(l);
    }
    return byte_at(idx + (p.fc == 1 ? 0 : ch) * plane);
}

void main()
{
    int ox = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    int z = int(gl_GlobalInvocationID.z);
    if (ox >= p.rs_w || y >= p.win_h)
        return;
    int k = z / p.c, ch = z - k * p.c;
    int f = int(geom[p.off_samples + 3 * k]);
    int x0 = int(geom[p.off_samples + 3 * k + 1]), fy = int(geom[p.off_samples + 3 * k + 2]) + y;
    precise float acc = 0.0;
    if (p.win_w == p.rs_w) {
        acc = pix(f, ch, fy, x0 + ox);
    } else {
        int lo = int(geom[p.off_bounds + 2 * ox]), n = int(geom[p.off_bounds + 2 * ox + 1]);
        int w0 = p.off_weights + ox * p.taps;
        if (n > 0) {
            acc = pix(f, ch, fy, x0 + lo) * uintBitsToFloat(geom[w0]);
            int n_plain = 1 + ((n - 1) / 4) * 4, j = 1;
            for (; j < n_plain; j++) {
                precise float prod = pix(f, ch, fy, x0 + lo + j) * uintBitsToFloat(geom[w0 + j]);
                acc = acc + prod;
            }
            for (; j < n; j++)
                acc = fma(pix(f, ch, fy, x0 + lo + j), uintBitsToFloat(geom[w0 + j]), acc);
        }
    }
    tmp[((k * p.c + ch) * p.win_h + y) * p.rs_w + ox] = acc;
}
