#version 450
// sleap-nn's size matcher on uploaded frames, second half (vulkan_window.c):
// the width pass (window_w.comp on whole frames) resized to match_h rows as
// core/resize_aa.c's height pass does (same sums, same order) or copied when
// the height stays, rounded half to even into uint8 as the host rounds, and
// padded with 0 bottom and right to (sized_h, sized_w): the host's
// size-matched frames, (F, c, sized_h, sized_w) uint8 packed four to a word,
// which the windows are then cut from. One invocation per word; the same
// code in the SLEAPC_FP16 variant (no model-input values here).
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(std430, set = 0, binding = 1) readonly buffer Tmp { float tmp[]; };
layout(std430, set = 0, binding = 2) readonly buffer Geom { uint geom[]; };
layout(push_constant) uniform P {
    int fh, match_h, match_w, sized_h, sized_w, taps, off_bounds, off_weights, n_bytes, row;
} p;

// Plane `plane` (frame * c + channel) of tmp (F * c, fh, match_w), row oy.
uint level(int plane, int oy, int ox)
{
    int base = plane * p.fh;
    precise float acc = 0.0;
    if (p.fh == p.match_h) {
        acc = tmp[(base + oy) * p.match_w + ox];
    } else {
        int lo = int(geom[p.off_bounds + 2 * oy]), n = int(geom[p.off_bounds + 2 * oy + 1]);
        int w0 = p.off_weights + oy * p.taps;
        if (n > 0) {
            acc = tmp[(base + lo) * p.match_w + ox] * uintBitsToFloat(geom[w0]);
            int n_plain = 1 + ((n - 1) / 4) * 4, j = 1;
            for (; j < n_plain; j++) {
                precise float prod = tmp[(base + lo + j) * p.match_w + ox] *
                                     uintBitsToFloat(geom[w0 + j]);
                acc = acc + prod;
            }
            for (; j < n; j++)
                acc = fma(tmp[(base + lo + j) * p.match_w + ox], uintBitsToFloat(geom[w0 + j]),
                          acc);
        }
    }
    float r = roundEven(acc);
    return r > 0.0 ? (r > 255.0 ? 255u : uint(r)) : 0u;
}

void main()
{
    int word = int(gl_GlobalInvocationID.y) * p.row + int(gl_GlobalInvocationID.x);
    if (word * 4 >= p.n_bytes)
        return;
    uint packed = 0u;
    for (int j = 0; j < 4; j++) {
        int idx = word * 4 + j;
        if (idx >= p.n_bytes)
            break;
        int x = idx % p.sized_w, t = idx / p.sized_w;
        int y = t % p.sized_h, plane = t / p.sized_h;
        if (y < p.match_h && x < p.match_w)
            packed |= level(plane, y, x) << uint(8 * j);
    }
    dst[word] = packed;
}
