/* Max pooling: 2 x 2 stride 2 (the UNet encoder) and global (ClassVectorsHead);
 * the global (generalized) mean and L2 normalisation (EmbeddingHead). */
#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"

#include <math.h>

/* NaN wins, as in PyTorch's max pooling ("val > max || isnan(val)"). */
static inline float max_nan(float m, float v)
{
    return (v > m || v != v) ? v : m;
}

typedef struct pool_job {
    const float *src;
    float *dst;
    int64_t h, w, oh, ow;
    int64_t n_rows;         /* output rows over all planes */
    int64_t rows_per_task;
    int64_t (*row)(const float *s0, const float *s1, float *d, int64_t ow);
} pool_job;

static void maxpool2_task(void *ctx, int64_t task)
{
    const pool_job *j = ctx;
    int64_t r0 = task * j->rows_per_task;
    int64_t r1 = r0 + j->rows_per_task < j->n_rows ? r0 + j->rows_per_task : j->n_rows;
    for (int64_t gr = r0; gr < r1; gr++) {
        int64_t plane = gr / j->oh, y = gr % j->oh;
        const float *s0 = j->src + (plane * j->h + 2 * y) * j->w;
        const float *s1 = s0 + j->w;
        float *d = j->dst + (plane * j->oh + y) * j->ow;
        for (int64_t x = j->row(s0, s1, d, j->ow); x < j->ow; x++) {
            float m = s0[2 * x];
            m = max_nan(m, s0[2 * x + 1]);
            m = max_nan(m, s1[2 * x]);
            d[x] = max_nan(m, s1[2 * x + 1]);
        }
    }
}

void sleapc__native_maxpool2(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                             int64_t h, int64_t w, float *dst)
{
    pool_job j = {.src = src, .dst = dst, .h = h, .w = w, .oh = h / 2, .ow = w / 2,
                  .row = sleapc__native_ukernels_best()->maxpool2_row};
    if (b <= 0 || c <= 0 || j.oh <= 0 || j.ow <= 0)
        return;
    j.n_rows = b * c * j.oh;
    int n_threads = sleapc__threadpool_n_threads(tp);
    int64_t n_tasks = n_threads == 1 ? 1 : 4 * (int64_t)n_threads;
    j.rows_per_task = (j.n_rows + n_tasks - 1) / n_tasks;
    n_tasks = (j.n_rows + j.rows_per_task - 1) / j.rows_per_task;
    sleapc__threadpool_run(tp, maxpool2_task, &j, n_tasks);
}

void sleapc__native_global_maxpool(const float *src, int64_t b, int64_t c, int64_t h,
                                   int64_t w, float *dst)
{
    int64_t plane = h * w;
    for (int64_t p = 0; p < b * c; p++) {
        const float *s = src + p * plane;
        float m = plane > 0 ? s[0] : 0.0f;
        for (int64_t i = 1; i < plane; i++)
            m = max_nan(m, s[i]);
        dst[p] = m;
    }
}

void sleapc__native_global_gempool(const float *src, int64_t b, int64_t c, int64_t h,
                                   int64_t w, const float *p, float eps, float *dst)
{
    int64_t plane = h * w;
    float e = 1.0f;
    if (p)
        e = *p < 1.0f ? 1.0f : *p > 6.0f ? 6.0f : *p; /* GEM_P_MIN, GEM_P_MAX */
    for (int64_t k = 0; k < b * c; k++) {
        const float *s = src + k * plane;
        double sum = 0.0;
        for (int64_t i = 0; i < plane; i++) {
            float v = s[i];
            sum += p ? (double)powf(v < eps ? eps : v, e) : (double)v;
        }
        float mean = plane > 0 ? (float)(sum / (double)plane) : 0.0f;
        dst[k] = p ? powf(mean, 1.0f / e) : mean;
    }
}

void sleapc__native_l2norm(float *x, int64_t b, int64_t c, float eps)
{
    for (int64_t r = 0; r < b; r++) {
        float *v = x + r * c;
        double ss = 0.0;
        for (int64_t i = 0; i < c; i++)
            ss += (double)v[i] * v[i];
        float norm = (float)sqrt(ss);
        if (norm < eps)
            norm = eps;
        for (int64_t i = 0; i < c; i++)
            v[i] /= norm;
    }
}
