/* Convolutions and dense layers on the AMX tiles (native_amx.h): operands
 * staged in the layouts the tiles read, the products by
 * sleapc__native_amx_gemm. Weights are rounded and packed once, at create;
 * activations are rounded to bf16 as they are staged (what the bf16
 * emulation rounds, so the results differ from it only in the order of the
 * fp32 sums). */
#include <string.h>

#include "backends/native/native_amx.h"
#include "core/alloc.h"
#include "core/error.h"

/* Output pixels per GEMM: two blocks of 2 x 2 tiles wide, enough to reuse
 * each weight tile over 4 tiles of pixels, small enough that the staged
 * K x pixels panel stays in L2 (1728 pairs x 64 x 4 bytes = 432 KiB for the
 * widest decoder conv, 384 channels x 3 x 3). */
#define AMX_CHUNK 64

static int64_t round_up(int64_t a, int64_t m)
{
    return (a + m - 1) / m * m;
}

static size_t align64(size_t n)
{
    return (n + 63) / 64 * 64;
}

static uint32_t pair_of(float a, float b)
{
    return (uint32_t)sleapc__native_amx_bf16(a) | (uint32_t)sleapc__native_amx_bf16(b) << 16;
}

struct native_amx_conv {
    const native_amx_ops *ops;
    int c_in, c_out, kh, kw, pad_t, pad_l;
    bool relu;
    int cp;        /* pairs of input channels (a zero after an odd last one) */
    int64_t kp;    /* K pairs: taps x cp, rounded up to whole tiles */
    int64_t m_pad; /* c_out rounded up to whole tiles */
    uint16_t *w;   /* m_pad rows of 2 kp bf16: [tap][channel pair][2] */
    float *bias;   /* c_out */
};

sleapc_status sleapc__native_amx_conv_create(const native_amx_ops *ops, int c_in, int c_out, int kh,
                                             int kw, const float *weight, const float *bias,
                                             bool relu, native_amx_conv **out)
{
    *out = NULL;
    if (!ops || !weight || c_in < 1 || c_out < 1 || c_in > (1 << 20) || c_out > (1 << 20) ||
        kh < 1 || kw < 1 || kh > 64 || kw > 64)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create amx conv: %dx%d, %d -> %d", kh, kw,
                            c_in, c_out);
    native_amx_conv *cv = sleapc__calloc(1, sizeof *cv);
    if (!cv)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create amx conv: out of memory");
    *cv = (native_amx_conv){.ops = ops,
                            .c_in = c_in,
                            .c_out = c_out,
                            .kh = kh,
                            .kw = kw,
                            .pad_t = (kh - 1) / 2,
                            .pad_l = (kw - 1) / 2,
                            .relu = relu,
                            .cp = (c_in + 1) / 2};
    int taps = kh * kw;
    cv->kp = round_up((int64_t)taps * cv->cp, NATIVE_AMX_PAIRS);
    cv->m_pad = round_up(c_out, NATIVE_AMX_ROWS);
    cv->w = sleapc__aligned_alloc((size_t)(cv->m_pad * 2 * cv->kp) * sizeof *cv->w);
    cv->bias = sleapc__aligned_alloc((size_t)c_out * sizeof *cv->bias);
    if (!cv->w || !cv->bias) {
        sleapc__native_amx_conv_destroy(cv);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create amx conv: out of memory");
    }
    memset(cv->w, 0, (size_t)(cv->m_pad * 2 * cv->kp) * sizeof *cv->w);
    for (int co = 0; co < c_out; co++) {
        uint16_t *row = cv->w + co * 2 * cv->kp;
        for (int t = 0; t < taps; t++)
            for (int ci = 0; ci < c_in; ci++)
                row[2 * ((int64_t)t * cv->cp + ci / 2) + ci % 2] =
                    sleapc__native_amx_bf16(weight[((int64_t)co * c_in + ci) * taps + t]);
        cv->bias[co] = bias ? bias[co] : 0.0f;
    }
    *out = cv;
    return SLEAPC_OK;
}

void sleapc__native_amx_conv_destroy(native_amx_conv *cv)
{
    if (!cv)
        return;
    sleapc__aligned_free(cv->w);
    sleapc__aligned_free(cv->bias);
    sleapc__free(cv);
}

/* Per thread: the model's tile file, the staged pixels (kp x AMX_CHUNK
 * pairs), the sums (m_pad x AMX_CHUNK). */
static size_t conv_per_thread(const native_amx_conv *cv)
{
    return NATIVE_AMX_CTX_BYTES + align64((size_t)cv->kp * AMX_CHUNK * 4) +
           align64((size_t)cv->m_pad * AMX_CHUNK * sizeof(float));
}

size_t sleapc__native_amx_conv_scratch_size(const native_amx_conv *cv, int n_threads)
{
    return conv_per_thread(cv) * (size_t)(n_threads < 1 ? 1 : n_threads);
}

typedef struct amx_job {
    const native_amx_conv *cv;
    native_conv_src src;
    int64_t h, w, n_chunks;
    float *dst;
    char *scratch;
} amx_job;

/* Channel ci's plane of batch item bi, from the part that holds it; NULL
 * past the last channel (the zero of an odd count). */
static const float *plane_of(const amx_job *j, int64_t bi, int ci)
{
    if (ci >= j->cv->c_in)
        return NULL;
    int k = 0;
    while (k + 1 < j->src.n && ci >= j->src.c[k]) {
        ci -= j->src.c[k];
        k++;
    }
    return j->src.data[k] + (bi * j->src.c[k] + ci) * j->h * j->w;
}

/* The pixels [px0, px0 + AMX_CHUNK) as B: row p = tap * cp + q holds, per
 * pixel, the pair of channels 2q, 2q + 1 at that tap (zeros outside the
 * image, past the pixels and past the taps). */
static void stage_pixels(const amx_job *j, int64_t bi, int64_t px0, uint32_t *b)
{
    const native_amx_conv *cv = j->cv;
    int64_t hw = j->h * j->w;
    int taps = cv->kh * cv->kw;
    for (int t = 0; t < taps; t++) {
        int dy = t / cv->kw - cv->pad_t, dx = t % cv->kw - cv->pad_l;
        for (int q = 0; q < cv->cp; q++) {
            const float *pa = plane_of(j, bi, 2 * q), *pb = plane_of(j, bi, 2 * q + 1);
            uint32_t *row = b + ((int64_t)t * cv->cp + q) * AMX_CHUNK;
            int64_t y = px0 / j->w, x = px0 % j->w;
            for (int n = 0; n < AMX_CHUNK; n++) {
                int64_t iy = y + dy, ix = x + dx;
                bool in = px0 + n < hw && iy >= 0 && iy < j->h && ix >= 0 && ix < j->w;
                int64_t at = iy * j->w + ix;
                row[n] = in ? pair_of(pa[at], pb ? pb[at] : 0.0f) : 0;
                if (++x == j->w) {
                    x = 0;
                    y++;
                }
            }
        }
    }
    int64_t used = (int64_t)taps * cv->cp;
    memset(b + used * AMX_CHUNK, 0, (size_t)((cv->kp - used) * AMX_CHUNK) * sizeof *b);
}

static void conv_task(void *ctx, int64_t task, int thread)
{
    const amx_job *j = ctx;
    const native_amx_conv *cv = j->cv;
    int64_t bi = task / j->n_chunks, px0 = task % j->n_chunks * AMX_CHUNK;
    int64_t hw = j->h * j->w;
    char *base = j->scratch + (size_t)thread * conv_per_thread(cv);
    uint32_t *b = (uint32_t *)(base + NATIVE_AMX_CTX_BYTES);
    float *c = (float *)(base + NATIVE_AMX_CTX_BYTES + align64((size_t)cv->kp * AMX_CHUNK * 4));
    stage_pixels(j, bi, px0, b);
    sleapc__native_amx_gemm(cv->ops, base, cv->m_pad, AMX_CHUNK, cv->kp, cv->w, 2 * cv->kp * 2,
                            (const uint16_t *)b, AMX_CHUNK * 4, c, AMX_CHUNK);
    int64_t n = hw - px0 < AMX_CHUNK ? hw - px0 : AMX_CHUNK;
    for (int co = 0; co < cv->c_out; co++) {
        float *d = j->dst + (bi * cv->c_out + co) * hw + px0;
        const float *s = c + (int64_t)co * AMX_CHUNK;
        for (int64_t x = 0; x < n; x++) {
            float v = s[x] + cv->bias[co];
            d[x] = cv->relu && !(v > 0.0f) ? 0.0f : v;
        }
    }
}

void sleapc__native_amx_conv_run(const native_amx_conv *cv, sleapc_threadpool *tp,
                                 const native_conv_src *src, int64_t b, int64_t h, int64_t w,
                                 float *dst, void *scratch)
{
    if (b <= 0 || h <= 0 || w <= 0)
        return;
    amx_job j = {.cv = cv, .src = *src, .h = h, .w = w, .dst = dst, .scratch = scratch};
    j.n_chunks = (h * w + AMX_CHUNK - 1) / AMX_CHUNK;
    sleapc__threadpool_run_indexed(tp, conv_task, &j, b * j.n_chunks);
}

/* ---- dense ------------------------------------------------------------ */

struct native_amx_linear {
    const native_amx_ops *ops;
    int n_in, n_out;
    bool relu;
    int64_t kp;    /* input pairs, rounded up to whole tiles */
    int64_t n_pad; /* outputs, rounded up to whole tiles */
    uint32_t *w;   /* B: kp rows of n_pad pairs (inputs 2p, 2p + 1) */
    float *bias;
};

sleapc_status sleapc__native_amx_linear_create(const native_amx_ops *ops, int n_in, int n_out,
                                               const float *weight, const float *bias, bool relu,
                                               native_amx_linear **out)
{
    *out = NULL;
    if (!ops || !weight || n_in < 1 || n_out < 1 || n_in > (1 << 20) || n_out > (1 << 20))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create amx linear: %d -> %d", n_in, n_out);
    native_amx_linear *l = sleapc__calloc(1, sizeof *l);
    if (!l)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create amx linear: out of memory");
    *l = (native_amx_linear){.ops = ops, .n_in = n_in, .n_out = n_out, .relu = relu};
    l->kp = round_up((n_in + 1) / 2, NATIVE_AMX_PAIRS);
    l->n_pad = round_up(n_out, NATIVE_AMX_ROWS);
    l->w = sleapc__aligned_alloc((size_t)(l->kp * l->n_pad) * sizeof *l->w);
    l->bias = sleapc__aligned_alloc((size_t)n_out * sizeof *l->bias);
    if (!l->w || !l->bias) {
        sleapc__native_amx_linear_destroy(l);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create amx linear: out of memory");
    }
    for (int64_t p = 0; p < l->kp; p++)
        for (int64_t o = 0; o < l->n_pad; o++) {
            const float *wr = weight + o * n_in;
            bool in = o < n_out;
            float lo = in && 2 * p < n_in ? wr[2 * p] : 0.0f;
            float hi = in && 2 * p + 1 < n_in ? wr[2 * p + 1] : 0.0f;
            l->w[p * l->n_pad + o] = pair_of(lo, hi);
        }
    for (int o = 0; o < n_out; o++)
        l->bias[o] = bias ? bias[o] : 0.0f;
    *out = l;
    return SLEAPC_OK;
}

void sleapc__native_amx_linear_destroy(native_amx_linear *l)
{
    if (!l)
        return;
    sleapc__aligned_free(l->w);
    sleapc__aligned_free(l->bias);
    sleapc__free(l);
}

size_t sleapc__native_amx_linear_scratch_size(const native_amx_linear *l, int64_t b)
{
    int64_t m_pad = round_up(b, NATIVE_AMX_ROWS);
    return NATIVE_AMX_CTX_BYTES + align64((size_t)(m_pad * 2 * l->kp) * sizeof(uint16_t)) +
           align64((size_t)(m_pad * l->n_pad) * sizeof(float));
}

void sleapc__native_amx_linear_run(const native_amx_linear *l, const float *src, int64_t b,
                                   float *dst, void *scratch)
{
    if (b <= 0)
        return;
    int64_t m_pad = round_up(b, NATIVE_AMX_ROWS);
    char *base = scratch;
    uint16_t *a = (uint16_t *)(base + NATIVE_AMX_CTX_BYTES);
    float *c = (float *)(base + NATIVE_AMX_CTX_BYTES +
                         align64((size_t)(m_pad * 2 * l->kp) * sizeof(uint16_t)));
    for (int64_t r = 0; r < m_pad; r++)
        for (int64_t k = 0; k < 2 * l->kp; k++)
            a[r * 2 * l->kp + k] =
                r < b && k < l->n_in ? sleapc__native_amx_bf16(src[r * l->n_in + k]) : 0;
    sleapc__native_amx_gemm(l->ops, base, m_pad, l->n_pad, l->kp, a, 2 * l->kp * 2,
                            (const uint16_t *)l->w, l->n_pad * 4, c, l->n_pad);
    for (int64_t r = 0; r < b; r++)
        for (int o = 0; o < l->n_out; o++) {
            float v = c[r * l->n_pad + o] + l->bias[o];
            dst[r * l->n_out + o] = l->relu && !(v > 0.0f) ? 0.0f : v;
        }
}
