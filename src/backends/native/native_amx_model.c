/* The software model of the AMX tile instructions, in plain C, so that the
 * tiling code of the AMX kernels runs and is tested on every CPU.
 *
 * TDPBF16PS as Intel's SDM (Vol. 2, "TDPBF16PS", as rendered at
 * felixcloutier.com/x86/tdpbf16ps) gives its operation:
 *     for m in 0 .. rows-1:
 *         tmp := tsrcdest.row[m]
 *         for k in 0 .. pairs-1:
 *             for n in 0 .. cols-1:
 *                 // FP32 FMA with DAZ, FTZ, RNE, and SAE.
 *                 // Note: Expand the outer 2x2 into two separate FMA operations
 *                 tmp.fp32[n] += make_fp32(tsrc1.row[m].bfloat16[2*k+0]) *
 *                                make_fp32(tsrc2.row[k].bfloat16[2*n+0])
 *                 tmp.fp32[n] += make_fp32(tsrc1.row[m].bfloat16[2*k+1]) *
 *                                make_fp32(tsrc2.row[k].bfloat16[2*n+1])
 *         write_row_and_zero(tsrcdest, m, tmp, colsb)
 * with the text: round to nearest even at each accumulation of the FMA,
 * denormal inputs treated as zero, denormal outputs flushed to zero, MXCSR
 * neither read nor written. So each step is one fused multiply-add, rounded
 * once; DAZ and FTZ are done here explicitly (MXCSR is not what decides
 * them), FTZ as x86 detects tininess: after rounding. NaN payloads are not
 * modelled (any NaN stands for the instruction's NaN). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/native/native_amx.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* DAZ: a denormal reads as a zero of its sign. */
static float daz(float x)
{
    uint32_t u = to_bits(x);
    return (u & 0x7f800000u) == 0 ? from_bits(u & 0x80000000u) : x;
}

uint16_t sleapc__native_amx_bf16(float x)
{
    uint32_t u = to_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return (uint16_t)((u | ((u & 0x007fffffu) ? 0x00400000u : 0u)) >> 16);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* The exact s + e (s = fl(s + e) from a TwoSum) rounded to 24 bits with an
 * unbounded exponent, nearest even; then FTZ and overflow. s is a 24-bit
 * midpoint only where the double sum rounded: e then says which side. */
static float round_exact(double s, double e)
{
    if (s == 0 || !isfinite(s))
        return (float)s;
    int ex;
    double m = frexp(fabs(s), &ex); /* [0.5, 1) */
    double sc = ldexp(m, 24);       /* [2^23, 2^24): the 24-bit grid at integers */
    double r = nearbyint(sc);
    if (sc - floor(sc) == 0.5 && e != 0)
        r = (e > 0) == (s > 0) ? floor(sc) + 1 : floor(sc);
    double v = ldexp(r, ex - 24);
    if (v < FLT_MIN)
        return s < 0 ? -0.0f : 0.0f; /* FTZ: tiny after rounding */
    if (v > FLT_MAX)
        return s < 0 ? -INFINITY : INFINITY;
    return (float)(s < 0 ? -v : v);
}

float sleapc__native_amx_model_fma(float acc, uint16_t a, uint16_t b)
{
    float fa = daz(from_bits((uint32_t)a << 16)), fb = daz(from_bits((uint32_t)b << 16));
    float c = daz(acc);
    if (!isfinite(fa) || !isfinite(fb) || !isfinite(c))
        return (float)((double)c + (double)fa * (double)fb); /* inf and NaN as IEEE */
    /* The product of two bf16 (8 significant bits each) is exact in double;
     * in the normal range of float it is exact there too, and so is any sum
     * of two floats that falls below it: one float addition is the FMA. */
    float p = fa * fb;
    if (p == 0 ? (fa == 0 || fb == 0) : fabsf(p) >= FLT_MIN && fabsf(p) <= FLT_MAX) {
        float r = c + p;
        return fabsf(r) < FLT_MIN ? (r < 0 ? -0.0f : r * 0.0f) : r;
    }
    /* The product leaves float's normal range: the exact sum by TwoSum. */
    double pd = (double)fa * (double)fb, cd = c;
    double s = cd + pd, bb = s - cd;
    double e = (cd - (s - bb)) + (pd - bb);
    return round_exact(s, e);
}

void sleapc__native_amx_model_tdpbf16ps(float *c, const uint16_t *a, const uint16_t *b)
{
    for (int m = 0; m < NATIVE_AMX_ROWS; m++)
        for (int k = 0; k < NATIVE_AMX_PAIRS; k++)
            for (int n = 0; n < NATIVE_AMX_PAIRS; n++) {
                float *t = &c[m * NATIVE_AMX_PAIRS + n];
                *t = sleapc__native_amx_model_fma(*t, a[m * 32 + 2 * k], b[k * 32 + 2 * n]);
                *t = sleapc__native_amx_model_fma(*t, a[m * 32 + 2 * k + 1], b[k * 32 + 2 * n + 1]);
            }
}

/* The tile file: tmm0..7, 1 KiB each. */
static unsigned char *tile(void *ctx, int t)
{
    return (unsigned char *)ctx + (size_t)t * 1024;
}

static void model_config(void *ctx)
{
    memset(ctx, 0, NATIVE_AMX_CTX_BYTES);
}

static void model_zero_c(void *ctx, int c)
{
    memset(tile(ctx, c), 0, 1024);
}

static void load(void *ctx, int t, const void *base, int64_t stride)
{
    for (int r = 0; r < NATIVE_AMX_ROWS; r++)
        memcpy(tile(ctx, t) + r * 64, (const unsigned char *)base + r * stride, 64);
}

static void model_load_a(void *ctx, int i, const void *base, int64_t stride)
{
    load(ctx, 4 + i, base, stride);
}

static void model_load_b(void *ctx, int j, const void *base, int64_t stride)
{
    load(ctx, 6 + j, base, stride);
}

static void model_dot(void *ctx, int c)
{
    float acc[256];
    uint16_t a[512], b[512];
    memcpy(acc, tile(ctx, c), sizeof acc);
    memcpy(a, tile(ctx, 4 + c / 2), sizeof a);
    memcpy(b, tile(ctx, 6 + c % 2), sizeof b);
    sleapc__native_amx_model_tdpbf16ps(acc, a, b);
    memcpy(tile(ctx, c), acc, sizeof acc);
}

static void model_store_c(void *ctx, int c, void *base, int64_t stride)
{
    for (int r = 0; r < NATIVE_AMX_ROWS; r++)
        memcpy((unsigned char *)base + r * stride, tile(ctx, c) + r * 64, 64);
}

static void model_release(void *ctx)
{
    (void)ctx;
}

static const native_amx_ops model_ops = {
    .name = "amx-model",
    .config = model_config,
    .zero_c = model_zero_c,
    .load_a = model_load_a,
    .load_b = model_load_b,
    .dot = model_dot,
    .store_c = model_store_c,
    .release = model_release,
};

const native_amx_ops *sleapc__native_amx_model_ops(void)
{
    return &model_ops;
}
