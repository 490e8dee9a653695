/* The Vulkan backend's windows (backend.h: upload_frames, forward_windows;
 * shaders/window_w.comp, window_h.comp): the network input cut, resized,
 * padded and normalised on the device equals the host's.
 *
 * Resize: uint8 frames scaled by input_scale (0.5, 0.75, 1.6) and padded to
 * the stride, against sleapc__preprocess_run_u8 then
 * sleapc__graph_input_prepare. Crops: top-down boxes (crops.h) around
 * centres inside, on and over the frame's borders, and one far outside,
 * against sleapc__crops_extract_u8, then stage 2's own scale and stride pad
 * on the host. Channels 1 -> 1, 3 -> 3, 1 -> 3, 3 -> 1; in fp16 storage
 * too (within one binary16 rounding, 2^-11 relative). Conversion and size
 * matcher (the windows' c, match and sized): RGB and RGBA to gray (every
 * gray level), gray and RGBA to RGB, frames of odd sizes size-matched down,
 * up and by a pad alone, then scaled, against sleapc__preprocess_run_u8.
 *
 * Tolerance: bit-identical, except where the host's resized float32 sum
 * (sleapc__resize_aa_f32 on the same window) lies within 2^-12 of a half.
 * The device repeats the host's roundings but may not fuse the resize's
 * last (at most 3 per pass) fmaf taps (Vulkan lets fma round twice); an
 * unfused tap moves a sum of values below 256 by at most 2^-15, so the
 * width pass by 3 * 2^-15, which the height pass's convex weights carry
 * over, plus its own 3 * 2^-15: 6 * 2^-15 < 2^-12. Only there may a uint8
 * pixel move by 1 (one level, 1/255, of the normalised input). After a size
 * matcher the scale's resize also reads such pixels: a source pixel one
 * level off moves a convex sum by at most one level, so an output reading
 * one may move by 1 as well. The count is printed (lavapipe: 35 of the
 * about 1,000 such pixels). The channel conversion has no such slack: the
 * luma is exact (precise). No allocation in a warmed-up run, whose result
 * is the first's; the validation layer on (zero messages). Skipped (77)
 * without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "core/channels_u8.h"
#include "core/resize_aa.h"
#include "layers/ops/crops.h"
#include "layers/ops/preprocess.h"
#include "model/graph_input.h"
#include "test_util.h"
#include "vulkan_test_device.h"

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else
#include "backends/vulkan/vulkan_backend.h"

static const struct sleapc_backend_factory *vk_f;
static int64_t n_fragile, n_moved, n_pixels;
/* fp16 storage: node 0 holds each value rounded once to binary16, a
 * relative error of at most 2^-11 (the inputs are 0 or at least 1/255,
 * normal binary16 numbers). */
static float rel_tol;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

/* Whether v lies within 2^-12 of a half (k + 0.5). */
static bool near_half(float v)
{
    return fabsf(v - (floorf(v) + 0.5f)) <= 1.0f / 4096.0f;
}

/* Per pixel of the (c, win_h, win_w) uint8 window resized to (rs_h, rs_w):
 * whether a channel's float32 sum is within 2^-12 of a half (fragile: out_h x out_w). */
static void mark_fragile(const uint8_t *win, int64_t c, int64_t wh, int64_t ww, int64_t rh,
                         int64_t rw, int64_t out_h, int64_t out_w, bool *fragile)
{
    memset(fragile, 0, (size_t)(out_h * out_w));
    if (wh == rh && ww == rw)
        return;
    float *src = xmalloc((size_t)(c * wh * ww) * sizeof *src);
    float *dst = xmalloc((size_t)(c * rh * rw) * sizeof *dst);
    size_t sb = 0;
    CHECK_OK(sleapc__resize_aa_scratch_size(c, wh, ww, rh, rw, &sb));
    void *scratch = xmalloc(sb);
    for (int64_t i = 0; i < c * wh * ww; i++)
        src[i] = (float)win[i];
    CHECK_OK(sleapc__resize_aa_f32(src, c, wh, ww, dst, rh, rw, scratch));
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t y = 0; y < rh; y++)
            for (int64_t x = 0; x < rw; x++)
                if (near_half(dst[(ch * rh + y) * rw + x]))
                    fragile[y * out_w + x] = true;
    free(src);
    free(dst);
    free(scratch);
}

/* Device node 0 against want (n, in_c, h, w), with fragile (n, h, w). */
static void compare(const char *what, const float *got, const float *want, const bool *fragile,
                    int64_t n, int in_c, int64_t h, int64_t w)
{
    int64_t bad = 0, first = -1;
    for (int64_t k = 0; k < n; k++)
        for (int64_t ch = 0; ch < in_c; ch++)
            for (int64_t p = 0; p < h * w; p++) {
                int64_t i = (k * in_c + ch) * h * w + p;
                if (memcmp(got + i, want + i, sizeof(float)) == 0 ||
                    fabsf(got[i] - want[i]) <= rel_tol * fabsf(want[i]))
                    continue;
                bool ok = fragile[k * h * w + p] &&
                          fabsf(got[i] - want[i]) <= (1.0f / 255.0f + 1e-6f) * (1 + 2 * rel_tol);
                n_moved += ok;
                if (!ok && bad++ == 0)
                    first = i;
            }
    for (int64_t i = 0; i < n * h * w; i++)
        n_fragile += fragile[i];
    n_pixels += n * h * w;
    CHECK_MSG(bad == 0, "%s: %lld of %lld values differ (first at %lld: %.9g, host %.9g)", what,
              (long long)bad, (long long)(n * in_c * h * w), (long long)first,
              first >= 0 ? got[first] : 0.0, first >= 0 ? want[first] : 0.0);
}

static uint8_t *random_frames(int64_t n, unsigned seed)
{
    uint8_t *f = xmalloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        /* smooth ramps and noise: sums land on halves now and then */
        f[i] = (uint8_t)((i % 97) * 2 + (seed >> 29));
    }
    return f;
}

/* Run windows on be and compare with want (u8 model input, host) and fragile. */
static void run_and_compare(sleapc_backend *be, const char *what, const sleapc_backend_windows *w,
                            const uint8_t *want_u8, int64_t c, int in_c, const bool *fragile)
{
    int64_t n = w->n, hw = w->out_h * w->out_w;
    float *want = xmalloc((size_t)(n * in_c * hw) * sizeof *want);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {n, c, w->out_h, w->out_w},
                       .data = (void *)want_u8};
    CHECK_OK(sleapc__graph_input_prepare(&x, in_c, want));
    sleapc_tensor_map out = {0};
    CHECK_OK(sleapc__backend_forward_windows(be, w, &out));
    const sleapc_tensor *got = sleapc__tensor_map_get(&out, "Input");
    CHECK_MSG(got && got->shape[0] == n && got->shape[1] == in_c && got->shape[2] == w->out_h &&
                  got->shape[3] == w->out_w,
              "%s: no output of the model input's shape", what);
    if (got && got->shape[0] == n && got->shape[1] == in_c)
        compare(what, got->data, want, fragile, n, in_c, w->out_h, w->out_w);
    /* Again: warmed up, nothing is allocated (frames size-matched by the
     * first run are reused), the same result. */
    float *first = xmalloc((size_t)(n * in_c * hw) * sizeof *first);
    if (got && got->shape[0] == n && got->shape[1] == in_c)
        memcpy(first, got->data, (size_t)(n * in_c * hw) * sizeof *first);
    int64_t before = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_forward_windows(be, w, &out));
    CHECK_MSG(sleapc__alloc_count() == before, "%s: a warmed-up run allocated", what);
    got = sleapc__tensor_map_get(&out, "Input");
    if (got && got->shape[0] == n && got->shape[1] == in_c)
        CHECK_MSG(memcmp(first, got->data, (size_t)(n * in_c * hw) * sizeof *first) == 0,
                  "%s: the second run differs from the first", what);
    free(first);
    sleapc__tensor_map_clear(&out);
    free(want);
}

/* Whole frames scaled by `scale`, padded to `stride`, as stage.c's host path. */
static void check_resize(sleapc_backend *be, int64_t c, int in_c, int64_t h, int64_t w,
                         double scale, int64_t stride)
{
    char what[128];
    snprintf(what, sizeof what, "resize %lld -> %d channels, %lldx%lld by %g, stride %lld",
             (long long)c, in_c, (long long)h, (long long)w, scale, (long long)stride);
    const int64_t F = 2;
    uint8_t *frames = random_frames(F * c * h * w, (unsigned)(h * 7 + c));
    sleapc_tensor ft = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {F, c, h, w},
                        .data = frames};
    CHECK_OK(sleapc__backend_upload_frames(be, &ft));
    sleapc_preprocess_opts o = {.scale = scale, .max_stride = stride};
    sleapc_preprocess_plan p;
    CHECK_OK(sleapc__preprocess_plan_make(&o, c, h, w, &p));
    int64_t frame_out = c * p.out_h * p.out_w;
    uint8_t *want = xmalloc((size_t)(F * frame_out));
    bool *fragile = xmalloc((size_t)(F * p.out_h * p.out_w));
    void *scratch = xmalloc(p.scratch_bytes);
    for (int64_t k = 0; k < F; k++) {
        CHECK_OK(sleapc__preprocess_run_u8(&p, frames + k * c * h * w, want + k * frame_out,
                                           scratch));
        mark_fragile(frames + k * c * h * w, c, h, w, p.scaled_h, p.scaled_w, p.out_h, p.out_w,
                     fragile + k * p.out_h * p.out_w);
    }
    int32_t idx[2] = {0, 1};
    int64_t origin[4] = {0, 0, 0, 0};
    sleapc_backend_windows win = {.n = F, .frame = idx, .origin = origin, .win_h = h, .win_w = w,
                                  .rs_h = p.scaled_h, .rs_w = p.scaled_w, .out_h = p.out_h,
                                  .out_w = p.out_w};
    run_and_compare(be, what, &win, want, c, in_c, fragile);
    free(frames);
    free(want);
    free(fragile);
    free(scratch);
}

/* Top-down crops of crop_size around centres of one frame size, then the
 * centered-instance stage's scale and stride pad, as topdown.c's host path. */
static void check_crops(sleapc_backend *be, int64_t c, int in_c, int64_t h, int64_t w,
                        int64_t crop_size, double scale, int64_t stride)
{
    char what[128];
    snprintf(what, sizeof what, "crops %lld -> %d channels of %lld in %lldx%lld, scale %g",
             (long long)c, in_c, (long long)crop_size, (long long)h, (long long)w, scale);
    const int64_t F = 2;
    uint8_t *frames = random_frames(F * c * h * w, (unsigned)(w * 5 + c));
    sleapc_tensor ft = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {F, c, h, w},
                        .data = frames};
    CHECK_OK(sleapc__backend_upload_frames(be, &ft));
    /* Inside, on each border, past the corners, fractional, far outside. */
    const float centers[] = {30.3f, 20.7f, 0.0f,  10.0f, (float)w - 0.5f, 25.0f, 12.5f, -3.2f,
                             40.0f, (float)h + 2.6f, -8.0f, -9.0f, (float)w + 5.5f,
                             (float)h + 4.4f, 1e9f, -1e9f};
    const int64_t n = (int64_t)(sizeof centers / sizeof centers[0]) / 2;
    int32_t sample[8];
    float *bboxes = xmalloc((size_t)n * 8 * sizeof(float));
    int64_t origin[16];
    for (int64_t k = 0; k < n; k++)
        sample[k] = (int32_t)(k % F);
    CHECK_OK(sleapc__crops_make_bboxes(centers, n, crop_size, crop_size, bboxes));
    int64_t ch = 0, cw = 0;
    CHECK_OK(sleapc__crops_size_from_bbox(bboxes, &ch, &cw));
    for (int64_t k = 0; k < n; k++)
        sleapc__crops_origin(bboxes + 8 * k, ch, cw, &origin[2 * k], &origin[2 * k + 1]);
    uint8_t *crops = xmalloc((size_t)(n * c * ch * cw));
    CHECK_OK(sleapc__crops_extract_u8(frames, F, c, h, w, bboxes, sample, n, ch, cw, crops));
    sleapc_preprocess_opts o = {.scale = scale, .max_stride = stride};
    sleapc_preprocess_plan p;
    CHECK_OK(sleapc__preprocess_plan_make(&o, c, ch, cw, &p));
    int64_t crop_out = c * p.out_h * p.out_w;
    uint8_t *want = xmalloc((size_t)(n * crop_out));
    bool *fragile = xmalloc((size_t)(n * p.out_h * p.out_w));
    void *scratch = xmalloc(p.scratch_bytes);
    for (int64_t k = 0; k < n; k++) {
        CHECK_OK(sleapc__preprocess_run_u8(&p, crops + k * c * ch * cw, want + k * crop_out,
                                           scratch));
        mark_fragile(crops + k * c * ch * cw, c, ch, cw, p.scaled_h, p.scaled_w, p.out_h,
                     p.out_w, fragile + k * p.out_h * p.out_w);
    }
    sleapc_backend_windows win = {.n = n, .frame = sample, .origin = origin, .win_h = ch,
                                  .win_w = cw, .rs_h = p.scaled_h, .rs_w = p.scaled_w,
                                  .out_h = p.out_h, .out_w = p.out_w};
    run_and_compare(be, what, &win, want, c, in_c, fragile);
    free(frames);
    free(bboxes);
    free(crops);
    free(want);
    free(fragile);
    free(scratch);
}

static void check_channels(int64_t c, int in_c)
{
    sleapc_graph g;
    vulkan_test_identity_graph(&g, in_c, "Input");
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(vk_f, &g, &opts, &be));
    if (be) {
        CHECK(sleapc__backend_has_windows(be));
        check_resize(be, c, in_c, 61, 83, 0.5, 8);
        check_resize(be, c, in_c, 45, 38, 0.75, 16);
        check_resize(be, c, in_c, 23, 29, 1.6, 4);
        check_resize(be, c, in_c, 40, 48, 1.0, 16); /* pad only */
        check_crops(be, c, in_c, 50, 70, 24, 1.0, 8);
        check_crops(be, c, in_c, 50, 70, 23, 0.5, 8);
        check_crops(be, c, in_c, 50, 70, 16, 1.25, 4);
    }
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
}

/* The fp16-storage shader (window_h_f16): the same windows, node 0 in
 * binary16. */
static void check_fp16(void)
{
    sleapc_graph g;
    vulkan_test_identity_graph(&g, 3, "Input");
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1, .precision = SLEAPC_PRECISION_FP16};
    if (sleapc__backend_create_from(vk_f, &g, &opts, &be) != SLEAPC_OK) {
        printf("fp16 not checked: %s\n", sleapc_last_error());
        sleapc__graph_clear(&g);
        return;
    }
    rel_tol = 1.0f / 2048.0f;
    check_resize(be, 1, 3, 61, 83, 0.5, 8);
    check_crops(be, 3, 3, 50, 70, 24, 0.75, 8);
    rel_tol = 0;
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
}

/* fragile (out_h, out_w) also where an output of the resize from
 * (in_h, in_w) to (rh, rw) reads a pixel marked in src_fragile (in_h, in_w):
 * a source pixel moved by one level moves such a sum by at most one. */
static void spread_fragile(const bool *src_fragile, int64_t in_h, int64_t in_w, int64_t rh,
                           int64_t rw, int64_t out_w, bool *fragile)
{
    int64_t tw = sleapc__resize_aa_max_taps(in_w, rw), th = sleapc__resize_aa_max_taps(in_h, rh);
    int64_t *bw = xmalloc((size_t)rw * 2 * sizeof *bw), *bh = xmalloc((size_t)rh * 2 * sizeof *bh);
    float *ww = xmalloc((size_t)(rw * tw) * sizeof *ww), *wh = xmalloc((size_t)(rh * th) * sizeof *wh);
    sleapc__resize_aa_axis(in_w, rw, bw, ww);
    sleapc__resize_aa_axis(in_h, rh, bh, wh);
    for (int64_t y = 0; y < rh; y++)
        for (int64_t x = 0; x < rw; x++)
            for (int64_t i = bh[2 * y]; i < bh[2 * y] + bh[2 * y + 1]; i++)
                for (int64_t j = bw[2 * x]; j < bw[2 * x] + bw[2 * x + 1]; j++)
                    fragile[y * out_w + x] |= src_fragile[i * in_w + j];
    free(bw);
    free(bh);
    free(ww);
    free(wh);
}

/* Whole frames of fc channels through preprocess.h's chain with a channel
 * conversion and the size matcher (max_h x max_w) before the scale and the
 * stride pad, as stage_windows.c asks for them, against
 * sleapc__preprocess_run_u8. Fragile: where the size matcher's resized sum
 * lies near a half, and after a scale, every output that reads such a pixel
 * or whose own sum lies near a half. */
static void check_match(int64_t fc, const sleapc_preprocess_opts *o, int in_c, int64_t h,
                        int64_t w)
{
    char what[160];
    snprintf(what, sizeof what, "%lld channels%s%s, %lldx%lld matched to %lldx%lld, by %g",
             (long long)fc, o->ensure_rgb ? " to RGB" : "", o->ensure_grayscale ? " to gray" : "",
             (long long)h, (long long)w, (long long)o->max_height, (long long)o->max_width,
             o->scale);
    sleapc_graph g;
    vulkan_test_identity_graph(&g, in_c, "Input");
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(vk_f, &g, &opts, &be));
    const int64_t F = 2;
    uint8_t *frames = random_frames(F * fc * h * w, (unsigned)(h * 3 + w + fc));
    /* Every gray level once (luma truncates v to v - 1) and the corners. */
    for (int64_t i = 0; i < 256 + 8 && i < h * w; i++)
        for (int64_t ch = 0; ch < fc; ch++)
            frames[ch * h * w + i] = (uint8_t)(i < 256 ? i : ((i >> ch) & 1) * 255);
    sleapc_tensor ft = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {F, fc, h, w},
                        .data = frames};
    sleapc_preprocess_plan p;
    CHECK_OK(sleapc__preprocess_plan_make(o, fc, h, w, &p));
    const int64_t c = p.c, frame_out = c * p.out_h * p.out_w, plane = p.out_h * p.out_w;
    uint8_t *want = xmalloc((size_t)(F * frame_out));
    uint8_t *conv = xmalloc((size_t)(c * h * w));
    uint8_t *match = xmalloc((size_t)(c * p.match_h * p.match_w));
    uint8_t *sized = xmalloc((size_t)(c * p.sized_h * p.sized_w));
    bool *frag_sized = xmalloc((size_t)(p.sized_h * p.sized_w));
    bool *fragile = xmalloc((size_t)(F * plane));
    void *scratch = xmalloc(p.scratch_bytes);
    bool scaled = p.scaled_h != p.sized_h || p.scaled_w != p.sized_w;
    for (int64_t k = 0; k < F; k++) {
        const uint8_t *src = frames + k * fc * h * w;
        CHECK_OK(sleapc__preprocess_run_u8(&p, src, want + k * frame_out, scratch));
        CHECK_OK(sleapc__channels_coerce_u8(src, fc, h, w, o->ensure_rgb, o->ensure_grayscale,
                                              conv));
        bool *fk = fragile + k * plane;
        if (!scaled) {
            mark_fragile(conv, c, h, w, p.match_h, p.match_w, p.out_h, p.out_w, fk);
            continue;
        }
        mark_fragile(conv, c, h, w, p.match_h, p.match_w, p.sized_h, p.sized_w, frag_sized);
        CHECK_OK(sleapc__resize_aa_u8(conv, c, h, w, match, p.match_h, p.match_w, scratch));
        CHECK_OK(sleapc__preprocess_pad_u8(match, c, p.match_h, p.match_w, sized, p.sized_h,
                                           p.sized_w));
        mark_fragile(sized, c, p.sized_h, p.sized_w, p.scaled_h, p.scaled_w, p.out_h, p.out_w,
                     fk);
        spread_fragile(frag_sized, p.sized_h, p.sized_w, p.scaled_h, p.scaled_w, p.out_w, fk);
    }
    int32_t idx[2] = {0, 1};
    int64_t origin[4] = {0, 0, 0, 0};
    sleapc_backend_windows win = {.n = F, .frame = idx, .origin = origin, .win_h = p.sized_h,
                                  .win_w = p.sized_w, .rs_h = p.scaled_h, .rs_w = p.scaled_w,
                                  .out_h = p.out_h, .out_w = p.out_w, .c = c,
                                  .match_h = p.match_h, .match_w = p.match_w,
                                  .sized_h = p.sized_h, .sized_w = p.sized_w};
    int64_t matched0 = 0, converted0 = 0, matched = 0, converted = 0;
    sleapc__vulkan_window_prep_stats(&matched0, &converted0);
    if (be) {
        CHECK_OK(sleapc__backend_upload_frames(be, &ft));
        run_and_compare(be, what, &win, want, c, in_c, fragile);
    }
    sleapc__vulkan_window_prep_stats(&matched, &converted);
    bool resizes = p.match_h != h || p.match_w != w;
    CHECK_MSG(matched - matched0 == (resizes ? 2 : 0) && converted - converted0 == (c != fc ? 2 : 0),
              "%s: %lld runs matched, %lld converted on the device", what,
              (long long)(matched - matched0), (long long)(converted - converted0));
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
    free(frames);
    free(want);
    free(conv);
    free(match);
    free(sized);
    free(frag_sized);
    free(fragile);
    free(scratch);
}

static void check_matches(void)
{
    /* Channels alone (a stride pad): bit for bit, every luma. */
    check_match(3, &(sleapc_preprocess_opts){.ensure_grayscale = true, .scale = 1, .max_stride = 8},
                1, 37, 45);
    check_match(4, &(sleapc_preprocess_opts){.ensure_grayscale = true, .scale = 1, .max_stride = 4},
                3, 21, 27);
    check_match(4, &(sleapc_preprocess_opts){.ensure_rgb = true, .scale = 1, .max_stride = 4}, 3,
                21, 27);
    /* Down, up, pad only; then a scale after it. */
    check_match(3, &(sleapc_preprocess_opts){.max_height = 48, .max_width = 40, .scale = 1,
                                              .max_stride = 8},
                3, 61, 83);
    check_match(1, &(sleapc_preprocess_opts){.ensure_rgb = true, .max_height = 64, .max_width = 56,
                                              .scale = 1, .max_stride = 16},
                3, 37, 29);
    check_match(1, &(sleapc_preprocess_opts){.max_height = 40, .max_width = 64, .scale = 1,
                                              .max_stride = 8},
                1, 33, 64);
    check_match(3, &(sleapc_preprocess_opts){.ensure_grayscale = true, .max_height = 56,
                                              .max_width = 72, .scale = 0.75, .max_stride = 8},
                1, 45, 83);
    check_match(1, &(sleapc_preprocess_opts){.max_height = 50, .max_width = 50, .scale = 1.3,
                                              .max_stride = 4},
                3, 31, 23);
}

/* A window past the upload or before any: refused, nothing run. */
static void check_refusals(void)
{
    sleapc_graph g;
    vulkan_test_identity_graph(&g, 1, "Input");
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(vk_f, &g, &opts, &be));
    int32_t idx[1] = {0};
    int64_t origin[2] = {0, 0};
    sleapc_backend_windows win = {.n = 1, .frame = idx, .origin = origin, .win_h = 8, .win_w = 8,
                                  .rs_h = 8, .rs_w = 8, .out_h = 8, .out_w = 8};
    sleapc_tensor_map out = {0};
    CHECK(sleapc__backend_forward_windows(be, &win, &out) == SLEAPC_ERR_INVALID_ARG);
    uint8_t frame[64] = {0};
    sleapc_tensor ft = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 1, 8, 8}, .data = frame};
    CHECK_OK(sleapc__backend_upload_frames(be, &ft));
    idx[0] = 1;
    CHECK(sleapc__backend_forward_windows(be, &win, &out) == SLEAPC_ERR_INVALID_ARG);
    win.out_h = 4; /* smaller than the resize */
    idx[0] = 0;
    CHECK(sleapc__backend_forward_windows(be, &win, &out) == SLEAPC_ERR_INVALID_ARG);
    win.out_h = 8;
    win.match_h = 6; /* a size matcher of one side, then a pad smaller than it */
    CHECK(sleapc__backend_forward_windows(be, &win, &out) == SLEAPC_ERR_INVALID_ARG);
    win.match_w = 6;
    win.sized_h = 4;
    win.sized_w = 8;
    CHECK(sleapc__backend_forward_windows(be, &win, &out) == SLEAPC_ERR_INVALID_ARG);
    win.match_h = win.match_w = win.sized_h = win.sized_w = 0;
    /* Two channels: no conversion to gray; declined, nothing recorded. */
    uint8_t two[128] = {0};
    ft = (sleapc_tensor){.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 2, 8, 8}, .data = two};
    CHECK_OK(sleapc__backend_upload_frames(be, &ft));
    win.c = 1;
    CHECK(sleapc__backend_forward_windows(be, &win, &out) == SLEAPC_ERR_UNSUPPORTED);
    sleapc__tensor_map_clear(&out);
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
}

int main(void)
{
    vk_f = vulkan_test_factory();
    if (!vk_f)
        return 77;
    check_channels(1, 1);
    check_channels(3, 3);
    check_channels(1, 3);
    check_channels(3, 1);
    check_matches();
    check_refusals();
    check_fp16();
    printf("%lld pixels compared, %lld within 2^-12 of a half before rounding, %lld of them "
           "moved by one level\n",
           (long long)n_pixels, (long long)n_fragile, (long long)n_moved);
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
