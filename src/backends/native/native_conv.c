/* Stride-1 "same" convolution with bias and fused ReLU: weight packing, the
 * staging of zero-padded input rows and the split over threads. The
 * arithmetic is in the microkernels (native_ukernel_tmpl.h).
 *
 * k x k (k > 1): each task owns a range of output rows of one batch item and
 * a group of output-channel blocks. It keeps the kh input rows one output row
 * needs in a per-thread ring of padded rows (zero columns left and right, the
 * right side padded up to whole kernel steps), so the kernel needs no border
 * tests, and each input row is copied once per task. Every channel block
 * reads the whole window, so it should stay in L2 between blocks: a window
 * larger than slice_bytes (decoder convs over a concat: 96..768 channels) is
 * reduced in slices of input channels, each block adding onto its partial
 * sums, which then come from L2 rather than L3.
 * Narrow maps (the deep end of a UNet: 12..48 columns) run in bands of
 * output rows instead: the band's padded rows are staged back to back and
 * the microkernel runs them as one long row (native_conv_row.band_*), so its
 * steps are whole vectors rather than a 24-column row in a 32-column step,
 * and each channel block's weights serve a band rather than one row (at 12
 * columns and 384 channels a row's 5 MB of weights left the kernels waiting
 * on L3).
 * 1 x 1: a GEMM over the flattened pixels, staged in chunks of all input
 * channels. Read in place, the channel planes sit a multiple of 4 KiB apart
 * at SLEAP sizes, so the loads of one step all fall in one L1 set and evict
 * each other; the packed chunk stays in L1 while every block reads it. */
#include <string.h>
#include <unistd.h>

#include "backends/native/native_amx.h"
#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"
#include "backends/native/native_winograd.h"
#include "core/alloc.h"
#include "core/error.h"

/* Sizes beyond these are no model sleapc runs; they keep every product in
 * range. */
#define CONV_MAX_CHANNELS (1 << 20)
#define CONV_MAX_KERNEL 64

/* Window bytes per slice: about a third of the core's L2, leaving room for
 * the partial sums and the streamed weights (Zen 5's 1 MiB L2: 340 KiB ran
 * the 12- and 24-column convs 10-15% faster than 160 KiB). CONV_SLICE_BYTES
 * where the L2 size is unknown. */
#define CONV_SLICE_BYTES (160 * 1024)

static size_t default_slice_bytes(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 >= 256 * 1024 && l2 <= 8 * 1024 * 1024)
        return (size_t)l2 / 3;
#endif
    return CONV_SLICE_BYTES;
}

/* Output positions per band (rows x padded row length): enough that the
 * weights of a block are reused over several hundred outputs. */
#define CONV_BAND_FLOATS 512

struct native_conv {
    const native_ukernels *uk;
    native_conv_row_fn fn_big;   /* kernel for blocks of blocks.size + 1 channels */
    native_conv_row_fn fn_small; /* kernel for blocks of blocks.size channels */
    int c_in, c_out, kh, kw;
    int c_red;                   /* reduction channels: c_in, or its pairs for bf16 */
    bool bf16;                   /* sleapc__native_conv_create_bf16 */
    int pad_t, pad_l;            /* PyTorch "same": the odd one out goes bottom/right */
    native_blocks blocks;
    bool relu;
    bool round_bf16;             /* sleapc__native_conv_set_round_bf16 */
    size_t slice_bytes;          /* see CONV_SLICE_BYTES */
    native_conv_layout layout;
    float *w;                    /* packed, see native_ukernel.h */
    float *bias;                 /* c_out, zeros without a bias */
    native_wino *wino[3];        /* F(2), F(4), F(6), made when first chosen */
    int wino_m;                  /* the runs' method: 0 direct, else F(wino_m) */
    native_amx_conv *amx;        /* sleapc__native_conv_create_amx: runs there */
};

typedef struct conv_job {
    const native_conv *conv;
    native_conv_src src;
    float *dst;
    int64_t h, w;
    char *scratch;
    size_t per_thread;           /* scratch bytes per thread */
    int64_t wp;                  /* padded row length (k x k) */
    int slice;                   /* input channels per pass (k x k) */
    bool bands;                  /* k x k in bands of band_rows rows */
    int64_t band_rows;
    int64_t band_cs;             /* floats per channel of a staged band */
    native_split split;
} conv_job;

static int64_t round_up(int64_t a, int64_t m)
{
    return (a + m - 1) / m * m;
}

/* Packed weights per output channel. */
static size_t chan_floats(const native_conv *cv)
{
    return (size_t)cv->c_red * (size_t)cv->kh * (size_t)cv->kw;
}

/* x rounded to the nearest bfloat16 (ties to even), its 16 bits: as
 * sleapc__bf16_round, which the emulation uses. */
static inline uint32_t bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return (u | ((u & 0x007fffffu) ? 0x00400000u : 0u)) >> 16;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

/* Two values as one bf16 pair in a float's bits: a low, b high (the order
 * VDPBF16PS multiplies them in). */
static inline float bf16_pair(float a, float b)
{
    uint32_t u = bf16_bits(a) | bf16_bits(b) << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static sleapc_status conv_create(const native_ukernels *uk, bool bf16, int c_in, int c_out,
                                 int kh, int kw, const float *weight, const float *bias,
                                 bool relu, native_conv **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create conv: out is required");
    *out = NULL;
    if (!weight)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create conv: weight is required");
    if (c_in < 1 || c_out < 1 || c_in > CONV_MAX_CHANNELS || c_out > CONV_MAX_CHANNELS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create conv: %d -> %d channels: out of range 1..%d", c_in, c_out,
                            CONV_MAX_CHANNELS);
    if (kh < 1 || kw < 1 || kh > CONV_MAX_KERNEL || kw > CONV_MAX_KERNEL)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create conv: %dx%d kernel: out of range 1..%d", kh, kw,
                            CONV_MAX_KERNEL);
    if (!uk)
        uk = sleapc__native_ukernels_best();

    native_conv *cv = sleapc__calloc(1, sizeof *cv);
    if (!cv)
        goto nomem;
    cv->uk = uk;
    cv->bf16 = bf16;
    cv->c_red = bf16 ? (c_in + 1) / 2 : c_in;
    cv->c_in = c_in;
    cv->c_out = c_out;
    cv->kh = kh;
    cv->kw = kw;
    cv->pad_t = (kh - 1) / 2;
    cv->pad_l = (kw - 1) / 2;
    cv->relu = relu;
    cv->slice_bytes = default_slice_bytes();
    cv->layout = NATIVE_CONV_LAYOUT_AUTO;
    sleapc__native_blocks_plan(c_out, uk->cb, &cv->blocks);
    const native_conv_row_fn *table = kh == 1 && kw == 1   ? uk->conv1
                                      : kh == 3 && kw == 3 ? uk->conv3
                                                           : uk->convk;
    cv->fn_big = cv->blocks.size < uk->cb ? table[cv->blocks.size + 1] : NULL;
    cv->fn_small = table[cv->blocks.size];

    size_t taps = (size_t)kh * (size_t)kw;
    size_t n_w = (size_t)c_out * (size_t)cv->c_red * taps;
    if (n_w > SIZE_MAX / sizeof(float))
        goto nomem;
    cv->w = sleapc__aligned_alloc(n_w * sizeof(float));
    cv->bias = sleapc__aligned_alloc((size_t)c_out * sizeof(float));
    if (!cv->w || !cv->bias)
        goto nomem;

    /* OIHW -> per block [c_red][kh][kw][channels in block]; bf16: input
     * channels 2p and 2p + 1 as one pair (a zero after an odd last one). */
    for (int blk = 0; blk < cv->blocks.n; blk++) {
        size_t co0 = (size_t)native_block_start(&cv->blocks, blk);
        size_t n = (size_t)native_block_len(&cv->blocks, blk);
        float *pw = cv->w + co0 * chan_floats(cv);
        for (size_t ci = 0; ci < (size_t)cv->c_red; ci++)
            for (size_t t = 0; t < taps; t++)
                for (size_t k = 0; k < n; k++) {
                    const float *wk = weight + (co0 + k) * (size_t)c_in * taps + t;
                    float odd = bf16 && 2 * ci + 1 < (size_t)c_in ? wk[(2 * ci + 1) * taps] : 0;
                    pw[(ci * taps + t) * n + k] =
                        bf16 ? bf16_pair(wk[2 * ci * taps], odd) : wk[ci * taps];
                }
    }
    for (int co = 0; co < c_out; co++)
        cv->bias[co] = bias ? bias[co] : 0.0f;
    *out = cv;
    return SLEAPC_OK;

nomem:
    sleapc__native_conv_destroy(cv);
    return sleapc__fail(SLEAPC_ERR_NOMEM, "create conv: %dx%d kernel, %d -> %d channels: "
                        "out of memory", kh, kw, c_in, c_out);
}

sleapc_status sleapc__native_conv_create_uk(const native_ukernels *uk, int c_in, int c_out,
                                            int kh, int kw, const float *weight,
                                            const float *bias, bool relu, native_conv **out)
{
    if (uk && uk->bf16_pairs) {
        if (kh != 3 || kw != 3) {
            if (out)
                *out = NULL;
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "create bf16 conv: %dx%d kernel: "
                                "bf16 microkernels are 3x3 only", kh, kw);
        }
        return sleapc__native_conv_create_bf16(c_in, c_out, weight, bias, relu, out);
    }
    return conv_create(uk, false, c_in, c_out, kh, kw, weight, bias, relu, out);
}

sleapc_status sleapc__native_conv_create_bf16(int c_in, int c_out, const float *weight,
                                              const float *bias, bool relu, native_conv **out)
{
    const native_ukernels *uk = sleapc__native_ukernels_bf16();
    if (!uk) {
        if (out)
            *out = NULL;
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "create bf16 conv: this CPU has no AVX512-BF16");
    }
    return conv_create(uk, true, c_in, c_out, 3, 3, weight, bias, relu, out);
}

sleapc_status sleapc__native_conv_create_amx(const native_amx_ops *ops, int c_in, int c_out,
                                             int kh, int kw, const float *weight,
                                             const float *bias, bool relu, native_conv **out)
{
    *out = NULL;
    native_conv *cv = sleapc__calloc(1, sizeof *cv);
    if (!cv)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create amx conv: out of memory");
    /* bf16: no Winograd; the rest of the struct is the direct method's. */
    *cv = (native_conv){.c_in = c_in, .c_out = c_out, .kh = kh, .kw = kw, .bf16 = true,
                        .relu = relu};
    sleapc_status st =
        sleapc__native_amx_conv_create(ops, c_in, c_out, kh, kw, weight, bias, relu, &cv->amx);
    if (st) {
        sleapc__free(cv);
        return st;
    }
    *out = cv;
    return SLEAPC_OK;
}

sleapc_status sleapc__native_conv_create(int c_in, int c_out, int kh, int kw,
                                         const float *weight, const float *bias, bool relu,
                                         native_conv **out)
{
    return sleapc__native_conv_create_uk(NULL, c_in, c_out, kh, kw, weight, bias, relu, out);
}

void sleapc__native_conv_destroy(native_conv *conv)
{
    if (!conv)
        return;
    sleapc__native_amx_conv_destroy(conv->amx);
    sleapc__aligned_free(conv->w);
    sleapc__aligned_free(conv->bias);
    for (int k = 0; k < 3; k++)
        sleapc__native_wino_destroy(conv->wino[k]);
    sleapc__free(conv);
}

void sleapc__native_conv_set_slice_bytes(native_conv *conv, size_t bytes)
{
    if (conv)
        conv->slice_bytes = bytes ? bytes : default_slice_bytes();
}

/* The Winograd weights are made from the packed direct ones (OIHW again),
 * once per tile size. */
sleapc_status sleapc__native_conv_set_winograd(native_conv *conv, int m)
{
    if (m == 0) {
        conv->wino_m = 0;
        return SLEAPC_OK;
    }
    if (!sleapc__native_conv_winograd_ok(conv))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "winograd conv: %dx%d%s: 3x3 float32 only",
                            conv->kh, conv->kw, conv->bf16 ? " bf16" : "");
    if (m != 2 && m != 4 && m != 6)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "winograd conv: F(%d): not 2, 4 or 6", m);
    native_wino **slot = &conv->wino[m / 2 - 1];
    if (!*slot) {
        size_t n_w = (size_t)conv->c_out * chan_floats(conv);
        float *oihw = sleapc__malloc(n_w * sizeof *oihw);
        if (!oihw)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "winograd conv: out of memory");
        for (int blk = 0; blk < conv->blocks.n; blk++) {
            size_t co0 = (size_t)native_block_start(&conv->blocks, blk);
            size_t n = (size_t)native_block_len(&conv->blocks, blk);
            const float *pw = conv->w + co0 * chan_floats(conv);
            for (size_t ci = 0; ci < (size_t)conv->c_in; ci++)
                for (size_t t = 0; t < 9; t++)
                    for (size_t k = 0; k < n; k++)
                        oihw[((co0 + k) * (size_t)conv->c_in + ci) * 9 + t] =
                            pw[(ci * 9 + t) * n + k];
        }
        sleapc_status st = sleapc__native_wino_create(conv->uk, m, conv->c_in, conv->c_out, oihw,
                                                      conv->bias, conv->relu, slot);
        sleapc__free(oihw);
        if (st)
            return st;
        sleapc__native_wino_set_round_bf16(*slot, conv->round_bf16);
    }
    conv->wino_m = m;
    return SLEAPC_OK;
}

void sleapc__native_conv_keep_tile(native_conv *conv)
{
    for (int k = 0; conv && k < 3; k++)
        if (conv->wino[k] && 2 * k + 2 != conv->wino_m) {
            sleapc__native_wino_destroy(conv->wino[k]);
            conv->wino[k] = NULL;
        }
}

void sleapc__native_conv_set_round_bf16(native_conv *conv, bool round_bf16)
{
    conv->round_bf16 = round_bf16;
    for (int k = 0; k < 3; k++)
        sleapc__native_wino_set_round_bf16(conv->wino[k], round_bf16);
}

bool sleapc__native_conv_winograd_ok(const native_conv *conv)
{
    return conv->kh == 3 && conv->kw == 3 && !conv->bf16;
}

int sleapc__native_conv_winograd(const native_conv *conv)
{
    return conv ? conv->wino_m : 0;
}

void sleapc__native_conv_set_layout(native_conv *conv, native_conv_layout layout)
{
    if (conv)
        conv->layout = layout;
}

static bool is_pointwise(const native_conv *cv)
{
    return cv->kh == 1 && cv->kw == 1;
}

/* Bands where a row would leave over an eighth of its vectors' lanes empty
 * (24 columns in 32) or fill less than one kernel step: measured on the
 * centered-instance UNet (Zen 5, one thread), bands ran the 12- and 24-column
 * convs 12-25% faster and the 48- and 96-column ones (whole vectors in rows)
 * 0-5% slower. */
static bool use_bands(const native_conv *cv, int64_t w)
{
    if (is_pointwise(cv) || cv->layout == NATIVE_CONV_LAYOUT_ROWS)
        return false;
    if (cv->layout == NATIVE_CONV_LAYOUT_BANDS)
        return true;
    int64_t vw = cv->uk->strip / 2; /* floats per vector */
    return w < cv->uk->strip || 8 * round_up(w, vw) > 9 * w;
}

/* Output rows per band of an h x w map, and the floats a channel of the
 * staged band takes: its rows of w + kw - 1 floats and one kernel step of
 * zeros after them (a run's last step reads up to a vector past its rows),
 * rounded to 64 bytes and kept off multiples of 4 KiB (see padded_row_len). */
static int64_t band_rows(const native_conv *cv, int64_t h, int64_t w)
{
    if (h < 1)
        return 1;
    int64_t fs = w + cv->kw - 1;
    int64_t most = (CONV_BAND_FLOATS + fs - 1) / fs;
    int64_t n_bands = (h + most - 1) / most;
    return (h + n_bands - 1) / n_bands; /* even bands: 24 rows as 12 + 12, not 20 + 4 */
}

static int64_t band_chan_floats(const native_conv *cv, int64_t h, int64_t w)
{
    int64_t fs = w + cv->kw - 1;
    int64_t n = round_up((band_rows(cv, h, w) + cv->kh - 1) * fs + cv->uk->strip, 16);
    return n % 1024 == 0 ? n + 16 : n;
}

/* Pixels per staged 1 x 1 chunk: about 16 KiB over all input channels. */
static int64_t pointwise_chunk(const native_conv *cv)
{
    int64_t strip = cv->uk->strip;
    int64_t n = 4096 / cv->c_in;
    return n < strip ? strip : round_up(n, strip);
}

/* Floats per padded row: whole kernel steps plus the kernel's reach, rounded
 * to 64 bytes, and one cache line more when the channel stride would be a
 * multiple of 4 KiB (all channels in the same L1 sets). */
static int64_t padded_row_len(const native_conv *cv, int64_t w)
{
    int64_t wp = round_up(round_up(w, cv->uk->strip) + cv->kw - 1, 16);
    return cv->kh * wp % 1024 == 0 ? wp + 16 : wp;
}

/* Per-thread scratch bytes; 0 when w is beyond NATIVE_MAX_WIDTH or the size
 * does not fit a size_t. At most 2^20 channels x 64 rows x (2^24 + 256)
 * floats: no overflow in 64 bits. */
static size_t per_thread_bytes(const native_conv *cv, int64_t h, int64_t w)
{
    if (w < 0 || w > NATIVE_MAX_WIDTH)
        return 0;
    uint64_t per_chan = is_pointwise(cv)  ? (uint64_t)pointwise_chunk(cv)
                        : use_bands(cv, w) ? (uint64_t)band_chan_floats(cv, h, w)
                                          : (uint64_t)cv->kh * (uint64_t)padded_row_len(cv, w);
    uint64_t bytes = ((uint64_t)cv->c_red * per_chan * sizeof(float) + 63) / 64 * 64;
#if SIZE_MAX < UINT64_MAX
    if (bytes > SIZE_MAX)
        return 0;
#endif
    return (size_t)bytes;
}

size_t sleapc__native_conv_scratch_size(const native_conv *conv, int64_t h, int64_t w,
                                        int n_threads)
{
    if (conv->amx)
        return sleapc__native_amx_conv_scratch_size(conv->amx, n_threads);
    if (conv->wino_m)
        return sleapc__native_wino_scratch_size(conv->wino[conv->wino_m / 2 - 1], h, w,
                                                n_threads);
    size_t per = per_thread_bytes(conv, h, w);
    size_t n = n_threads < 1 ? 1 : (size_t)n_threads;
    if (per == 0 || per > SIZE_MAX / n)
        return SIZE_MAX; /* no allocation can satisfy it */
    return per * n;
}

/* Input channels per pass over a window of per_chan floats a channel: all,
 * or even slices that each fit slice_bytes. */
static int slice_channels(const native_conv *cv, int64_t chan_floats)
{
    size_t per_chan = (size_t)chan_floats * sizeof(float);
    size_t fit = cv->slice_bytes / per_chan;
    if (fit >= (size_t)cv->c_red)
        return cv->c_red;
    int max = fit < 1 ? 1 : (int)fit;
    int n = (cv->c_red + max - 1) / max;
    return (cv->c_red + n - 1) / n;
}

/* Channel ci's plane of batch item bi, from the part that holds it. */
static const float *src_plane(const conv_job *j, int64_t bi, int ci)
{
    int64_t plane = j->h * j->w;
    int k = 0;
    while (k + 1 < j->src.n && ci >= j->src.c[k]) {
        ci -= j->src.c[k];
        k++;
    }
    return j->src.data[k] + (bi * j->src.c[k] + ci) * plane;
}

/* Input row iy of reduction channel c (bf16: the pair of input channels 2c
 * and 2c + 1) of batch item bi -> d, w floats. */
static void copy_row(const native_conv *cv, const conv_job *j, int64_t bi, int c, int64_t iy,
                     float *d)
{
    int64_t w = j->w;
    if (!cv->bf16) {
        memcpy(d, src_plane(j, bi, c) + iy * w, (size_t)w * sizeof(float));
        return;
    }
    const float *a = src_plane(j, bi, 2 * c) + iy * w;
    const float *b = 2 * c + 1 < cv->c_in ? src_plane(j, bi, 2 * c + 1) + iy * w : NULL;
    cv->uk->pack_pairs(a, b, w, d);
}

/* Padded row `slot` of the ring <- input row iy of batch item bi (zeros
 * outside the image). */
static void stage_row(const native_conv *cv, const conv_job *j, float *ring, int slot,
                      int64_t bi, int64_t iy)
{
    int64_t w = j->w, wp = j->wp;
    int64_t cs = (int64_t)cv->kh * wp;
    for (int ci = 0; ci < cv->c_red; ci++) {
        float *d = ring + ci * cs + slot * wp;
        if (iy < 0 || iy >= j->h) {
            memset(d, 0, (size_t)wp * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)cv->pad_l * sizeof(float));
        copy_row(cv, j, bi, ci, iy, d + cv->pad_l);
        memset(d + cv->pad_l + w, 0, (size_t)(wp - cv->pad_l - w) * sizeof(float));
    }
}

/* Splits a task index; see native_split. */
static void task_coords(const native_split *s, int64_t task, int64_t *bi, int64_t *unit_task,
                        int *group)
{
    *group = (int)(task % s->n_groups);
    int64_t rest = task / s->n_groups;
    *unit_task = rest % s->n_unit_tasks;
    *bi = rest / s->n_unit_tasks;
}

/* What task `task` covers: batch item bi, outputs [u0, u1) in units of
 * `unit` (rows, bands of rows, pixel strips), clipped to `limit`, and
 * channel blocks [blk0, blk1). */
typedef struct task_span {
    int64_t bi, u0, u1;
    int blk0, blk1;
} task_span;

static task_span task_span_of(const conv_job *j, int64_t task, int64_t unit, int64_t limit)
{
    task_span t;
    int64_t ut;
    int g;
    task_coords(&j->split, task, &t.bi, &ut, &g);
    t.u0 = ut * j->split.units_per_task * unit;
    t.u1 = t.u0 + j->split.units_per_task * unit;
    if (t.u1 > limit)
        t.u1 = limit;
    int n_blocks = j->conv->blocks.n;
    t.blk0 = g * j->split.blocks_per_group;
    t.blk1 = t.blk0 + j->split.blocks_per_group < n_blocks ? t.blk0 + j->split.blocks_per_group
                                                            : n_blocks;
    return t;
}

/* Input channels [ci0, ci0 + r->c_in) of blocks [blk0, blk1). */
static void run_blocks(const native_conv *cv, native_conv_row *r, float *dst, int blk0, int blk1,
                       int64_t plane, int ci0)
{
    size_t taps = (size_t)cv->kh * (size_t)cv->kw;
    for (int blk = blk0; blk < blk1; blk++) {
        int co0 = native_block_start(&cv->blocks, blk);
        size_t len = (size_t)native_block_len(&cv->blocks, blk);
        r->w = cv->w + (size_t)co0 * chan_floats(cv) + (size_t)ci0 * taps * len;
        r->bias = cv->bias + co0;
        r->dst = dst + co0 * plane;
        (blk < cv->blocks.n_big ? cv->fn_big : cv->fn_small)(r);
    }
}

static void conv_task_rows(void *ctx, int64_t task, int thread)
{
    const conv_job *j = ctx;
    const native_conv *cv = j->conv;
    task_span t = task_span_of(j, task, 1, j->h);
    int64_t bi = t.bi, y0 = t.u0, y1 = t.u1;
    int blk0 = t.blk0, blk1 = t.blk1;
    int64_t plane = j->h * j->w;
    float *out = j->dst + bi * cv->c_out * plane;
    float *ring = (float *)(j->scratch + (size_t)thread * j->per_thread);

    /* Padded row p (input row p - pad_t) lives in ring slot p % kh; output
     * row y reads padded rows y .. y + kh - 1. */
    for (int64_t p = y0; p < y0 + cv->kh - 1; p++)
        stage_row(cv, j, ring, (int)(p % cv->kh), bi, p - cv->pad_t);

    native_conv_row r = {
        .src = ring,
        .src_cs = (int64_t)cv->kh * j->wp,
        .src_rs = j->wp,
        .kh = cv->kh,
        .kw = cv->kw,
        .c_in = cv->c_red,
        .dst_cs = plane,
        .n_px = j->w,
        .relu = cv->relu,
    };
    for (int64_t y = y0; y < y1; y++) {
        int64_t p = y + cv->kh - 1;
        stage_row(cv, j, ring, (int)(p % cv->kh), bi, p - cv->pad_t);
        r.ring0 = (int)(y % cv->kh);
        for (int ci0 = 0; ci0 < cv->c_red; ci0 += j->slice) {
            int n = cv->c_red - ci0 < j->slice ? cv->c_red - ci0 : j->slice;
            r.src = ring + ci0 * r.src_cs;
            r.c_in = n;
            r.accumulate = ci0 > 0;
            r.relu = cv->relu && ci0 + n == cv->c_red; /* only on the full sums */
            r.round_bf16 = cv->round_bf16 && ci0 + n == cv->c_red;
            run_blocks(cv, &r, out + y * j->w, blk0, blk1, plane, ci0);
        }
    }
}

/* Channel planes of the band of output rows [y0, y0 + rows), staged back to
 * back: padded row p (input row y0 + p - pad_t) at p * (w + kw - 1). */
static void stage_band(const native_conv *cv, const conv_job *j, float *win, int64_t bi,
                       int64_t y0, int64_t rows)
{
    int64_t w = j->w, fs = w + cv->kw - 1;
    int64_t n_rows = rows + cv->kh - 1;
    for (int ci = 0; ci < cv->c_red; ci++) {
        float *d = win + ci * j->band_cs;
        for (int64_t p = 0; p < n_rows; p++, d += fs) {
            int64_t iy = y0 + p - cv->pad_t;
            if (iy < 0 || iy >= j->h) {
                memset(d, 0, (size_t)fs * sizeof(float));
                continue;
            }
            memset(d, 0, (size_t)cv->pad_l * sizeof(float));
            copy_row(cv, j, bi, ci, iy, d + cv->pad_l);
            memset(d + cv->pad_l + w, 0, (size_t)(fs - cv->pad_l - w) * sizeof(float));
        }
        memset(d, 0, (size_t)(j->band_cs - n_rows * fs) * sizeof(float));
    }
}

static void conv_task_bands(void *ctx, int64_t task, int thread)
{
    const conv_job *j = ctx;
    const native_conv *cv = j->conv;
    /* Units are whole bands: a task of fewer rows would reuse each block's
     * weights over fewer outputs, so threads split the channel blocks. */
    task_span t = task_span_of(j, task, j->band_rows, j->h);
    int64_t bi = t.bi, y0 = t.u0, y1 = t.u1;
    int blk0 = t.blk0, blk1 = t.blk1;
    int64_t plane = j->h * j->w;
    int64_t fs = j->w + cv->kw - 1;
    float *out = j->dst + bi * cv->c_out * plane;
    float *win = (float *)(j->scratch + (size_t)thread * j->per_thread);

    native_conv_row r = {
        .src_cs = j->band_cs,
        .src_rs = fs,
        .kh = cv->kh,
        .kw = cv->kw,
        .dst_cs = plane,
        .band_stride = fs,
        .band_w = j->w,
    };
    for (int64_t y = y0; y < y1; y += j->band_rows) {
        int64_t rows = y1 - y < j->band_rows ? y1 - y : j->band_rows;
        stage_band(cv, j, win, bi, y, rows);
        r.n_px = (rows - 1) * fs + j->w;
        for (int ci0 = 0; ci0 < cv->c_red; ci0 += j->slice) {
            int n = cv->c_red - ci0 < j->slice ? cv->c_red - ci0 : j->slice;
            r.src = win + ci0 * r.src_cs;
            r.c_in = n;
            r.accumulate = ci0 > 0;
            r.relu = cv->relu && ci0 + n == cv->c_red; /* only on the full sums */
            r.round_bf16 = cv->round_bf16 && ci0 + n == cv->c_red;
            run_blocks(cv, &r, out + y * j->w, blk0, blk1, plane, ci0);
        }
    }
}

static void conv_task_pointwise(void *ctx, int64_t task, int thread)
{
    const conv_job *j = ctx;
    const native_conv *cv = j->conv;
    int64_t strip = cv->uk->strip;
    int64_t plane = j->h * j->w;
    task_span t = task_span_of(j, task, strip, plane);
    int64_t bi = t.bi, px0 = t.u0, px1 = t.u1;
    int blk0 = t.blk0, blk1 = t.blk1;
    float *out = j->dst + bi * cv->c_out * plane;
    float *stage = (float *)(j->scratch + (size_t)thread * j->per_thread);
    int64_t chunk = pointwise_chunk(cv);

    native_conv_row r = {
        .src = stage,
        .src_cs = chunk,
        .kh = 1,
        .kw = 1,
        .c_in = cv->c_in,
        .dst_cs = plane,
        .relu = cv->relu,
        .round_bf16 = cv->round_bf16,
    };
    for (int64_t px = px0; px < px1; px += chunk) {
        int64_t n = px1 - px < chunk ? px1 - px : chunk;
        /* The last step of the image reads whole vectors: zeros after it. */
        int64_t n_pad = round_up(n, strip) - n;
        for (int ci = 0; ci < cv->c_in; ci++) {
            memcpy(stage + ci * chunk, src_plane(j, bi, ci) + px, (size_t)n * sizeof(float));
            memset(stage + ci * chunk + n, 0, (size_t)n_pad * sizeof(float));
        }
        r.n_px = n;
        run_blocks(cv, &r, out + px, blk0, blk1, plane, 0);
    }
}

void sleapc__native_conv_run(const native_conv *conv, sleapc_threadpool *tp, const float *src,
                             int64_t b, int64_t h, int64_t w, float *dst, void *scratch)
{
    native_conv_src one = {.n = 1, .data = {src}, .c = {conv->c_in}};
    sleapc__native_conv_run_parts(conv, tp, &one, b, h, w, dst, scratch);
}

void sleapc__native_conv_run_parts(const native_conv *conv, sleapc_threadpool *tp,
                                   const native_conv_src *src, int64_t b, int64_t h, int64_t w,
                                   float *dst, void *scratch)
{
    if (b <= 0 || h <= 0 || w <= 0)
        return;
    if (conv->amx) {
        sleapc__native_amx_conv_run(conv->amx, tp, src, b, h, w, dst, scratch);
        return;
    }
    if (conv->wino_m) {
        sleapc__native_wino_run_parts(conv->wino[conv->wino_m / 2 - 1], tp, src, b, h, w, dst,
                                      scratch);
        return;
    }
    int n_threads = sleapc__threadpool_n_threads(tp);
    conv_job j = {
        .conv = conv,
        .src = *src,
        .dst = dst,
        .h = h,
        .w = w,
        .scratch = scratch,
        .per_thread = per_thread_bytes(conv, h, w),
        .wp = padded_row_len(conv, w),
        .bands = use_bands(conv, w),
    };
    if (j.bands) {
        j.band_rows = band_rows(conv, h, w);
        j.band_cs = band_chan_floats(conv, h, w);
        j.slice = slice_channels(conv, j.band_cs);
    } else {
        j.slice = slice_channels(conv, (int64_t)conv->kh * j.wp);
    }
    if (is_pointwise(conv)) {
        int64_t n_strips = (h * w + conv->uk->strip - 1) / conv->uk->strip;
        sleapc__native_split_plan(b, n_strips, conv->blocks.n, n_threads, NATIVE_TASKS_PER_THREAD,
                                  &j.split);
        sleapc__threadpool_run_indexed(tp, conv_task_pointwise, &j, j.split.n_tasks);
    } else {
        /* Bands: two tasks a thread, as each re-stages a whole band (12- and
         * 24-column convs 4% faster than with four). */
        int64_t n_units = j.bands ? (h + j.band_rows - 1) / j.band_rows : h;
        sleapc__native_split_plan(b, n_units, conv->blocks.n, n_threads,
                                  j.bands ? 2 : NATIVE_TASKS_PER_THREAD, &j.split);
        sleapc__threadpool_run_indexed(tp, j.bands ? conv_task_bands : conv_task_rows, &j,
                                       j.split.n_tasks);
    }
}
