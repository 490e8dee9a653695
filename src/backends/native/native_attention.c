/* Shifted-window multi-head self-attention (torchvision's
 * shifted_window_attention between its qkv and proj linears) on NCHW maps.
 * One task per window: gather the window's q, k, v tokens (padding and the
 * cyclic shift are only index arithmetic), q k^T * scale + relative position
 * bias (+ the shifted-window mask), softmax, times v, written back to the
 * token's own pixel (the reverse shift), padded tokens dropped. */
#include <math.h>
#include <string.h>

#include "backends/native/native_kernels.h"
#include "core/alloc.h"
#include "core/error.h"

struct native_wattn {
    int c, heads, ws, shift;
    float *bias;          /* (heads, N, N), N = ws * ws: table[index[i][j]][h] */
    float *pad_qkv;       /* (3C): qkv of a padded (all-zero) token */
};

sleapc_status sleapc__native_wattn_create(int c, int heads, int ws, int shift,
                                          const float *table, const float *qkv_bias,
                                          native_wattn **out)
{
    *out = NULL;
    if (c < 1 || heads < 1 || c % heads || ws < 1 || ws > 64 || !table)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "window attention: bad arguments");
    native_wattn *a = sleapc__calloc(1, sizeof *a);
    int n = ws * ws;
    if (a) {
        a->bias = sleapc__aligned_alloc((size_t)heads * n * n * sizeof(float));
        a->pad_qkv = sleapc__aligned_alloc((size_t)3 * c * sizeof(float));
    }
    if (!a || !a->bias || !a->pad_qkv) {
        sleapc__native_wattn_destroy(a);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "window attention: out of memory");
    }
    *a = (native_wattn){.c = c, .heads = heads, .ws = ws, .shift = shift, .bias = a->bias,
                        .pad_qkv = a->pad_qkv};
    int side = 2 * ws - 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int dy = i / ws - j / ws + ws - 1, dx = i % ws - j % ws + ws - 1;
            for (int h = 0; h < heads; h++)
                a->bias[((size_t)h * n + i) * n + j] = table[(dy * side + dx) * heads + h];
        }
    for (int i = 0; i < 3 * c; i++)
        a->pad_qkv[i] = qkv_bias ? qkv_bias[i] : 0.0f;
    *out = a;
    return SLEAPC_OK;
}

void sleapc__native_wattn_destroy(native_wattn *a)
{
    if (!a)
        return;
    sleapc__aligned_free(a->bias);
    sleapc__aligned_free(a->pad_qkv);
    sleapc__free(a);
}

/* Per thread: q, k^T, v of every head, one row of scores per query, the
 * tokens' source pixels and mask labels. */
static size_t thread_floats(const native_wattn *a)
{
    size_t n = (size_t)a->ws * a->ws;
    size_t f = 3 * n * a->c + n * n + 2 * n;
    return (f + 15) / 16 * 16;
}

size_t sleapc__native_wattn_scratch_size(const native_wattn *a, int n_threads)
{
    return thread_floats(a) * sizeof(float) * (size_t)n_threads;
}

/* Which of torchvision's three mask slices along one axis covers pos last:
 * slices (0, -ws), (-ws, -shift), (-shift, None) with Python's rules, so
 * that a shift of 0 gives the whole axis to the third one. -1: none. */
static int slice_label(int64_t pos, int64_t len, int ws, int shift)
{
    int64_t lo[3] = {0, -ws, -shift}, hi[3] = {-ws, -shift, len};
    int label = -1;
    for (int s = 0; s < 3; s++) {
        int64_t a = lo[s] < 0 ? lo[s] + len : lo[s], b = hi[s] < 0 ? hi[s] + len : hi[s];
        if (s == 1 && shift == 0)
            b = 0;  /* -0 is 0 */
        if (s == 2 && shift == 0)
            a = 0;
        a = a < 0 ? 0 : a;
        b = b > len ? len : b;
        if (pos >= a && pos < b)
            label = s;
    }
    return label;
}

typedef struct wattn_job {
    const native_wattn *a;
    const float *src;
    float *dst;
    float *scratch;
    int64_t h, w, ph, pw, nwx, n_windows;
    int sh, sw;
    bool masked;
} wattn_job;

static void wattn_task(void *ctx, int64_t task, int thread)
{
    const wattn_job *j = ctx;
    const native_wattn *a = j->a;
    int ws = a->ws, n = ws * ws, c = a->c, d = c / a->heads;
    int64_t hw = j->h * j->w;
    int64_t bi = task / j->n_windows, win = task % j->n_windows;
    int64_t wy = win / j->nwx, wx = win % j->nwx;
    float *q = j->scratch + thread_floats(a) * (size_t)thread;
    float *kt = q + (size_t)n * c;  /* per head (d, n) */
    float *v = kt + (size_t)n * c;  /* per head (n, d) */
    float *s = v + (size_t)n * c;   /* (n) scores of one query ... */
    int *pix = (int *)(s + (size_t)n * n);  /* source pixel or -1 */
    int *lab = pix + n;
    const float *src = j->src + bi * 3 * c * hw;
    float *dst = j->dst + bi * c * hw;
    float scale = 1.0f / sqrtf((float)d);

    for (int t = 0; t < n; t++) {
        int64_t py = wy * ws + t / ws, px = wx * ws + t % ws;
        int64_t sy = (py + j->sh) % j->ph, sx = (px + j->sw) % j->pw;
        pix[t] = sy < j->h && sx < j->w ? (int)(sy * j->w + sx) : -1;
        lab[t] = j->masked ? 3 * slice_label(py, j->ph, ws, j->sh) +
                                 slice_label(px, j->pw, ws, j->sw)
                           : 0;
    }
    /* Gather: channel (part * C + head * d + e) of the qkv map. */
    for (int hd = 0; hd < a->heads; hd++)
        for (int e = 0; e < d; e++) {
            int ch = hd * d + e;
            const float *qs = src + (int64_t)ch * hw, *ks = src + (int64_t)(c + ch) * hw,
                        *vs = src + (int64_t)(2 * c + ch) * hw;
            float *qd = q + ((size_t)hd * n) * d + e, *kd = kt + ((size_t)hd * d + e) * n;
            float *vd = v + ((size_t)hd * n) * d + e;
            for (int t = 0; t < n; t++) {
                int p = pix[t];
                qd[(size_t)t * d] = (p >= 0 ? qs[p] : a->pad_qkv[ch]) * scale;
                kd[t] = p >= 0 ? ks[p] : a->pad_qkv[c + ch];
                vd[(size_t)t * d] = p >= 0 ? vs[p] : a->pad_qkv[2 * c + ch];
            }
        }
    float o[256];
    for (int hd = 0; hd < a->heads; hd++) {
        const float *qh = q + (size_t)hd * n * d, *kh = kt + (size_t)hd * d * n,
                    *vh = v + (size_t)hd * n * d;
        const float *bh = a->bias + (size_t)hd * n * n;
        for (int i = 0; i < n; i++) {
            const float *br = bh + (size_t)i * n;
            for (int t = 0; t < n; t++)
                s[t] = br[t];
            for (int e = 0; e < d; e++) {
                float qv = qh[(size_t)i * d + e];
                const float *kr = kh + (size_t)e * n;
                for (int t = 0; t < n; t++)
                    s[t] += qv * kr[t];
            }
            if (j->masked)
                for (int t = 0; t < n; t++)
                    if (lab[t] != lab[i])
                        s[t] -= 100.0f;
            float m = s[0];
            for (int t = 1; t < n; t++)
                m = s[t] > m ? s[t] : m;
            float sum = 0.0f;
            for (int t = 0; t < n; t++) {
                s[t] = expf(s[t] - m);
                sum += s[t];
            }
            float inv = 1.0f / sum;
            if (pix[i] < 0)
                continue;  /* a padded query: cropped away */
            for (int done = 0; done < d; done += 256) {
                int cnt = d - done < 256 ? d - done : 256;
                for (int e = 0; e < cnt; e++)
                    o[e] = 0.0f;
                for (int t = 0; t < n; t++) {
                    float p = s[t] * inv;
                    const float *vr = vh + (size_t)t * d + done;
                    for (int e = 0; e < cnt; e++)
                        o[e] += p * vr[e];
                }
                for (int e = 0; e < cnt; e++)
                    dst[(int64_t)(hd * d + done + e) * hw + pix[i]] = o[e];
            }
        }
    }
}

void sleapc__native_wattn_run(const native_wattn *a, sleapc_threadpool *tp, const float *src,
                              int64_t b, int64_t h, int64_t w, float *dst, void *scratch)
{
    wattn_job j = {.a = a, .src = src, .dst = dst, .scratch = scratch, .h = h, .w = w};
    int ws = a->ws;
    j.ph = (h + ws - 1) / ws * ws;
    j.pw = (w + ws - 1) / ws * ws;
    j.sh = ws >= j.ph ? 0 : a->shift;
    j.sw = ws >= j.pw ? 0 : a->shift;
    j.masked = j.sh + j.sw > 0;
    j.nwx = j.pw / ws;
    j.n_windows = (j.ph / ws) * j.nwx;
    sleapc__threadpool_run_indexed(tp, wattn_task, &j, b * j.n_windows);
}
