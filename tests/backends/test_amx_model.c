/* The software model of the AMX tiles and the tile code that runs on it, on
 * every CPU:
 * 1. The model's TDPBF16PS step against an exact integer reference of the
 *    SDM's operation (one FMA, DAZ, FTZ after rounding, nearest even), bit
 *    for bit, on random operands with denormals, tiny and huge values and
 *    cancellations; a whole tile against the pseudo-code's loop.
 * 2. The tiling driver on the model, on shapes that are no multiple of a
 *    tile: bit for bit against a plain loop that sums in TDPBF16PS's order,
 *    and within the fp32 summation bound of an fp64 sum.
 * 3. The convolutions (kernels 1, 3, 5; odd channel counts; inputs in
 *    parts) and the dense layer on the model against fp64 sums of the same
 *    bf16-rounded operands, within that bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amx_test_ref.h"
#include "backends/bf16_policy.h"
#include "backends/native/native_amx.h"
#include "core/alloc.h"
#include "test_util.h"

static float f32_of(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A finite float accumulator: near p's size, tiny, or anything. */
static float rand_acc(float p)
{
    uint32_t r = amx_rand();
    switch (r % 8) {
    case 0: { /* near -p: cancellation */
        uint32_t u = bits_of(-p) ^ ((r >> 8) & 0xffu);
        float f;
        memcpy(&f, &u, 4);
        return isfinite(f) ? f : 0.0f;
    }
    case 1: { /* around the smallest normal, denormals included */
        uint32_t u = ((r >> 3) & 1u) << 31 | ((r >> 4) % 3u) << 23 | (amx_rand() & 0x7fffffu);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case 2: {
        uint32_t u = amx_rand();
        if ((u & 0x7f800000u) == 0x7f800000u)
            u &= 0xbfffffffu;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default:
        return (float)((int32_t)amx_rand() >> 8) * 0x1p-20f;
    }
}

static void check_fma(void)
{
    long bad = 0;
    for (long i = 0; i < 2000000; i++) {
        uint16_t a = amx_rand_bf16(), b = amx_rand_bf16();
        float c = rand_acc(f32_of(a) * f32_of(b));
        float got = sleapc__native_amx_model_fma(c, a, b), want = amx_ref_fma(c, a, b);
        if (bits_of(got) != bits_of(want) && bad++ < 5)
            CHECK_MSG(0, "fma(%a, %a, %a): model %a, reference %a", (double)c, (double)f32_of(a),
                      (double)f32_of(b), (double)got, (double)want);
    }
    /* The edges by hand: a denormal input reads as zero, a product below
     * float's range flushes, a sum tiny only before rounding does not. */
    CHECK(sleapc__native_amx_model_fma(1.0f, 0x0001, 0x3f80) == 1.0f);
    CHECK(bits_of(sleapc__native_amx_model_fma(0x1p-140f, 0x3f80, 0x3f80)) == bits_of(1.0f));
    CHECK(sleapc__native_amx_model_fma(0.0f, 0x2000, 0x2000) == 0x1p-126f);  /* 2^-63 * 2^-63 */
    CHECK(bits_of(sleapc__native_amx_model_fma(0.0f, 0x1f80, 0x1f80)) == 0); /* 2^-128: FTZ */
    /* 2^-126 - 2^-152 rounds to 2^-126: tiny before rounding only, kept;
     * 2^-126 - 2^-150 is exact, tiny, flushed. */
    CHECK(sleapc__native_amx_model_fma(0x1p-126f, 0x1980, 0x9980) == 0x1p-126f);
    CHECK(bits_of(sleapc__native_amx_model_fma(0x1p-126f, 0x1a00, 0x9a00)) == 0);
    CHECK(amx_ref_fma(0x1p-126f, 0x1980, 0x9980) == 0x1p-126f);
    CHECK(bits_of(amx_ref_fma(0x1p-126f, 0x1a00, 0x9a00)) == 0);
    CHECK(bits_of(sleapc__native_amx_model_fma(-0.0f, 0x8000, 0x3f80)) == 0x80000000u);
    CHECK(bits_of(sleapc__native_amx_model_fma(-0.0f, 0x0000, 0x3f80)) == 0);
    printf("fma: %ld of 2000000 differ from the reference\n", bad);
    CHECK(bad == 0);
}

static uint16_t clamp_exp(uint16_t v)
{
    return ((v >> 7) & 0xff) > 185 ? (uint16_t)((v & 0x807f) | (185 << 7)) : v;
}

static void check_tile(void)
{
    uint16_t a[512], b[512];
    float c[256], want[256];
    for (int rep = 0; rep < 50; rep++) {
        /* Finite all the way: exponents up to 2^58, sums far from 2^128. */
        for (int i = 0; i < 512; i++) {
            a[i] = clamp_exp(amx_rand_bf16());
            b[i] = clamp_exp(amx_rand_bf16());
        }
        for (int i = 0; i < 256; i++) {
            c[i] = rand_acc(1.0f);
            c[i] = want[i] = fabsf(c[i]) > 0x1p100f ? c[i] * 0x1p-60f : c[i];
        }
        sleapc__native_amx_model_tdpbf16ps(c, a, b);
        for (int m = 0; m < 16; m++)
            for (int k = 0; k < 16; k++)
                for (int n = 0; n < 16; n++) {
                    float *t = &want[m * 16 + n];
                    *t = amx_ref_fma(*t, a[m * 32 + 2 * k], b[k * 32 + 2 * n]);
                    *t = amx_ref_fma(*t, a[m * 32 + 2 * k + 1], b[k * 32 + 2 * n + 1]);
                }
        CHECK(memcmp(c, want, sizeof c) == 0);
    }
}

static int64_t up16(int64_t v)
{
    return (v + 15) / 16 * 16;
}

/* C = A B on the model for an m x k by k x n product: bit for bit against
 * the plain loop, within (2 kp) u sum|a b| of the fp64 sum. */
static void check_gemm(int64_t m, int64_t n, int64_t k)
{
    int64_t kp = up16((k + 1) / 2), mp = up16(m), np = up16(n);
    uint16_t *a = calloc((size_t)(mp * 2 * kp), 2), *b = calloc((size_t)(kp * np * 2), 2);
    float *c = calloc((size_t)(mp * np), 4);
    void *ctx = sleapc__aligned_alloc(NATIVE_AMX_CTX_BYTES);
    for (int64_t i = 0; i < m; i++)
        for (int64_t q = 0; q < k; q++)
            a[i * 2 * kp + q] =
                sleapc__native_amx_bf16((float)((int32_t)amx_rand() >> 8) * 0x1p-23f);
    for (int64_t q = 0; q < k; q++)
        for (int64_t j = 0; j < n; j++)
            b[(q / 2) * np * 2 + j * 2 + q % 2] =
                sleapc__native_amx_bf16((float)((int32_t)amx_rand() >> 8) * 0x1p-23f);
    sleapc__native_amx_gemm(sleapc__native_amx_model_ops(), ctx, mp, np, kp, a, 2 * kp * 2, b,
                            np * 4, c, np);
    long exact = 0, within = 0;
    for (int64_t i = 0; i < mp; i++)
        for (int64_t j = 0; j < np; j++) {
            float acc = 0.0f;
            double sum = 0, abs_sum = 0;
            for (int64_t p = 0; p < kp; p++)
                for (int s = 0; s < 2; s++) {
                    uint16_t x = a[i * 2 * kp + 2 * p + s], y = b[p * np * 2 + j * 2 + s];
                    acc = amx_ref_fma(acc, x, y);
                    sum += (double)f32_of(x) * f32_of(y);
                    abs_sum += fabs((double)f32_of(x) * f32_of(y));
                }
            float got = c[i * np + j];
            exact += bits_of(got) == bits_of(acc);
            within += fabs(got - sum) <= 2.0 * (double)kp * 0x1p-24 * abs_sum * 1.001;
        }
    CHECK_MSG(exact == mp * np && within == mp * np,
              "gemm %lld x %lld x %lld: %ld of %lld bit for bit, %ld within the bound",
              (long long)m, (long long)n, (long long)k, exact, (long long)(mp * np), within);
    free(a);
    free(b);
    free(c);
    sleapc__aligned_free(ctx);
}

/* fp64 conv ("same", PyTorch padding) of the bf16-rounded operands; abs:
 * the sum of |terms| per output, for the bound. */
static void ref_conv(const float *x, int bn, int ci_n, int h, int w, const float *wt,
                     const float *bias, int co_n, int k, double *out, double *abs)
{
    int pad = (k - 1) / 2;
    for (int bi = 0; bi < bn; bi++)
        for (int co = 0; co < co_n; co++)
            for (int y = 0; y < h; y++)
                for (int xx = 0; xx < w; xx++) {
                    double s = 0, sa = 0;
                    for (int ci = 0; ci < ci_n; ci++)
                        for (int ky = 0; ky < k; ky++)
                            for (int kx = 0; kx < k; kx++) {
                                int iy = y + ky - pad, ix = xx + kx - pad;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                double t =
                                    (double)sleapc__bf16_round(
                                        x[((bi * ci_n + ci) * h + iy) * w + ix]) *
                                    sleapc__bf16_round(wt[((co * ci_n + ci) * k + ky) * k + kx]);
                                s += t;
                                sa += fabs(t);
                            }
                    size_t o = (size_t)(((bi * co_n + co) * h + y) * w + xx);
                    out[o] = s + bias[co];
                    abs[o] = sa + fabs(bias[co]);
                }
}

static float rand_unit(void)
{
    return (float)((int32_t)amx_rand() >> 8) * 0x1p-23f;
}

static void check_conv(int bn, int ci_n, int co_n, int k, int h, int w, bool relu, int n_parts,
                       sleapc_threadpool *tp)
{
    size_t nx = (size_t)(bn * ci_n * h * w), nw = (size_t)(co_n * ci_n * k * k),
           ny = (size_t)(bn * co_n * h * w);
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *bias = malloc((size_t)co_n * 4),
          *y = malloc(ny * 4);
    double *ref = malloc(ny * 8), *abs = malloc(ny * 8);
    for (size_t i = 0; i < nx; i++)
        x[i] = rand_unit();
    for (size_t i = 0; i < nw; i++)
        wt[i] = rand_unit();
    for (int i = 0; i < co_n; i++)
        bias[i] = rand_unit();
    ref_conv(x, bn, ci_n, h, w, wt, bias, co_n, k, ref, abs);
    native_amx_conv *cv = NULL;
    CHECK_OK(sleapc__native_amx_conv_create(sleapc__native_amx_model_ops(), ci_n, co_n, k, k, wt,
                                            bias, relu, &cv));
    /* The input as n_parts channel slices in their own buffers. */
    native_conv_src src = {.n = n_parts};
    float *parts[NATIVE_CONV_MAX_PARTS] = {0};
    int c0 = 0;
    for (int p = 0; p < n_parts; p++) {
        int c = p + 1 < n_parts ? ci_n / n_parts : ci_n - c0;
        parts[p] = malloc((size_t)(bn * c * h * w) * 4);
        for (int bi = 0; bi < bn; bi++)
            memcpy(parts[p] + (size_t)(bi * c * h * w), x + (size_t)((bi * ci_n + c0) * h * w),
                   (size_t)(c * h * w) * 4);
        src.data[p] = parts[p];
        src.c[p] = c;
        c0 += c;
    }
    int n_threads = sleapc__threadpool_n_threads(tp);
    void *scratch = sleapc__aligned_alloc(sleapc__native_amx_conv_scratch_size(cv, n_threads));
    sleapc__native_amx_conv_run(cv, tp, &src, bn, h, w, y, scratch);
    int kp = (int)up16((int64_t)k * k * ((ci_n + 1) / 2));
    size_t bad = 0, at = 0;
    for (size_t i = 0; i < ny; i++) {
        double want = relu && ref[i] < 0 ? 0 : ref[i];
        double tol = (2.0 * kp + 1) * 0x1p-24 * abs[i] * 1.001;
        if (!(fabs(y[i] - want) <= tol) && bad++ == 0)
            at = i;
    }
    CHECK_MSG(bad == 0,
              "conv %dx%d %d -> %d, %dx%d x %d, %d parts: %zu outside the bound, "
              "first %zu: %g vs %g",
              k, k, ci_n, co_n, h, w, bn, n_parts, bad, at, bad ? (double)y[at] : 0.0,
              bad ? ref[at] : 0.0);
    sleapc__aligned_free(scratch);
    sleapc__native_amx_conv_destroy(cv);
    for (int p = 0; p < n_parts; p++)
        free(parts[p]);
    free(x);
    free(wt);
    free(bias);
    free(y);
    free(ref);
    free(abs);
}

static void check_linear(int bn, int n_in, int n_out)
{
    float *x = malloc((size_t)(bn * n_in) * 4), *wt = malloc((size_t)(n_out * n_in) * 4),
          *bias = malloc((size_t)n_out * 4), *y = malloc((size_t)(bn * n_out) * 4);
    for (int i = 0; i < bn * n_in; i++)
        x[i] = rand_unit();
    for (int i = 0; i < n_out * n_in; i++)
        wt[i] = rand_unit();
    for (int i = 0; i < n_out; i++)
        bias[i] = rand_unit();
    native_amx_linear *l = NULL;
    CHECK_OK(sleapc__native_amx_linear_create(sleapc__native_amx_model_ops(), n_in, n_out, wt, bias,
                                              false, &l));
    void *scratch = sleapc__aligned_alloc(sleapc__native_amx_linear_scratch_size(l, bn));
    sleapc__native_amx_linear_run(l, x, bn, y, scratch);
    int bad = 0;
    for (int r = 0; r < bn; r++)
        for (int o = 0; o < n_out; o++) {
            double s = bias[o], sa = fabs(bias[o]);
            for (int i = 0; i < n_in; i++) {
                double t = (double)sleapc__bf16_round(x[r * n_in + i]) *
                           sleapc__bf16_round(wt[o * n_in + i]);
                s += t;
                sa += fabs(t);
            }
            bad += !(fabs(y[r * n_out + o] - s) <= (n_in + 34.0) * 0x1p-24 * sa * 1.001);
        }
    CHECK_MSG(bad == 0, "linear %d x %d -> %d: %d outside the bound", bn, n_in, n_out, bad);
    sleapc__aligned_free(scratch);
    sleapc__native_amx_linear_destroy(l);
    free(x);
    free(wt);
    free(bias);
    free(y);
}

int main(void)
{
    check_fma();
    check_tile();
    const int64_t shapes[][3] = {{1, 1, 1},    {16, 16, 32}, {17, 33, 31}, {45, 20, 70},
                                 {32, 64, 97}, {5, 50, 200}, {64, 48, 33}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_gemm(shapes[i][0], shapes[i][1], shapes[i][2]);
    sleapc_threadpool *tp = NULL;
    CHECK_OK(sleapc__threadpool_create(2, &tp));
    check_conv(1, 1, 1, 1, 1, 1, false, 1, tp);
    check_conv(2, 3, 20, 3, 7, 9, true, 1, tp);
    check_conv(1, 5, 33, 1, 11, 6, false, 2, tp);
    check_conv(1, 24, 17, 3, 12, 13, true, 3, tp);
    check_conv(2, 7, 16, 5, 9, 10, false, 1, tp);
    check_conv(1, 40, 40, 3, 3, 50, true, 2, tp);
    sleapc__threadpool_destroy(tp);
    check_linear(1, 1, 1);
    check_linear(3, 37, 5);
    check_linear(20, 128, 40);
    return test_finish();
}
