/* Native compute kernels against plain reference loops written from the
 * definitions (native_kernels.h, spec architectures.md 3.2 and 2.2), which
 * accumulate in double. Every case runs with every microkernel set the CPU
 * has, on no pool and on pools of 1, 2 and 3 threads.
 *
 * Tolerance: |got - ref| <= 1e-5 * (1 + |ref|). The kernels accumulate in
 * float32 over at most K = 33 * 25 = 825 products; weights are scaled by
 * 1/sqrt(K) (PyTorch's default init), so partial sums stay O(1) and the
 * rounding error grows like sqrt(K) * 2^-24 ~ 2e-6, well inside the bound,
 * while a wrong tap, border or channel is off by ~0.1. */
#include <math.h>
#include <string.h>

#include "backends/native/native_kernels.h"
#include "backends/bf16_policy.h"
#include "backends/native/native_ukernel.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "test_util.h"

#define N_POOLS 4

static sleapc_threadpool *pools[N_POOLS]; /* NULL, 1, 2, 3 threads */
/* Every microkernel set the CPU runs, the bf16 one (3x3 convs on bf16
 * pairs) last where the CPU has AVX512-BF16. */
static const native_ukernels *sets[NATIVE_ISA_COUNT + 1];
static int n_sets;
static unsigned rng_state = 12345;

static float rand_unit(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffffff) / 8388608.0f - 1.0f; /* [-1, 1) */
}

static float *rand_buf(size_t n, float scale)
{
    float *p = sleapc__malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = scale * rand_unit();
    return p;
}

/* Output buffer pre-filled with NaN, so an element the kernel skips fails. */
static float *nan_buf(size_t n)
{
    float *p = sleapc__malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
    return p;
}

/* True when every element is within the tolerance; reports the worst. */
static bool close_to(const float *got, const double *ref, size_t n, const char *what)
{
    double worst = 0;
    size_t at = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - ref[i]);
        double tol = 1e-5 * (1.0 + fabs(ref[i]));
        if (!(err <= tol)) {
            if (ok || err > worst) {
                worst = err;
                at = i;
            }
            ok = false;
        }
    }
    CHECK_MSG(ok, "%s: element %zu is %g, expected %g", what, at, ok ? 0.0 : (double)got[at],
              ok ? 0.0 : ref[at]);
    return ok;
}

static double relu_d(double v, bool relu)
{
    return relu && v < 0 ? 0 : v;
}

/* ---- convolution ------------------------------------------------------ */

static void ref_conv(const float *src, int b, int c_in, int h, int w, const float *wt,
                     const float *bias, int c_out, int kh, int kw, bool relu, double *dst)
{
    /* PyTorch "same": the extra row/column of an even kernel is bottom/right. */
    int pad_t = (kh - 1) / 2, pad_l = (kw - 1) / 2;
    for (int bi = 0; bi < b; bi++)
        for (int co = 0; co < c_out; co++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    double acc = bias ? bias[co] : 0.0;
                    for (int ci = 0; ci < c_in; ci++)
                        for (int ky = 0; ky < kh; ky++)
                            for (int kx = 0; kx < kw; kx++) {
                                int iy = y + ky - pad_t, ix = x + kx - pad_l;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                acc += (double)src[((bi * c_in + ci) * h + iy) * w + ix] *
                                       wt[((co * c_in + ci) * kh + ky) * kw + kx];
                            }
                    dst[((bi * c_out + co) * h + y) * w + x] = relu_d(acc, relu);
                }
}

/* What a bf16 conv computes, in double: ref_conv on the input and weights
 * rounded to bf16 (the bias stays float32). Its float32 sums then differ
 * from this as the float32 kernels' do, so the same tolerance holds. NULL
 * when no bf16 set runs here or the kernel is not 3x3. */
static double *bf16_ref(const float *src, int b, int c_in, int h, int w, const float *wt,
                        const float *bias, int c_out, int kh, int kw, bool relu)
{
    if (!sets[n_sets - 1]->bf16_pairs || kh != 3 || kw != 3)
        return NULL;
    size_t n_src = (size_t)b * c_in * h * w, n_wt = (size_t)c_out * c_in * 9;
    float *s16 = sleapc__malloc(n_src * sizeof *s16), *w16 = sleapc__malloc(n_wt * sizeof *w16);
    double *ref = sleapc__malloc((size_t)b * c_out * h * w * sizeof *ref);
    memcpy(s16, src, n_src * sizeof *s16);
    memcpy(w16, wt, n_wt * sizeof *w16);
    sleapc__bf16_round_array(s16, (int64_t)n_src);
    sleapc__bf16_round_array(w16, (int64_t)n_wt);
    ref_conv(s16, b, c_in, h, w, w16, bias, c_out, 3, 3, relu, ref);
    sleapc__free(s16);
    sleapc__free(w16);
    return ref;
}

static void conv_case(int kh, int kw, int c_in, int c_out, int h, int w, int b, bool relu,
                      bool has_bias)
{
    size_t n_src = (size_t)b * c_in * h * w, n_dst = (size_t)b * c_out * h * w;
    float *src = rand_buf(n_src, 1.0f);
    float *wt = rand_buf((size_t)c_out * c_in * kh * kw, 1.0f / sqrtf((float)(c_in * kh * kw)));
    float *bias = has_bias ? rand_buf((size_t)c_out, 0.5f) : NULL;
    double *ref = sleapc__malloc(n_dst * sizeof *ref);
    ref_conv(src, b, c_in, h, w, wt, bias, c_out, kh, kw, relu, ref);
    double *ref16 = bf16_ref(src, b, c_in, h, w, wt, bias, c_out, kh, kw, relu);

    for (int s = 0; s < n_sets; s++) {
        if (sets[s]->bf16_pairs && !ref16)
            continue;
        native_conv *conv = NULL;
        CHECK_OK(sleapc__native_conv_create_uk(sets[s], c_in, c_out, kh, kw, wt, bias, relu,
                                               &conv));
        if (!conv)
            continue;
        for (int lay = NATIVE_CONV_LAYOUT_ROWS; lay <= NATIVE_CONV_LAYOUT_BANDS; lay++) {
            sleapc__native_conv_set_layout(conv, (native_conv_layout)lay);
            for (int p = 0; p < N_POOLS; p++) {
                int nt = sleapc__threadpool_n_threads(pools[p]);
                void *scratch =
                    sleapc__aligned_alloc(sleapc__native_conv_scratch_size(conv, h, w, nt));
                float *dst = nan_buf(n_dst);
                sleapc__native_conv_run(conv, pools[p], src, b, h, w, dst, scratch);
                char what[160];
                snprintf(what, sizeof what,
                         "conv %s %dx%d b=%d c_in=%d c_out=%d %dx%d relu=%d bias=%d pool=%d "
                         "layout=%d",
                         sets[s]->name, kh, kw, b, c_in, c_out, h, w, relu, has_bias, p, lay);
                close_to(dst, sets[s]->bf16_pairs ? ref16 : ref, n_dst, what);
                sleapc__free(dst);
                sleapc__aligned_free(scratch);
            }
        }
        sleapc__native_conv_destroy(conv);
    }
    sleapc__free(src);
    sleapc__free(wt);
    sleapc__free(bias);
    sleapc__free(ref);
    sleapc__free(ref16);
}

/* The bf16 set's staging rounds as sleapc__bf16_round, the emulation's
 * rounding: ties to even, carries into the exponent, infinities, NaNs kept
 * NaN, on whole vectors and a tail. */
static void test_pack_pairs(void)
{
    const native_ukernels *uk = sets[n_sets - 1];
    if (!uk->bf16_pairs)
        return;
    float a[37], b[37], got[37];
    const uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x3f7fffffu,
                                0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00001u,
                                0x7f800001u, 0x80000000u, 0x00000001u, 0xbf808001u};
    for (int x = 0; x < 37; x++) {
        a[x] = rand_unit();
        b[x] = 1000 * rand_unit();
        if (x < 12)
            memcpy(&a[x], &special[x], sizeof a[x]);
        if (x >= 25)
            memcpy(&b[x], &special[x - 25], sizeof b[x]);
    }
    for (int with_b = 0; with_b < 2; with_b++) {
        uk->pack_pairs(a, with_b ? b : NULL, 37, got);
        for (int x = 0; x < 37; x++) {
            float ra = sleapc__bf16_round(a[x]), rb = with_b ? sleapc__bf16_round(b[x]) : 0.0f;
            uint32_t ua, ub, ug;
            memcpy(&ua, &ra, sizeof ua);
            memcpy(&ub, &rb, sizeof ub);
            memcpy(&ug, &got[x], sizeof ug);
            CHECK_MSG(ug == ((ua >> 16) | (ub & 0xffff0000u)),
                      "pack_pairs x=%d (b %d): %08x, expected %08x", x, with_b, ug,
                      (ua >> 16) | (ub & 0xffff0000u));
        }
    }
}

static void test_conv(void)
{
    static const int ks[] = {1, 3, 5, 2};
    static const int c_ins[] = {1, 3, 7, 16, 33};
    static const int c_outs[] = {1, 2, 8, 17, 36};
    /* 1x1; narrower than one vector; more than one step plus a 1-column
     * tail; several steps plus a partial one. */
    static const int sizes[][2] = {{1, 1}, {3, 5}, {17, 9}, {6, 37}};
    int i = 0;
    for (int ki = 0; ki < 4; ki++)
        for (int a = 0; a < 5; a++)
            for (int o = 0; o < 5; o++, i++) {
                /* Two sizes per channel pair, rotating batch, ReLU and bias
                 * so every combination of them meets every kernel size. */
                for (int rep = 0; rep < 2; rep++) {
                    const int *hw = sizes[(i + 2 * rep) % 4];
                    conv_case(ks[ki], ks[ki], c_ins[a], c_outs[o], hw[0], hw[1],
                              1 + (i + rep) % 2, (i / 2 + rep) % 2 == 0, (i + rep) % 5 != 0);
                }
            }
    /* Non-square kernels take the generic microkernel. */
    conv_case(3, 1, 5, 7, 9, 20, 2, true, true);
    conv_case(1, 5, 3, 13, 6, 37, 1, false, true);
    conv_case(2, 3, 8, 6, 17, 9, 1, true, false);
    conv_case(7, 7, 4, 9, 12, 19, 1, false, true);
    /* Tall narrow maps: more rows than one band holds (bands of
     * ceil(512 / (w + k - 1)) rows), so tasks run several bands and the
     * last one is short. */
    conv_case(3, 3, 5, 13, 150, 6, 2, true, true);
    conv_case(5, 5, 3, 7, 131, 4, 1, false, true);
}

/* The input split into n_parts separately stored channel ranges
 * (sleapc__native_conv_run_parts, a concat never copied together), and the
 * reduction over input channels cut into slices by a small slice budget
 * (each slice adds onto the partial sums; ReLU only on the full sums). */
static void conv_parts_case(int k, int c_in, int c_out, int h, int w, int b, bool relu,
                            size_t slice_bytes, int n_parts)
{
    size_t plane = (size_t)h * w;
    size_t n_src = (size_t)b * c_in * plane, n_dst = (size_t)b * c_out * plane;
    float *src = rand_buf(n_src, 1.0f);
    float *wt = rand_buf((size_t)c_out * c_in * k * k, 1.0f / sqrtf((float)(c_in * k * k)));
    float *bias = rand_buf((size_t)c_out, 0.5f);
    double *ref = sleapc__malloc(n_dst * sizeof *ref);
    ref_conv(src, b, c_in, h, w, wt, bias, c_out, k, k, relu, ref);
    double *ref16 = bf16_ref(src, b, c_in, h, w, wt, bias, c_out, k, k, relu);

    native_conv_src parts = {.n = n_parts};
    float *part_buf[NATIVE_CONV_MAX_PARTS] = {0};
    for (int p = 0, c0 = 0; p < n_parts; p++) {
        int c = c_in * (p + 1) / n_parts - c0;
        part_buf[p] = sleapc__malloc((size_t)b * c * plane * sizeof(float));
        for (int bi = 0; bi < b; bi++)
            memcpy(part_buf[p] + (size_t)bi * c * plane, src + ((size_t)bi * c_in + c0) * plane,
                   (size_t)c * plane * sizeof(float));
        parts.data[p] = part_buf[p];
        parts.c[p] = c;
        c0 += c;
    }

    for (int s = 0; s < n_sets; s++) {
        if (sets[s]->bf16_pairs && !ref16)
            continue;
        native_conv *conv = NULL;
        CHECK_OK(sleapc__native_conv_create_uk(sets[s], c_in, c_out, k, k, wt, bias, relu,
                                               &conv));
        if (!conv)
            continue;
        sleapc__native_conv_set_slice_bytes(conv, slice_bytes);
        for (int lay = NATIVE_CONV_LAYOUT_ROWS; lay <= NATIVE_CONV_LAYOUT_BANDS; lay++) {
            sleapc__native_conv_set_layout(conv, (native_conv_layout)lay);
            for (int p = 0; p < N_POOLS; p++) {
                int nt = sleapc__threadpool_n_threads(pools[p]);
                void *scratch =
                    sleapc__aligned_alloc(sleapc__native_conv_scratch_size(conv, h, w, nt));
                float *dst = nan_buf(n_dst);
                sleapc__native_conv_run_parts(conv, pools[p], &parts, b, h, w, dst, scratch);
                char what[160];
                snprintf(what, sizeof what,
                         "conv parts %s %dx%d b=%d c_in=%d (%d parts) c_out=%d %dx%d relu=%d "
                         "slice=%zu pool=%d layout=%d",
                         sets[s]->name, k, k, b, c_in, n_parts, c_out, h, w, relu, slice_bytes,
                         p, lay);
                close_to(dst, sets[s]->bf16_pairs ? ref16 : ref, n_dst, what);
                sleapc__free(dst);
                sleapc__aligned_free(scratch);
            }
        }
        sleapc__native_conv_destroy(conv);
    }
    for (int p = 0; p < n_parts; p++)
        sleapc__free(part_buf[p]);
    sleapc__free(src);
    sleapc__free(wt);
    sleapc__free(bias);
    sleapc__free(ref);
    sleapc__free(ref16);
}

static void test_conv_parts(void)
{
    static const int ks[] = {3, 1, 5};
    for (int ki = 0; ki < 3; ki++) {
        int k = ks[ki];
        /* 1 byte: one input channel per slice. Larger budgets give uneven
         * slices (e.g. 7 channels as 2 + 2 + 2 + 1). */
        conv_parts_case(k, 1, 5, 7, 9, 1, true, 1, 1);
        conv_parts_case(k, 2, 7, 5, 19, 2, true, 1, 2);
        conv_parts_case(k, 3, 6, 9, 17, 1, false, 1, 3);
        conv_parts_case(k, 7, 13, 6, 37, 2, true, 2000, 2);
        conv_parts_case(k, 33, 17, 4, 33, 1, true, 3000, 4);
        conv_parts_case(k, 16, 6, 3, 1, 1, true, 1, 2);
        conv_parts_case(k, 12, 2, 11, 40, 1, true, 0, 3); /* default budget: one slice */
        conv_parts_case(k, 9, 14, 140, 5, 1, true, 3000, 2); /* several bands */
    }
}

/* ---- transposed convolution ------------------------------------------- */

/* Scatter form of the definition: input (i, j) adds x * W[ci, co, a, c] to
 * full (2i + a, 2j + c); the output is a window of the full map. */
static void ref_convt(const float *src, int b, int c_in, int h, int w, const float *wt,
                      const float *bias, int c_out, bool relu, bool keras, double *dst)
{
    int fh = 2 * h + 1, fw = 2 * w + 1, off = keras ? 0 : 1;
    double *full = sleapc__malloc((size_t)fh * fw * sizeof *full);
    for (int bi = 0; bi < b; bi++)
        for (int co = 0; co < c_out; co++) {
            for (int i = 0; i < fh * fw; i++)
                full[i] = 0;
            for (int ci = 0; ci < c_in; ci++)
                for (int i = 0; i < h; i++)
                    for (int j = 0; j < w; j++)
                        for (int a = 0; a < 3; a++)
                            for (int c = 0; c < 3; c++)
                                full[(2 * i + a) * fw + 2 * j + c] +=
                                    (double)src[((bi * c_in + ci) * h + i) * w + j] *
                                    wt[((ci * c_out + co) * 3 + a) * 3 + c];
            for (int y = 0; y < 2 * h; y++)
                for (int x = 0; x < 2 * w; x++)
                    dst[((bi * c_out + co) * 2 * h + y) * 2 * w + x] = relu_d(
                        full[(y + off) * fw + x + off] + (bias ? bias[co] : 0.0), relu);
        }
    sleapc__free(full);
}

static void convt_case(int c_in, int c_out, int h, int w, int b, bool relu, bool has_bias,
                       bool keras)
{
    size_t n_src = (size_t)b * c_in * h * w, n_dst = (size_t)b * c_out * 4 * h * w;
    float *src = rand_buf(n_src, 1.0f);
    float *wt = rand_buf((size_t)c_in * c_out * 9, 1.0f / sqrtf((float)(c_in * 4)));
    float *bias = has_bias ? rand_buf((size_t)c_out, 0.5f) : NULL;
    double *ref = sleapc__malloc(n_dst * sizeof *ref);
    ref_convt(src, b, c_in, h, w, wt, bias, c_out, relu, keras, ref);

    for (int s = 0; s < n_sets; s++) {
        native_convt *ct = NULL;
        if (sets[s]->bf16_pairs)
            continue; /* 3x3 convs only */
        CHECK_OK(sleapc__native_convt_create_uk(sets[s], c_in, c_out, wt, bias, relu, keras,
                                                &ct));
        if (!ct)
            continue;
        for (int p = 0; p < N_POOLS; p++) {
            int nt = sleapc__threadpool_n_threads(pools[p]);
            void *scratch =
                sleapc__aligned_alloc(sleapc__native_convt_scratch_size(ct, h, w, nt));
            float *dst = nan_buf(n_dst);
            sleapc__native_convt_run(ct, pools[p], src, b, h, w, dst, scratch);
            char what[160];
            snprintf(what, sizeof what,
                     "convt %s %s b=%d c_in=%d c_out=%d %dx%d relu=%d bias=%d pool=%d",
                     sets[s]->name, keras ? "keras" : "pytorch", b, c_in, c_out, h, w, relu,
                     has_bias, p);
            close_to(dst, ref, n_dst, what);
            sleapc__free(dst);
            sleapc__aligned_free(scratch);
        }
        sleapc__native_convt_destroy(ct);
    }
    sleapc__free(src);
    sleapc__free(wt);
    sleapc__free(bias);
    sleapc__free(ref);
}

static void test_convt(void)
{
    static const int sizes[][2] = {{1, 1}, {3, 5}, {7, 9}, {2, 19}};
    static const int chans[][2] = {{1, 1}, {3, 8}, {16, 17}, {33, 36}, {7, 2}};
    int i = 0;
    for (int keras = 0; keras < 2; keras++)
        for (int si = 0; si < 4; si++)
            for (int ch = 0; ch < 5; ch++, i++)
                convt_case(chans[ch][0], chans[ch][1], sizes[si][0], sizes[si][1],
                           1 + i % 2, (i / 2) % 2 == 0, i % 3 != 0, keras);
}

/* ---- pooling, resize, dense ------------------------------------------- */

static void test_maxpool(void)
{
    /* 70 columns: two whole AVX-512 vectors of outputs and a tail. */
    static const int sizes[][2] = {{2, 2}, {5, 7}, {9, 4}, {1, 6}, {33, 17}, {6, 70}};
    for (int si = 0; si < 6; si++) {
        int b = 2, c = 3, h = sizes[si][0], w = sizes[si][1], oh = h / 2, ow = w / 2;
        size_t n_dst = (size_t)b * c * oh * ow;
        float *src = rand_buf((size_t)b * c * h * w, 10.0f);
        double *ref = sleapc__malloc((n_dst ? n_dst : 1) * sizeof *ref);
        for (int p = 0; p < b * c; p++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    double m = -INFINITY;
                    for (int dy = 0; dy < 2; dy++)
                        for (int dx = 0; dx < 2; dx++)
                            m = fmax(m, src[((size_t)p * h + 2 * y + dy) * w + 2 * x + dx]);
                    ref[((size_t)p * oh + y) * ow + x] = m;
                }
        for (int p = 0; p < N_POOLS; p++) {
            float *dst = nan_buf(n_dst ? n_dst : 1);
            sleapc__native_maxpool2(pools[p], src, b, c, h, w, dst);
            char what[64];
            snprintf(what, sizeof what, "maxpool2 %dx%d pool=%d", h, w, p);
            close_to(dst, ref, n_dst, what);
            sleapc__free(dst);
        }
        sleapc__free(src);
        sleapc__free(ref);
    }

    /* A NaN in a window comes out, as from torch's max_pool2d. */
    float nan_src[4] = {1.0f, NAN, 3.0f, 2.0f}, out = 0;
    sleapc__native_maxpool2(NULL, nan_src, 1, 1, 2, 2, &out);
    CHECK(isnan(out));

    /* The same in every lane of the vector kernels: a NaN at each of the 4
     * places of each window of a 2 x 80 row, one at a time. */
    enum { W = 80 };
    float row[2 * W], res[W / 2];
    for (int at = 0; at < 2 * W; at++) {
        for (int i = 0; i < 2 * W; i++)
            row[i] = (float)(i % 7);
        row[at] = NAN;
        sleapc__native_maxpool2(NULL, row, 1, 1, 2, W, res);
        int hit = (at % W) / 2;
        for (int x = 0; x < W / 2; x++)
            CHECK_MSG(isnan(res[x]) == (x == hit), "NaN at %d: column %d gives %g", at, x, res[x]);
    }
}

/* Each fp32 set's row kernel against the scalar order, bit for bit (signed
 * zeros and ties included), on a row of 100 outputs. */
static void test_maxpool_rows(void)
{
    enum { OW = 100 };
    float s0[2 * OW], s1[2 * OW], d[OW];
    static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f};
    for (int i = 0; i < 2 * OW; i++) {
        s0[i] = vals[(i * 7 + 3) % 5];
        s1[i] = vals[(i * 3 + 1) % 5];
    }
    for (int k = 0; k < n_sets; k++) {
        if (!sets[k]->maxpool2_row)
            continue;
        memset(d, 0x7f, sizeof d);
        int64_t done = sets[k]->maxpool2_row(s0, s1, d, OW);
        CHECK(done >= 0 && done <= OW);
        for (int64_t x = 0; x < done; x++) {
            float m = s0[2 * x];
            m = s0[2 * x + 1] > m ? s0[2 * x + 1] : m;
            m = s1[2 * x] > m ? s1[2 * x] : m;
            m = s1[2 * x + 1] > m ? s1[2 * x + 1] : m;
            CHECK_MSG(memcmp(&m, &d[x], sizeof m) == 0, "%s maxpool2_row column %lld: %g, want %g",
                      sets[k]->name, (long long)x, d[x], m);
        }
    }
}

static void test_global_maxpool(void)
{
    int b = 2, c = 5, h = 7, w = 3;
    float *src = rand_buf((size_t)b * c * h * w, 100.0f);
    double ref[10];
    for (int p = 0; p < b * c; p++) {
        ref[p] = -INFINITY;
        for (int i = 0; i < h * w; i++)
            ref[p] = fmax(ref[p], src[p * h * w + i]);
    }
    float dst[10];
    sleapc__native_global_maxpool(src, b, c, h, w, dst);
    close_to(dst, ref, 10, "global maxpool");
    sleapc__free(src);
}

/* upsample_bilinear2d, align_corners=False, from its formula. PyTorch
 * computes the source coordinate in float32 for float tensors, and at a few
 * hundred columns its rounding (~3e-5) exceeds the tolerance, so the
 * reference rounds it the same way; the blend is in double. */
static void ref_axis(float scale, int dst, int in, int *i0, int *i1, double *l1)
{
    float s_f = scale * ((float)dst + 0.5f) - 0.5f;
    double s = s_f;
    if (s < 0)
        s = 0;
    *i0 = (int)floor(s);
    if (*i0 > in - 1)
        *i0 = in - 1;
    *i1 = *i0 < in - 1 ? *i0 + 1 : *i0;
    *l1 = s - *i0;
}

static void resize_case(int h, int w, int oh, int ow, float sh, float sw)
{
    int b = 2, c = 3;
    size_t n_dst = (size_t)b * c * oh * ow;
    float *src = rand_buf((size_t)b * c * h * w, 1.0f);
    double *ref = sleapc__malloc(n_dst * sizeof *ref);
    for (int p = 0; p < b * c; p++)
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++) {
                int y0, y1, x0, x1;
                double ly, lx;
                ref_axis(sh, y, h, &y0, &y1, &ly);
                ref_axis(sw, x, w, &x0, &x1, &lx);
                const float *s = src + (size_t)p * h * w;
                ref[((size_t)p * oh + y) * ow + x] =
                    (1 - ly) * ((1 - lx) * s[y0 * w + x0] + lx * s[y0 * w + x1]) +
                    ly * ((1 - lx) * s[y1 * w + x0] + lx * s[y1 * w + x1]);
            }
    for (int p = 0; p < N_POOLS; p++) {
        float *dst = nan_buf(n_dst);
        sleapc__native_resize_bilinear(pools[p], src, b, c, h, w, dst, oh, ow, sh, sw);
        char what[80];
        snprintf(what, sizeof what, "resize %dx%d -> %dx%d pool=%d", h, w, oh, ow, p);
        close_to(dst, ref, n_dst, what);
        /* Rounding rows as they are written (bf16) gives the plain result
         * rounded, bit for bit. */
        float *rounded = nan_buf(n_dst);
        sleapc__native_resize_bilinear_rounded(pools[p], src, b, c, h, w, rounded, oh, ow, sh, sw,
                                               sleapc__bf16_round_array);
        sleapc__bf16_round_array(dst, (int64_t)n_dst);
        CHECK_MSG(memcmp(rounded, dst, n_dst * sizeof *dst) == 0, "%s: rounded rows", what);
        sleapc__free(rounded);
        sleapc__free(dst);
    }
    sleapc__free(src);
    sleapc__free(ref);
}

static void test_resize(void)
{
    /* x2 upsample as nn.Upsample(scale_factor=2) passes it: scale 0.5. */
    resize_case(1, 1, 2, 2, 0.5f, 0.5f);
    resize_case(3, 5, 6, 10, 0.5f, 0.5f);
    resize_case(8, 13, 16, 26, 0.5f, 0.5f);
    /* To a given size: scale = in / out. */
    resize_case(7, 7, 12, 12, 7.0f / 12.0f, 7.0f / 12.0f);
    resize_case(12, 12, 7, 7, 12.0f / 7.0f, 12.0f / 7.0f);
    resize_case(5, 5, 5, 5, 1.0f, 1.0f);
    resize_case(7, 12, 12, 7, 7.0f / 12.0f, 12.0f / 7.0f);
    resize_case(4, 300, 4, 520, 1.0f, 300.0f / 520.0f); /* more columns than one batch */
}

static void test_linear(void)
{
    static const int dims[][3] = {{1, 1, 1}, {2, 64, 5}, {3, 7, 64}};
    for (int d = 0; d < 3; d++)
        for (int relu = 0; relu < 2; relu++)
            for (int has_bias = 0; has_bias < 2; has_bias++) {
                int b = dims[d][0], n_in = dims[d][1], n_out = dims[d][2];
                float *src = rand_buf((size_t)b * n_in, 1.0f);
                float *wt = rand_buf((size_t)n_out * n_in, 1.0f / sqrtf((float)n_in));
                float *bias = has_bias ? rand_buf((size_t)n_out, 0.5f) : NULL;
                double *ref = sleapc__malloc((size_t)b * n_out * sizeof *ref);
                for (int bi = 0; bi < b; bi++)
                    for (int o = 0; o < n_out; o++) {
                        double acc = bias ? bias[o] : 0.0;
                        for (int i = 0; i < n_in; i++)
                            acc += (double)wt[o * n_in + i] * src[bi * n_in + i];
                        ref[bi * n_out + o] = relu_d(acc, relu);
                    }
                float *dst = nan_buf((size_t)b * n_out);
                sleapc__native_linear(src, b, n_in, n_out, wt, bias, relu, dst);
                char what[64];
                snprintf(what, sizeof what, "linear %dx%d->%d relu=%d bias=%d", b, n_in, n_out,
                         relu, has_bias);
                close_to(dst, ref, (size_t)b * n_out, what);
                sleapc__free(src);
                sleapc__free(wt);
                sleapc__free(bias);
                sleapc__free(ref);
                sleapc__free(dst);
            }
}

static void test_sigmoid(void)
{
    float x[] = {0.0f, 1.0f, -1.0f, 4.5f, -30.0f, 30.0f, -200.0f, 200.0f};
    size_t n = sizeof x / sizeof x[0];
    double ref[sizeof x / sizeof x[0]];
    for (size_t i = 0; i < n; i++)
        ref[i] = 1.0 / (1.0 + exp(-(double)x[i]));
    sleapc__native_sigmoid(x, (int64_t)n);
    close_to(x, ref, n, "sigmoid");
}

static void test_softmax(void)
{
    /* Row 2 would overflow expf without the max subtracted; row 3 is one
     * element. */
    float x[4][5] = {
        {0.1f, -0.5f, 2.0f, 0.0f, 1.0f},
        {1000.0f, 999.0f, -1000.0f, 1000.0f, 998.5f},
        {-90.0f, -100.0f, -95.0f, -91.0f, -120.0f},
        {3.0f, 0, 0, 0, 0},
    };
    int rows = 3, n = 5;
    double ref[3][5];
    for (int r = 0; r < rows; r++) {
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < n; i++)
            m = fmax(m, x[r][i]);
        for (int i = 0; i < n; i++)
            sum += exp((double)x[r][i] - m);
        for (int i = 0; i < n; i++)
            ref[r][i] = exp((double)x[r][i] - m) / sum;
    }
    sleapc__native_softmax(&x[0][0], rows, n);
    close_to(&x[0][0], &ref[0][0], (size_t)rows * n, "softmax");
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += x[r][i];
        CHECK_MSG(fabs(sum - 1.0) <= 1e-6, "softmax row %d sums to %.9f", r, sum);
    }
    sleapc__native_softmax(&x[3][0], 1, 1);
    CHECK(x[3][0] == 1.0f);
}

/* ---- no allocation when running; create errors ------------------------ */

static void test_no_alloc_in_run(void)
{
    int b = 2, c_in = 9, c_out = 13, h = 11, w = 21;
    float *src = rand_buf((size_t)b * c_in * h * w, 1.0f);
    float *wt = rand_buf((size_t)c_out * c_in * 9, 0.1f);
    float *dst = sleapc__malloc((size_t)b * c_out * 4 * h * w * sizeof *dst);
    native_conv *conv3 = NULL, *conv1 = NULL;
    native_convt *ct = NULL;
    CHECK_OK(sleapc__native_conv_create(c_in, c_out, 3, 3, wt, wt, true, &conv3));
    CHECK_OK(sleapc__native_conv_create(c_in, c_out, 1, 1, wt, NULL, false, &conv1));
    CHECK_OK(sleapc__native_convt_create(c_in, c_out, wt, wt, true, false, &ct));
    sleapc_threadpool *tp = pools[N_POOLS - 1];
    int nt = sleapc__threadpool_n_threads(tp);
    size_t sz = sleapc__native_conv_scratch_size(conv3, h, w, nt);
    size_t sz1 = sleapc__native_conv_scratch_size(conv1, h, w, nt);
    size_t szt = sleapc__native_convt_scratch_size(ct, h, w, nt);
    sz = sz > sz1 ? sz : sz1;
    sz = sz > szt ? sz : szt;
    void *scratch = sleapc__aligned_alloc(sz);
    if (conv3 && conv1 && ct) {
        int64_t before = sleapc__alloc_count();
        sleapc__native_conv_run(conv3, tp, src, b, h, w, dst, scratch);
        sleapc__native_conv_run(conv1, tp, src, b, h, w, dst, scratch);
        sleapc__native_convt_run(ct, tp, src, b, h, w, dst, scratch);
        sleapc__native_maxpool2(tp, src, b, c_in, h, w, dst);
        sleapc__native_resize_bilinear(tp, src, b, c_in, h, w, dst, 2 * h, 2 * w, 0.5f, 0.5f);
        sleapc__native_resize_bilinear(tp, src, b, c_in, h, w, dst, 5, 7, h / 5.0f, w / 7.0f);
        sleapc__native_global_maxpool(src, b, c_in, h, w, dst);
        sleapc__native_linear(src, b, 9, 5, wt, NULL, true, dst);
        sleapc__native_sigmoid(dst, 50);
        sleapc__native_softmax(dst, 5, 10);
        CHECK_MSG(sleapc__alloc_count() == before, "%lld allocations while running",
                  (long long)(sleapc__alloc_count() - before));
    }
    sleapc__aligned_free(scratch);
    sleapc__native_conv_destroy(conv3);
    sleapc__native_conv_destroy(conv1);
    sleapc__native_convt_destroy(ct);
    sleapc__free(src);
    sleapc__free(wt);
    sleapc__free(dst);
}

static void test_create_errors(void)
{
    float wt[9 * 4] = {0};
    native_conv *conv = (native_conv *)wt;
    CHECK(sleapc__native_conv_create(2, 2, 3, 3, NULL, NULL, false, &conv) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(conv == NULL);
    CHECK(sleapc__native_conv_create(0, 2, 3, 3, wt, NULL, false, &conv) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__native_conv_create(2, 2, 0, 3, wt, NULL, false, &conv) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "create conv") != NULL);
    native_convt *ct = (native_convt *)wt;
    CHECK(sleapc__native_convt_create(2, -1, wt, NULL, false, false, &ct) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(ct == NULL);
    sleapc__native_conv_destroy(NULL);
    sleapc__native_convt_destroy(NULL);

    /* Each allocation of create failing in turn: NOMEM, nothing leaked. */
    for (int k = 1; k <= 3; k++) {
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__native_conv_create(2, 2, 3, 3, wt, wt, true, &conv);
        sleapc__alloc_fail_after(0);
        CHECK_MSG(st == SLEAPC_ERR_NOMEM && conv == NULL, "conv, allocation %d failing", k);
        sleapc__alloc_fail_after(k);
        st = sleapc__native_convt_create(2, 2, wt, wt, true, false, &ct);
        sleapc__alloc_fail_after(0);
        CHECK_MSG(st == SLEAPC_ERR_NOMEM && ct == NULL, "convt, allocation %d failing", k);
    }
}

int main(void)
{
    for (int isa = 0; isa < NATIVE_ISA_COUNT; isa++) {
        const native_ukernels *uk = sleapc__native_ukernels_get((native_isa)isa);
        if (uk)
            sets[n_sets++] = uk;
    }
    CHECK(n_sets >= 1 && sets[0]->isa == NATIVE_ISA_GENERIC);
#ifdef __aarch64__
    /* NEON is baseline on AArch64: its set must be there and chosen. */
    CHECK(sleapc__native_ukernels_best()->isa == NATIVE_ISA_NEON);
#endif
    const native_ukernels *b16 = sleapc__native_ukernels_bf16();
    if (b16)
        sets[n_sets++] = b16;
    else
        printf("bf16 microkernels not checked: no AVX512-BF16 here\n");
    printf("microkernel sets checked:");
    for (int i = 0; i < n_sets; i++)
        printf(" %s", sets[i]->name);
    printf(" (best: %s)\n", sleapc__native_ukernels_best()->name);
    for (int p = 1; p < N_POOLS; p++)
        CHECK_OK(sleapc__threadpool_create(p, &pools[p]));

    test_pack_pairs();
    test_conv();
    test_conv_parts();
    test_convt();
    test_maxpool();
    test_maxpool_rows();
    test_global_maxpool();
    test_resize();
    test_linear();
    test_sigmoid();
    test_softmax();
    test_no_alloc_in_run();
    test_create_errors();

    for (int p = 1; p < N_POOLS; p++)
        sleapc__threadpool_destroy(pools[p]);
    return test_finish();
}
