/* The elementwise and per-pixel ops of the ConvNeXt and SwinT encoders:
 * patch extraction (strided stems, downsampling, patch merging), depthwise
 * convolution, LayerNorm over channels, layer scale + residual, GELU. All on
 * NCHW float32; the heavy Linear layers run as 1x1 convs (native_conv.c). */
#include <math.h>

#include "backends/native/native_kernels.h"

/* Plane-parallel loops: one task per run of planes or rows. */
static int64_t task_count(sleapc_threadpool *tp, int64_t items)
{
    int n_threads = sleapc__threadpool_n_threads(tp);
    int64_t n = n_threads == 1 ? 1 : 4 * (int64_t)n_threads;
    return n < items ? n : (items > 0 ? items : 1);
}

static void task_range(int64_t task, int64_t n_tasks, int64_t items, int64_t *a, int64_t *b)
{
    *a = items * task / n_tasks;
    *b = items * (task + 1) / n_tasks;
}

/* ---- patches ---- */

typedef struct patches_job {
    const float *src;
    float *dst;
    int64_t c, h, w, oh, ow, planes;
    int k, stride, pad;
    bool merge;
    int64_t n_tasks;
} patches_job;

static void patches_task(void *ctx, int64_t task)
{
    const patches_job *j = ctx;
    int64_t p0, p1;
    task_range(task, j->n_tasks, j->planes, &p0, &p1);
    int64_t kk = (int64_t)j->k * j->k, out_c = j->c * kk;
    for (int64_t p = p0; p < p1; p++) {
        int64_t bi = p / out_c, oc = p % out_c, ci, ky, kx;
        if (j->merge) {
            int64_t idx = oc / j->c;  /* x0..x3: (0,0), (1,0), (0,1), (1,1) as (row, col) */
            ci = oc % j->c;
            ky = idx % 2;
            kx = idx / 2;
        } else {
            ci = oc / kk;
            ky = (oc % kk) / j->k;
            kx = oc % j->k;
        }
        const float *s = j->src + (bi * j->c + ci) * j->h * j->w;
        float *d = j->dst + p * j->oh * j->ow;
        for (int64_t oy = 0; oy < j->oh; oy++) {
            int64_t iy = oy * j->stride - j->pad + ky;
            float *dr = d + oy * j->ow;
            if (iy < 0 || iy >= j->h) {
                for (int64_t ox = 0; ox < j->ow; ox++)
                    dr[ox] = 0.0f;
                continue;
            }
            const float *sr = s + iy * j->w;
            for (int64_t ox = 0; ox < j->ow; ox++) {
                int64_t ix = ox * j->stride - j->pad + kx;
                dr[ox] = ix >= 0 && ix < j->w ? sr[ix] : 0.0f;
            }
        }
    }
}

void sleapc__native_patches(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                            int64_t h, int64_t w, int k, int stride, int pad, bool merge,
                            float *dst, int64_t oh, int64_t ow)
{
    patches_job j = {.src = src, .dst = dst, .c = c, .h = h, .w = w, .oh = oh, .ow = ow,
                     .planes = b * c * k * k, .k = k, .stride = stride, .pad = pad,
                     .merge = merge};
    j.n_tasks = task_count(tp, j.planes);
    sleapc__threadpool_run(tp, patches_task, &j, j.n_tasks);
}

/* ---- depthwise convolution ---- */

typedef struct dw_job {
    const float *src, *weight, *bias;
    float *dst;
    int64_t c, h, w, planes, n_tasks;
    int k;
} dw_job;

static void dw_task(void *ctx, int64_t task)
{
    const dw_job *j = ctx;
    int64_t p0, p1;
    task_range(task, j->n_tasks, j->planes, &p0, &p1);
    int k = j->k, pad = (k - 1) / 2;
    for (int64_t p = p0; p < p1; p++) {
        int64_t ci = p % j->c;
        const float *s = j->src + p * j->h * j->w;
        const float *wk = j->weight + ci * k * k;
        float bv = j->bias ? j->bias[ci] : 0.0f;
        float *d = j->dst + p * j->h * j->w;
        for (int64_t y = 0; y < j->h; y++) {
            float *dr = d + y * j->w;
            for (int64_t x = 0; x < j->w; x++)
                dr[x] = bv;
            for (int ky = 0; ky < k; ky++) {
                int64_t iy = y + ky - pad;
                if (iy < 0 || iy >= j->h)
                    continue;
                const float *sr = s + iy * j->w;
                for (int kx = 0; kx < k; kx++) {
                    float wv = wk[ky * k + kx];
                    int64_t off = kx - pad;
                    int64_t x0 = off < 0 ? -off : 0;
                    int64_t x1 = j->w - (off > 0 ? off : 0);
                    for (int64_t x = x0; x < x1; x++)
                        dr[x] += wv * sr[x + off];
                }
            }
        }
    }
}

void sleapc__native_dwconv(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                           int64_t h, int64_t w, int k, const float *weight, const float *bias,
                           float *dst)
{
    dw_job j = {.src = src, .weight = weight, .bias = bias, .dst = dst, .c = c, .h = h, .w = w,
                .planes = b * c, .k = k};
    j.n_tasks = task_count(tp, j.planes);
    sleapc__threadpool_run(tp, dw_task, &j, j.n_tasks);
}

/* ---- LayerNorm over channels ---- */

#define LN_CHUNK 256

typedef struct ln_job {
    const float *src, *weight, *bias;
    float *dst;
    int64_t c, hw, chunks_per_image, n_chunks, n_tasks;
    float eps;
} ln_job;

static void ln_task(void *ctx, int64_t task)
{
    const ln_job *j = ctx;
    int64_t q0, q1;
    task_range(task, j->n_tasks, j->n_chunks, &q0, &q1);
    float mean[LN_CHUNK], rstd[LN_CHUNK];
    float inv_c = 1.0f / (float)j->c;
    for (int64_t q = q0; q < q1; q++) {
        int64_t bi = q / j->chunks_per_image;
        int64_t px0 = (q % j->chunks_per_image) * LN_CHUNK;
        int64_t n = j->hw - px0 < LN_CHUNK ? j->hw - px0 : LN_CHUNK;
        const float *s = j->src + bi * j->c * j->hw + px0;
        float *d = j->dst + bi * j->c * j->hw + px0;
        for (int64_t i = 0; i < n; i++)
            mean[i] = 0.0f;
        for (int64_t ci = 0; ci < j->c; ci++)
            for (int64_t i = 0; i < n; i++)
                mean[i] += s[ci * j->hw + i];
        for (int64_t i = 0; i < n; i++) {
            mean[i] *= inv_c;
            rstd[i] = 0.0f;
        }
        for (int64_t ci = 0; ci < j->c; ci++)
            for (int64_t i = 0; i < n; i++) {
                float v = s[ci * j->hw + i] - mean[i];
                rstd[i] += v * v;
            }
        for (int64_t i = 0; i < n; i++)
            rstd[i] = 1.0f / sqrtf(rstd[i] * inv_c + j->eps);
        for (int64_t ci = 0; ci < j->c; ci++) {
            float wv = j->weight ? j->weight[ci] : 1.0f, bv = j->bias ? j->bias[ci] : 0.0f;
            for (int64_t i = 0; i < n; i++)
                d[ci * j->hw + i] = (s[ci * j->hw + i] - mean[i]) * rstd[i] * wv + bv;
        }
    }
}

void sleapc__native_layernorm(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                              int64_t hw, const float *weight, const float *bias, float eps,
                              float *dst)
{
    ln_job j = {.src = src, .weight = weight, .bias = bias, .dst = dst, .c = c, .hw = hw,
                .eps = eps};
    j.chunks_per_image = (hw + LN_CHUNK - 1) / LN_CHUNK;
    j.n_chunks = b * j.chunks_per_image;
    j.n_tasks = task_count(tp, j.n_chunks);
    sleapc__threadpool_run(tp, ln_task, &j, j.n_tasks);
}

/* ---- layer scale + residual ---- */

typedef struct sa_job {
    const float *x, *y, *gamma;
    float *dst;
    int64_t c, hw, planes, n_tasks;
} sa_job;

static void sa_task(void *ctx, int64_t task)
{
    const sa_job *j = ctx;
    int64_t p0, p1;
    task_range(task, j->n_tasks, j->planes, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        float g = j->gamma ? j->gamma[p % j->c] : 1.0f;
        const float *x = j->x + p * j->hw, *y = j->y + p * j->hw;
        float *d = j->dst + p * j->hw;
        for (int64_t i = 0; i < j->hw; i++)
            d[i] = x[i] + g * y[i];
    }
}

void sleapc__native_scale_add(sleapc_threadpool *tp, const float *x, const float *y,
                              const float *gamma, int64_t b, int64_t c, int64_t hw, float *dst)
{
    sa_job j = {.x = x, .y = y, .gamma = gamma, .dst = dst, .c = c, .hw = hw, .planes = b * c};
    j.n_tasks = task_count(tp, j.planes);
    sleapc__threadpool_run(tp, sa_task, &j, j.n_tasks);
}

/* ---- GELU ---- */

/* erf as a rational function on [-4, 4] (the float approximation Eigen and
 * XLA use, within a few ulp of erff); branch-free, so the loop vectorises. */
static inline float erf_fast(float a)
{
    float x = a < -4.0f ? -4.0f : (a > 4.0f ? 4.0f : a);
    float x2 = x * x;
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 + -2.10102402082508e-06f;
    p = p * x2 + -5.69250639462346e-05f;
    p = p * x2 + -7.34990630326855e-04f;
    p = p * x2 + -2.95459980854025e-03f;
    p = p * x2 + -1.60960333262415e-02f;
    p = p * x;
    float q = -1.45660718464996e-05f;
    q = q * x2 + -2.13374055278905e-04f;
    q = q * x2 + -1.68282697438203e-03f;
    q = q * x2 + -7.37332916720468e-03f;
    q = q * x2 + -1.42647390514189e-02f;
    return p / q;
}

typedef struct gelu_job {
    float *x;
    int64_t n, n_tasks;
} gelu_job;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void gelu_span(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = 0.5f * x[i] * (1.0f + erf_fast(x[i] * 0.70710678118654752f));
}

static void gelu_task(void *ctx, int64_t task)
{
    const gelu_job *j = ctx;
    int64_t a, b;
    task_range(task, j->n_tasks, j->n, &a, &b);
    gelu_span(j->x + a, b - a);
}

void sleapc__native_gelu(sleapc_threadpool *tp, float *x, int64_t n)
{
    gelu_job j = {.x = x, .n = n};
    j.n_tasks = task_count(tp, (n + 4095) / 4096);
    sleapc__threadpool_run(tp, gelu_task, &j, j.n_tasks);
}
