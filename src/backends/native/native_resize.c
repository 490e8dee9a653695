/* Bilinear resize with align_corners=False, matching PyTorch's
 * upsample_bilinear2d (what nn.Upsample(scale_factor=2, mode="bilinear") in
 * sleap-nn's decoder and F.interpolate in its preprocessing run):
 *   src = max(scale * (dst + 0.5) - 0.5, 0), i0 = floor(src) (at most in - 1),
 *   i1 = i0 + (i0 < in - 1), l1 = src - i0, l0 = 1 - l1,
 * all in float as PyTorch computes them for float tensors. */
#include "backends/native/native_kernels.h"

/* Output columns per batch of precomputed column weights (on the stack, as
 * the kernel gets no scratch). */
#define RESIZE_COLS 256

typedef struct axis_coef {
    int64_t i0, i1;
    float l0, l1;
} axis_coef;

static axis_coef source_index(float scale, int64_t dst, int64_t in_size)
{
    float s = scale * ((float)dst + 0.5f) - 0.5f;
    if (!(s > 0.0f))
        s = 0.0f;
    /* Past the last index (only with a caller's scale > in/out) PyTorch
     * clamps the index and the weight, which yields the last sample; so does
     * clamping the coordinate, and it keeps the conversion in range. */
    if (s > (float)(in_size - 1))
        s = (float)(in_size - 1);
    int64_t i = (int64_t)s;
    float l = s - (float)i;
    axis_coef c = {.i0 = i, .i1 = i + (i < in_size - 1), .l0 = 1.0f - l, .l1 = l};
    return c;
}

typedef struct resize_job {
    const float *src;
    float *dst;
    int64_t h, w, oh, ow;
    float scale_h, scale_w;
    int64_t n_rows;         /* output rows over all planes */
    int64_t rows_per_task;
    bool exact2x;           /* ow == 2w with scale 0.5: fixed 1/4, 3/4 weights */
    native_round_rows_fn round_rows; /* or NULL */
} resize_job;

/* One output row from two source rows blended as a * r0 + b * r1, for an
 * exact x2 width: out[2j] = 1/4 s[j-1] + 3/4 s[j], out[2j+1] = 3/4 s[j] +
 * 1/4 s[j+1], the first and last columns clamped (weights as source_index
 * gives them for scale 0.5). */
static void row_2x(const float *r0, const float *r1, float a, float b, int64_t w, float *d)
{
    if (w == 1) {
        d[0] = d[1] = a * r0[0] + b * r1[0];
        return;
    }
    d[0] = a * r0[0] + b * r1[0];
    for (int64_t j = 1; j < w; j++) {
        float sm = a * r0[j - 1] + b * r1[j - 1];
        float s0 = a * r0[j] + b * r1[j];
        d[2 * j - 1] = 0.75f * sm + 0.25f * s0;
        d[2 * j] = 0.25f * sm + 0.75f * s0;
    }
    d[2 * w - 1] = a * r0[w - 1] + b * r1[w - 1];
}

static void resize_task(void *ctx, int64_t task)
{
    const resize_job *j = ctx;
    int64_t g0 = task * j->rows_per_task;
    int64_t g1 = g0 + j->rows_per_task < j->n_rows ? g0 + j->rows_per_task : j->n_rows;

    if (j->exact2x) {
        for (int64_t gr = g0; gr < g1; gr++) {
            int64_t plane = gr / j->oh, oy = gr % j->oh;
            axis_coef cy = source_index(j->scale_h, oy, j->h);
            const float *s = j->src + plane * j->h * j->w;
            float *d = j->dst + (plane * j->oh + oy) * j->ow;
            row_2x(s + cy.i0 * j->w, s + cy.i1 * j->w, cy.l0, cy.l1, j->w, d);
            if (j->round_rows)
                j->round_rows(d, j->ow);
        }
        return;
    }

    axis_coef cx[RESIZE_COLS];
    for (int64_t x0 = 0; x0 < j->ow; x0 += RESIZE_COLS) {
        int64_t n = j->ow - x0 < RESIZE_COLS ? j->ow - x0 : RESIZE_COLS;
        for (int64_t k = 0; k < n; k++)
            cx[k] = source_index(j->scale_w, x0 + k, j->w);
        for (int64_t gr = g0; gr < g1; gr++) {
            int64_t plane = gr / j->oh, oy = gr % j->oh;
            axis_coef cy = source_index(j->scale_h, oy, j->h);
            const float *s = j->src + plane * j->h * j->w;
            const float *r0 = s + cy.i0 * j->w, *r1 = s + cy.i1 * j->w;
            float *d = j->dst + (plane * j->oh + oy) * j->ow + x0;
            for (int64_t k = 0; k < n; k++) {
                const axis_coef *c = &cx[k];
                d[k] = cy.l0 * (c->l0 * r0[c->i0] + c->l1 * r0[c->i1]) +
                       cy.l1 * (c->l0 * r1[c->i0] + c->l1 * r1[c->i1]);
            }
            if (j->round_rows)
                j->round_rows(d, n);
        }
    }
}

void sleapc__native_resize_bilinear(sleapc_threadpool *tp, const float *src, int64_t b,
                                    int64_t c, int64_t h, int64_t w, float *dst, int64_t oh,
                                    int64_t ow, float scale_h, float scale_w)
{
    sleapc__native_resize_bilinear_rounded(tp, src, b, c, h, w, dst, oh, ow, scale_h, scale_w,
                                           NULL);
}

void sleapc__native_resize_bilinear_rounded(sleapc_threadpool *tp, const float *src, int64_t b,
                                            int64_t c, int64_t h, int64_t w, float *dst, int64_t oh,
                                            int64_t ow, float scale_h, float scale_w,
                                            native_round_rows_fn round_rows)
{
    if (b <= 0 || c <= 0 || h <= 0 || w <= 0 || oh <= 0 || ow <= 0)
        return;
    resize_job j = {
        .src = src,
        .dst = dst,
        .h = h,
        .w = w,
        .oh = oh,
        .ow = ow,
        .scale_h = scale_h,
        .scale_w = scale_w,
        .n_rows = b * c * oh,
        .exact2x = ow == 2 * w && scale_w == 0.5f,
        .round_rows = round_rows,
    };
    int n_threads = sleapc__threadpool_n_threads(tp);
    int64_t n_tasks = n_threads == 1 ? 1 : 4 * (int64_t)n_threads;
    j.rows_per_task = (j.n_rows + n_tasks - 1) / n_tasks;
    n_tasks = (j.n_rows + j.rows_per_task - 1) / j.rows_per_task;
    sleapc__threadpool_run(tp, resize_task, &j, n_tasks);
}
