/* 3 x 3 stride-2 transposed convolution (ConvTranspose2d kernel 3, stride 2,
 * padding 1, output_padding 1, as sleap-nn's decoder runs it when
 * up_interpolate is false; or Keras Conv2DTranspose "same"): packing, input
 * staging and the split over threads. The arithmetic is in the microkernels.
 *
 * Output-centred: output row y is full row p = y + 1 (PyTorch) or p = y
 * (Keras); full row p receives input row i through kernel row a when
 * p = 2i + a, so an odd p has one source row (a = 1) and an even p two
 * (a = 0 and a = 2). Each task owns whole output rows, so no two threads
 * write the same output and no atomics are needed. */
#include <string.h>

#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"
#include "core/alloc.h"
#include "core/error.h"

#define CONVT_MAX_CHANNELS (1 << 20)

struct native_convt {
    const native_ukernels *uk;
    native_convt_row_fn fn_big;   /* blocks of blocks.size + 1 channels */
    native_convt_row_fn fn_small; /* blocks of blocks.size channels */
    int c_in, c_out;
    native_blocks blocks;
    bool relu;
    bool keras;
    float *w;     /* per block [c_in][3][3][channels in block] */
    float *bias;  /* c_out, zeros without a bias */
};

typedef struct convt_job {
    const native_convt *convt;
    const float *src;
    float *dst;
    int64_t h, w;
    char *scratch;
    size_t per_thread;
    int64_t wt;   /* staged row length */
    native_split split;
} convt_job;

static int64_t round_up(int64_t a, int64_t m)
{
    return (a + m - 1) / m * m;
}

sleapc_status sleapc__native_convt_create_uk(const native_ukernels *uk, int c_in, int c_out,
                                             const float *weight, const float *bias, bool relu,
                                             bool keras_placement, native_convt **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create transposed conv: out is required");
    *out = NULL;
    if (!weight)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create transposed conv: weight is required");
    if (c_in < 1 || c_out < 1 || c_in > CONVT_MAX_CHANNELS || c_out > CONVT_MAX_CHANNELS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create transposed conv: %d -> %d channels: out of range 1..%d",
                            c_in, c_out, CONVT_MAX_CHANNELS);
    if (!uk)
        uk = sleapc__native_ukernels_best();

    native_convt *ct = sleapc__calloc(1, sizeof *ct);
    if (!ct)
        goto nomem;
    ct->uk = uk;
    ct->c_in = c_in;
    ct->c_out = c_out;
    ct->relu = relu;
    ct->keras = keras_placement;
    sleapc__native_blocks_plan(c_out, uk->cb, &ct->blocks);
    ct->fn_big = ct->blocks.size < uk->cb ? uk->convt[ct->blocks.size + 1] : NULL;
    ct->fn_small = uk->convt[ct->blocks.size];

    ct->w = sleapc__aligned_alloc((size_t)c_out * (size_t)c_in * 9 * sizeof(float));
    ct->bias = sleapc__aligned_alloc((size_t)c_out * sizeof(float));
    if (!ct->w || !ct->bias)
        goto nomem;

    /* (c_in, c_out, 3, 3) -> per block [c_in][3][3][channels in block]. */
    for (int blk = 0; blk < ct->blocks.n; blk++) {
        size_t co0 = (size_t)native_block_start(&ct->blocks, blk);
        size_t n = (size_t)native_block_len(&ct->blocks, blk);
        float *pw = ct->w + co0 * (size_t)c_in * 9;
        for (size_t ci = 0; ci < (size_t)c_in; ci++)
            for (size_t t = 0; t < 9; t++)
                for (size_t k = 0; k < n; k++)
                    pw[(ci * 9 + t) * n + k] = weight[(ci * (size_t)c_out + co0 + k) * 9 + t];
    }
    for (int co = 0; co < c_out; co++)
        ct->bias[co] = bias ? bias[co] : 0.0f;
    *out = ct;
    return SLEAPC_OK;

nomem:
    sleapc__native_convt_destroy(ct);
    return sleapc__fail(SLEAPC_ERR_NOMEM,
                        "create transposed conv: %d -> %d channels: out of memory", c_in, c_out);
}

sleapc_status sleapc__native_convt_create(int c_in, int c_out, const float *weight,
                                          const float *bias, bool relu, bool keras_placement,
                                          native_convt **out)
{
    return sleapc__native_convt_create_uk(NULL, c_in, c_out, weight, bias, relu,
                                          keras_placement, out);
}

void sleapc__native_convt_destroy(native_convt *convt)
{
    if (!convt)
        return;
    sleapc__aligned_free(convt->w);
    sleapc__aligned_free(convt->bias);
    sleapc__free(convt);
}

/* Staged row: input column -1 (zero), the row, zeros to whole kernel steps
 * plus the column after; rounded to 64 bytes, and one cache line more when
 * the channel stride would be a multiple of 4 KiB (same L1 sets). */
static int64_t staged_row_len(const native_convt *ct, int64_t w)
{
    int64_t wt = round_up(round_up(w, ct->uk->strip_t) + 2, 16);
    return 2 * wt % 1024 == 0 ? wt + 16 : wt;
}

/* Per-thread scratch bytes; 0 when w is beyond NATIVE_MAX_WIDTH or the size
 * does not fit a size_t. At most 2^20 channels x 64 rows x (2^24 + 256)
 * floats: no overflow in 64 bits. */
static size_t per_thread_bytes(const native_convt *ct, int64_t w)
{
    if (w < 0 || w > NATIVE_MAX_WIDTH)
        return 0;
    uint64_t per_chan = 2 * (uint64_t)staged_row_len(ct, w);
    uint64_t bytes = ((uint64_t)ct->c_in * per_chan * sizeof(float) + 63) / 64 * 64;
#if SIZE_MAX < UINT64_MAX
    if (bytes > SIZE_MAX)
        return 0;
#endif
    return (size_t)bytes;
}

size_t sleapc__native_convt_scratch_size(const native_convt *convt, int64_t h, int64_t w,
                                         int n_threads)
{
    size_t per = per_thread_bytes(convt, w);
    size_t n = n_threads < 1 ? 1 : (size_t)n_threads;
    if (per == 0 || per > SIZE_MAX / n)
        return SIZE_MAX;
    return per * n;
}

static void stage_row(const convt_job *j, float *dst, const float *in, int64_t iy)
{
    const native_convt *ct = j->convt;
    int64_t w = j->w;
    for (int ci = 0; ci < ct->c_in; ci++) {
        float *d = dst + ci * 2 * j->wt;
        d[0] = 0.0f;
        memcpy(d + 1, in + (ci * j->h + iy) * w, (size_t)w * sizeof(float));
        memset(d + 1 + w, 0, (size_t)(j->wt - 1 - w) * sizeof(float));
    }
}

static void convt_task(void *ctx, int64_t task, int thread)
{
    const convt_job *j = ctx;
    const native_convt *ct = j->convt;
    const native_split *s = &j->split;
    int g = (int)(task % s->n_groups);
    int64_t rt = task / s->n_groups % s->n_unit_tasks;
    int64_t bi = task / s->n_groups / s->n_unit_tasks;
    int64_t oh = 2 * j->h, ow = 2 * j->w;
    int64_t y0 = rt * s->units_per_task;
    int64_t y1 = y0 + s->units_per_task < oh ? y0 + s->units_per_task : oh;
    int blk0 = g * s->blocks_per_group;
    int blk1 = blk0 + s->blocks_per_group < ct->blocks.n ? blk0 + s->blocks_per_group
                                                         : ct->blocks.n;
    const float *in = j->src + bi * ct->c_in * j->h * j->w;
    float *out = j->dst + bi * ct->c_out * oh * ow;
    float *stage = (float *)(j->scratch + (size_t)thread * j->per_thread);

    native_convt_row r = {
        .src = stage,
        .src_cs = 2 * j->wt,
        .src_ts = j->wt,
        .keras = ct->keras,
        .c_in = ct->c_in,
        .dst_cs = oh * ow,
        .w_in = j->w,
        .relu = ct->relu,
    };
    for (int64_t y = y0; y < y1; y++) {
        int64_t p = ct->keras ? y : y + 1;
        r.n_taps = 0;
        for (int a = 0; a < 3; a++) {
            if ((p - a) % 2 != 0)
                continue;
            int64_t iy = (p - a) / 2;
            if (iy < 0 || iy >= j->h)
                continue;
            stage_row(j, stage + r.n_taps * j->wt, in, iy);
            r.tap_a[r.n_taps++] = a;
        }
        for (int blk = blk0; blk < blk1; blk++) {
            int co0 = native_block_start(&ct->blocks, blk);
            r.w = ct->w + (size_t)co0 * (size_t)ct->c_in * 9;
            r.bias = ct->bias + co0;
            r.dst = out + (co0 * oh + y) * ow;
            (blk < ct->blocks.n_big ? ct->fn_big : ct->fn_small)(&r);
        }
    }
}

void sleapc__native_convt_run(const native_convt *convt, sleapc_threadpool *tp,
                              const float *src, int64_t b, int64_t h, int64_t w, float *dst,
                              void *scratch)
{
    if (b <= 0 || h <= 0 || w <= 0)
        return;
    convt_job j = {
        .convt = convt,
        .src = src,
        .dst = dst,
        .h = h,
        .w = w,
        .scratch = scratch,
        .per_thread = per_thread_bytes(convt, w),
        .wt = staged_row_len(convt, w),
    };
    sleapc__native_split_plan(b, 2 * h, convt->blocks.n, sleapc__threadpool_n_threads(tp),
                              NATIVE_TASKS_PER_THREAD, &j.split);
    sleapc__threadpool_run_indexed(tp, convt_task, &j, j.split.n_tasks);
}
