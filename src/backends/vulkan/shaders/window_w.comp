#version 450
// Windows cut from uploaded uint8 frames, first half (vulkan_window.c):
// per sample, channel and window row, the window's row (0 outside the
// frame) resized to rs_w columns as core/resize_aa.c's width pass does
// (its sums in its order: the first product, then rounded product plus
// rounded sum in groups of four, then the last taps fused), or copied when
// the width stays. Into tmp (n, c, win_h, rs_w), float32 in both variants
// (the SLEAPC_FP16 one too: the host's intermediate is float32).
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer Tmp { float tmp[]; };
layout(std430, set = 0, binding = 1) readonly buffer Frames { uint frames[]; };
layout(std430, set = 0, binding = 2) readonly buffer Geom { uint geom[]; };
layout(push_constant) uniform P {
    int c, fh, fw, win_h, win_w, rs_w, taps, off_bounds, off_weights;
} p;

// Samples start at word SAMPLES of geom: frame, x0, y0 each.
const int SAMPLES = 256;

float pix(int f, int ch, int y, int x)
{
    if (y < 0 || y >= p.fh || x < 0 || x >= p.fw)
        return 0.0;
    int idx = ((f * p.c + ch) * p.fh + y) * p.fw + x;
    return float((frames[idx >> 2] >> (uint(idx & 3) * 8u)) & 255u);
}

void main()
{
    int ox = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    int z = int(gl_GlobalInvocationID.z);
    if (ox >= p.rs_w || y >= p.win_h)
        return;
    int k = z / p.c, ch = z - k * p.c;
    int f = int(geom[SAMPLES + 3 * k]);
    int x0 = int(geom[SAMPLES + 3 * k + 1]), fy = int(geom[SAMPLES + 3 * k + 2]) + y;
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
