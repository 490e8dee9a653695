/* Winograd F(2), F(4), F(6) 3x3 convs (native_winograd.c) against the
 * definition in double, on every microkernel set the CPU has (AVX-512 only
 * where the CPU has it), on no pool and pools of 1, 2 and 3 threads, with the
 * input as one buffer and as a concat of parts, through native_conv with
 * Winograd forced and through the direct path for comparison.
 *
 * Tolerance: the float32 error bound of the method, per output,
 *   |got - y| <= gamma_K * S,  gamma_K = K u / (1 - K u), u = 2^-24,
 * S = sum over input channels and positions (k, l) of
 *   |A_kr||A_ls| (|G||g||G^T|)_kl (|B^T||d||B|)_kl, plus |bias|,
 * the same computation in absolute values, and K = c_in + 4 alpha + 2 the
 * longest chain of roundings one output sees: the weights' transform
 * rounded once, two passes of alpha terms for V, c_in products in the GEMM,
 * two passes of alpha terms and the bias for Y (Higham, Accuracy and
 * Stability of Numerical Algorithms, 3.1). The direct method's bound has
 * K = 9 c_in + 1 and S = sum |g||d| + |bias|; sleapc__native_wino_gain(m)
 * is how much larger F(m)'s S can be. A wrong tap, tile or border is off by
 * ~0.1, far outside both. */
#include <math.h>
#include <string.h>

#include "backends/bf16_policy.h"
#include "backends/native/native_conv_choose.h"
#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"
#include "backends/native/native_winograd.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "test_util.h"

#define N_POOLS 4

static sleapc_threadpool *pools[N_POOLS];
static const native_ukernels *sets[NATIVE_ISA_COUNT];
static int n_sets;
static unsigned rng_state = 4242;

static float rand_unit(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

static float *rand_buf(size_t n, float scale)
{
    float *p = sleapc__malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = scale * rand_unit();
    return p;
}

/* The exact result (double) and the bound's S for every output. */
static void reference(int m, const float *src, int b, int c_in, int h, int w, const float *wt,
                      const float *bias, int c_out, bool relu, double *ref, double *s_abs)
{
    const native_wino_mats *mt = sleapc__native_wino_mats(m);
    int al = mt->alpha;
    int th = (h + m - 1) / m, tw = (w + m - 1) / m;
    size_t n_out = (size_t)b * c_out * h * w;
    for (size_t i = 0; i < n_out; i++)
        s_abs[i] = ref[i] = 0;
    double *va = sleapc__malloc((size_t)c_in * al * al * sizeof *va);
    for (int bi = 0; bi < b; bi++)
        for (int ty = 0; ty < th; ty++)
            for (int tx = 0; tx < tw; tx++) {
                /* |B^T||d||B| per channel of this tile. */
                for (int ci = 0; ci < c_in; ci++) {
                    double d[8][8];
                    for (int p = 0; p < al; p++)
                        for (int q = 0; q < al; q++) {
                            int iy = ty * m + p - 1, ix = tx * m + q - 1;
                            d[p][q] = iy < 0 || iy >= h || ix < 0 || ix >= w
                                          ? 0
                                          : fabs(src[((size_t)(bi * c_in + ci) * h + iy) * w + ix]);
                        }
                    for (int k = 0; k < al; k++)
                        for (int l = 0; l < al; l++) {
                            double s = 0;
                            for (int p = 0; p < al; p++)
                                for (int q = 0; q < al; q++)
                                    s += fabs(mt->bt[k][p]) * d[p][q] * fabs(mt->bt[l][q]);
                            va[(size_t)ci * al * al + k * al + l] = s;
                        }
                }
                for (int co = 0; co < c_out; co++) {
                    double acc[8][8] = {{0}}; /* sum over ci of |U| . |V| */
                    for (int ci = 0; ci < c_in; ci++) {
                        const float *g = wt + ((size_t)co * c_in + ci) * 9;
                        for (int k = 0; k < al; k++)
                            for (int l = 0; l < al; l++) {
                                double u = 0;
                                for (int a = 0; a < 3; a++)
                                    for (int c = 0; c < 3; c++)
                                        u += fabs(mt->g[k][a]) * fabs(g[a * 3 + c]) *
                                             fabs(mt->g[l][c]);
                                acc[k][l] += u * va[(size_t)ci * al * al + k * al + l];
                            }
                    }
                    for (int r = 0; r < m; r++)
                        for (int s = 0; s < m; s++) {
                            int y = ty * m + r, x = tx * m + s;
                            if (y >= h || x >= w)
                                continue;
                            double sum = bias ? fabs(bias[co]) : 0;
                            for (int k = 0; k < al; k++)
                                for (int l = 0; l < al; l++)
                                    sum += fabs(mt->at[r][k]) * fabs(mt->at[s][l]) * acc[k][l];
                            s_abs[((size_t)(bi * c_out + co) * h + y) * w + x] = sum;
                        }
                }
            }
    sleapc__free(va);
    /* The exact convolution. */
    for (int bi = 0; bi < b; bi++)
        for (int co = 0; co < c_out; co++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    double acc = bias ? bias[co] : 0.0;
                    for (int ci = 0; ci < c_in; ci++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                int iy = y + ky - 1, ix = x + kx - 1;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                acc += (double)src[((size_t)(bi * c_in + ci) * h + iy) * w + ix] *
                                       wt[((size_t)(co * c_in + ci) * 3 + ky) * 3 + kx];
                            }
                    ref[((size_t)(bi * c_out + co) * h + y) * w + x] = relu && acc < 0 ? 0 : acc;
                }
}

static double gamma_k(double k)
{
    double u = ldexp(1.0, -24);
    return k * u / (1 - k * u);
}

static bool within_bound(const float *got, const double *ref, const double *s_abs, size_t n,
                         double gamma, const char *what)
{
    bool ok = true;
    size_t at = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - ref[i]);
        double ratio = err / (gamma * s_abs[i] + 1e-30);
        if (!(err <= gamma * s_abs[i] + 1e-30) && (ok || ratio > worst)) {
            ok = false;
            worst = ratio;
            at = i;
        }
    }
    CHECK_MSG(ok, "%s: element %zu is %g, expected %g (bound %g)", what, at, (double)got[at],
              ref[at], gamma * s_abs[at]);
    return ok;
}

static float *nan_buf(size_t n)
{
    float *p = sleapc__malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
    return p;
}

/* One shape: every tile size, set, pool, and the input whole and in parts. */
static void wino_case(int c_in, int c_out, int h, int w, int b, bool relu, bool has_bias,
                      int n_parts)
{
    size_t plane = (size_t)h * w;
    size_t n_src = (size_t)b * c_in * plane, n_dst = (size_t)b * c_out * plane;
    float *src = rand_buf(n_src, 1.0f);
    float *wt = rand_buf((size_t)c_out * c_in * 9, 1.0f / sqrtf((float)(c_in * 9)));
    float *bias = has_bias ? rand_buf((size_t)c_out, 0.5f) : NULL;
    double *ref = sleapc__malloc(n_dst * sizeof *ref);
    double *s_abs = sleapc__malloc(n_dst * sizeof *s_abs);

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

    for (int m = 2; m <= 6; m += 2) {
        int al = m + 2;
        reference(m, src, b, c_in, h, w, wt, bias, c_out, relu, ref, s_abs);
        double gamma = gamma_k(c_in + 4 * al + 2);
        for (int s = 0; s < n_sets; s++) {
            native_conv *conv = NULL;
            CHECK_OK(sleapc__native_conv_create_uk(sets[s], c_in, c_out, 3, 3, wt, bias, relu,
                                                   &conv));
            if (!conv)
                continue;
            CHECK_OK(sleapc__native_conv_set_winograd(conv, m));
            for (int p = 0; p < N_POOLS; p++) {
                int nt = sleapc__threadpool_n_threads(pools[p]);
                void *scratch =
                    sleapc__aligned_alloc(sleapc__native_conv_scratch_size(conv, h, w, nt));
                float *dst = nan_buf(n_dst);
                sleapc__native_conv_run_parts(conv, pools[p], &parts, b, h, w, dst, scratch);
                char what[160];
                snprintf(what, sizeof what,
                         "F(%d) %s b=%d c_in=%d (%d parts) c_out=%d %dx%d relu=%d bias=%d pool=%d",
                         m, sets[s]->name, b, c_in, n_parts, c_out, h, w, relu, has_bias, p);
                within_bound(dst, ref, s_abs, n_dst, gamma, what);
                sleapc__free(dst);
                sleapc__aligned_free(scratch);
            }
            sleapc__native_conv_destroy(conv);
        }
    }
    for (int p = 0; p < n_parts; p++)
        sleapc__free(part_buf[p]);
    sleapc__free(src);
    sleapc__free(wt);
    sleapc__free(bias);
    sleapc__free(ref);
    sleapc__free(s_abs);
}

/* --precision bf16 on the float32 kernels (native_backend.c, bf16_f32):
 * bf16-rounded input and weights, every output rounded to bf16 as it is
 * stored (sleapc__native_conv_set_round_bf16), by the direct method (rows
 * and bands, the input channels reduced in slices, where only the full sums
 * may round) and by F(2), F(4), F(6), on every set. The products of bf16
 * values are exact in float32, so before its rounding an output is within
 * the method's float32 bound E of the exact y on the rounded operands
 * (gamma_K S as above; the direct method's S is at most F(2)'s, every
 * direct product being one of F(2)'s absolute terms). Rounding is monotonic,
 * so the stored value must be a bf16 value between round(y - E) and
 * round(y + E): exact bits, not a tolerance (a missed or doubled rounding,
 * or one before the last slice, lands outside for some output). */
static void bf16_case(int c_in, int c_out, int h, int w, int b, bool relu)
{
    size_t plane = (size_t)h * w;
    size_t n_src = (size_t)b * c_in * plane, n_dst = (size_t)b * c_out * plane;
    float *src = rand_buf(n_src, 1.0f);
    float *wt = rand_buf((size_t)c_out * c_in * 9, 1.0f / sqrtf((float)(c_in * 9)));
    float *bias = rand_buf((size_t)c_out, 0.5f);
    sleapc__bf16_round_array(src, (int64_t)n_src);
    sleapc__bf16_round_array(wt, (int64_t)c_out * c_in * 9);
    double *ref = sleapc__malloc(n_dst * sizeof *ref);
    double *s_abs = sleapc__malloc(n_dst * sizeof *s_abs);
    native_conv_src one = {.n = 1, .data = {src}, .c = {c_in}};
    for (int m = 0; m <= 6; m += 2) {
        reference(m ? m : 2, src, b, c_in, h, w, wt, bias, c_out, relu, ref, s_abs);
        double gamma = gamma_k(m ? c_in + 4 * (m + 2) + 2 : 9 * c_in + 1);
        for (int s = 0; s < n_sets; s++)
            for (int layout = 0; layout < (m ? 1 : 2); layout++) {
                native_conv *conv = NULL;
                CHECK_OK(sleapc__native_conv_create_uk(sets[s], c_in, c_out, 3, 3, wt, bias, relu,
                                                       &conv));
                if (!conv)
                    continue;
                sleapc__native_conv_set_round_bf16(conv, true);
                CHECK_OK(sleapc__native_conv_set_winograd(conv, m));
                sleapc__native_conv_set_layout(conv, layout ? NATIVE_CONV_LAYOUT_BANDS
                                                            : NATIVE_CONV_LAYOUT_ROWS);
                sleapc__native_conv_set_slice_bytes(conv, m ? 0 : 4096);
                void *scratch =
                    sleapc__aligned_alloc(sleapc__native_conv_scratch_size(conv, h, w, 2));
                float *dst = nan_buf(n_dst);
                sleapc__native_conv_run_parts(conv, pools[2], &one, b, h, w, dst, scratch);
                size_t bad = n_dst;
                for (size_t i = 0; i < n_dst && bad == n_dst; i++) {
                    double e = gamma * s_abs[i] + 1e-30;
                    float lo = sleapc__bf16_round(nextafterf((float)(ref[i] - e), -INFINITY));
                    float hi = sleapc__bf16_round(nextafterf((float)(ref[i] + e), INFINITY));
                    if (!(dst[i] == sleapc__bf16_round(dst[i]) && dst[i] >= lo && dst[i] <= hi))
                        bad = i;
                }
                CHECK_MSG(bad == n_dst,
                          "bf16 outputs, %s %s layout %d c_in=%d c_out=%d %dx%d b=%d relu=%d: "
                          "element %zu is %.9g, expected round(%.9g)",
                          m ? "Winograd" : "direct", sets[s]->name, layout, c_in, c_out, h, w, b,
                          relu, bad, bad < n_dst ? (double)dst[bad] : 0.0,
                          bad < n_dst ? ref[bad] : 0.0);
                sleapc__free(dst);
                sleapc__aligned_free(scratch);
                sleapc__native_conv_destroy(conv);
            }
    }
    sleapc__free(src);
    sleapc__free(wt);
    sleapc__free(bias);
    sleapc__free(ref);
    sleapc__free(s_abs);
}

/* F(m)'s bound over the direct method's on all-ones data: the gain
 * follows from the tables (native_wino_mats.c); the values are those of the
 * points chosen, so a changed table shows here. */
static void test_gain(void)
{
    CHECK_MSG(fabs(sleapc__native_wino_gain(2) - 64.0 / 9) < 1e-9, "F(2) gain %g",
              sleapc__native_wino_gain(2));
    CHECK(sleapc__native_wino_gain(4) > sleapc__native_wino_gain(2));
    CHECK(sleapc__native_wino_gain(6) > sleapc__native_wino_gain(4));
    CHECK(sleapc__native_wino_gain(3) == 0);
}

/* The accuracy rule (native_conv_choose.c): F(m)'s bound at most 256x the
 * direct one's, which leaves out F(4) below 4 input channels and F(6)
 * below 10, and never F(2). */
static void test_accurate(void)
{
    CHECK(sleapc__native_wino_accurate(2, 1));
    CHECK(!sleapc__native_wino_accurate(4, 3) && sleapc__native_wino_accurate(4, 4));
    CHECK(!sleapc__native_wino_accurate(6, 9) && sleapc__native_wino_accurate(6, 10));
    CHECK(sleapc__native_wino_accurate(6, 768) && !sleapc__native_wino_accurate(3, 64));
}

/* A conv whose kernel is not 3x3, or on bf16 pairs, refuses Winograd and
 * stays direct. */
static void test_refusals(void)
{
    float wt[25 * 4] = {0};
    native_conv *conv = NULL;
    CHECK_OK(sleapc__native_conv_create(2, 2, 5, 5, wt, NULL, false, &conv));
    CHECK(sleapc__native_conv_set_winograd(conv, 4) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(sleapc__native_conv_winograd(conv) == 0);
    sleapc__native_conv_destroy(conv);
    CHECK_OK(sleapc__native_conv_create(2, 2, 3, 3, wt, NULL, false, &conv));
    CHECK(sleapc__native_conv_set_winograd(conv, 5) == SLEAPC_ERR_INVALID_ARG);
    CHECK_OK(sleapc__native_conv_set_winograd(conv, 6));
    CHECK(sleapc__native_conv_winograd(conv) == 6);
    CHECK_OK(sleapc__native_conv_set_winograd(conv, 0));
    CHECK(sleapc__native_conv_winograd(conv) == 0);
    sleapc__native_conv_destroy(conv);
}

int main(void)
{
    for (int isa = 0; isa < NATIVE_ISA_COUNT; isa++) {
        const native_ukernels *uk = sleapc__native_ukernels_get((native_isa)isa);
        if (uk)
            sets[n_sets++] = uk;
    }
    if (!sleapc__native_ukernels_get(NATIVE_ISA_AVX512))
        printf("AVX-512 transforms not run: this CPU has no AVX-512F\n");
    for (int p = 1; p < N_POOLS; p++)
        CHECK_OK(sleapc__threadpool_create(p, &pools[p]));

    test_gain();
    test_refusals();
    test_accurate();
    /* Sizes: one pixel; smaller than a tile; tiles with a partial last one
     * in both directions; a map of whole F(2), F(4) and F(6) tiles; more
     * tiles than one chunk (several chunks per task, a short last chunk);
     * batch items whose tiles share a chunk; rows of two or more groups of 8
     * tiles and a tail for every tile size (the 8-wide sets' transposed
     * staging and scatter). Channels: 1; odd; more than a register block
     * (c_out 13, 17); parts of uneven sizes; wide layers. */
    wino_case(1, 1, 1, 1, 1, false, true, 1);
    wino_case(3, 5, 2, 3, 2, true, true, 1);
    wino_case(7, 13, 9, 11, 1, true, false, 2);
    wino_case(16, 6, 12, 12, 2, false, true, 3);
    wino_case(5, 17, 37, 29, 1, true, true, 1);
    wino_case(33, 8, 7, 50, 3, true, true, 4);
    wino_case(2, 3, 70, 70, 1, false, true, 2);
    /* Transformed weights of 8 MiB and more (F(4) and F(6); F(2) 4 MiB), on
     * a map of too few chunks for the threads: each chunk's steps split
     * across them (two chunks in F(4), the items sharing one). */
    wino_case(256, 256, 26, 26, 2, true, true, 2);
    wino_case(4, 5, 8, 103, 2, true, true, 1);
    /* bf16 outputs: a partial last tile and strip, more input channels than
     * one 4 KiB slice of padded rows holds (direct), two batch items. */
    bf16_case(5, 13, 9, 11, 1, true);
    bf16_case(40, 17, 21, 19, 2, false);

    for (int p = 1; p < N_POOLS; p++)
        sleapc__threadpool_destroy(pools[p]);
    return test_finish();
}
