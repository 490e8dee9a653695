/* The real AMX tiles against their software model, where this build, the
 * CPU and the OS have them (skipped otherwise, saying which is missing):
 * TDPBF16PS on whole tiles, the tiling driver and a convolution, bit for bit
 * where the SDM's pseudo-code fixes the result (one FMA per product, nearest
 * even, in its order), within a stated bound where it leaves a choice
 * (check_tiles: when a result counts as tiny for FTZ). No input here makes
 * an infinity or a NaN (whose payloads it leaves open too). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amx_test_ref.h"
#include "backends/native/native_amx.h"
#include "core/alloc.h"
#include "core/cpu_id.h"
#include "test_util.h"

static long compare(const float *got, const float *want, size_t n)
{
    return memcmp(got, want, n * sizeof *got) == 0 ? 0 : 1;
}

/* One TDPBF16PS through an ops table: c += a b on tiles in memory. */
static void tile_op(const native_amx_ops *ops, void *ctx, float *c, const uint16_t *a,
                    const uint16_t *b)
{
    ops->config(ctx);
    ops->zero_c(ctx, 0);
    ops->load_a(ctx, 0, a, 64);
    ops->load_b(ctx, 0, b, 64);
    ops->dot(ctx, 0);
    ops->store_c(ctx, 0, c, 64);
    ops->release(ctx);
}

/* A bf16 with an exponent in [2^-20, 2^20]: no product or partial sum of
 * 32 of them comes near float's denormals (the smallest nonzero partial sum
 * is above 2^-60) or its overflow. */
static uint16_t rand_mid_bf16(void)
{
    uint32_t r = amx_rand();
    return (uint16_t)(((r & 1) << 15) | ((107 + (r >> 1) % 41) << 7) | ((r >> 8) & 0x7f));
}

/* A bf16 with exponents up to 2^58 (products and sums stay finite),
 * denormals and the smallest normals included. */
static uint16_t rand_edge_bf16(void)
{
    uint16_t v = amx_rand_bf16();
    return ((v >> 7) & 0xff) > 185 ? (uint16_t)((v & 0x807f) | (185 << 7)) : v;
}

/* Where the pseudo-code fixes every result (normal range throughout: one
 * FMA per product, nearest even), bit for bit. Where denormals and tiny
 * results come in, the text says DAZ and FTZ but not when a result counts as
 * tiny (x86 arithmetic decides after rounding, which the model follows): an
 * element may differ there by the flushes of its 32 steps, each below
 * 2^-126, carried through the later sums (each within u of exact), so by at
 * most 32 * 2^-126 * (1 + 2^-23)^32 + 2 * 32 * u * sum |a b|. */
static void check_tiles(const native_amx_ops *hw, const native_amx_ops *model, void *ctx)
{
    uint16_t a[512], b[512];
    float c_hw[256], c_model[256];
    long bad = 0, edge_differ = 0, edge_beyond = 0;
    for (int rep = 0; rep < 4000; rep++) {
        bool edge = rep % 2;
        for (int i = 0; i < 512; i++) {
            a[i] = edge ? rand_edge_bf16() : rand_mid_bf16();
            b[i] = edge ? rand_edge_bf16() : rand_mid_bf16();
        }
        tile_op(hw, ctx, c_hw, a, b);
        tile_op(model, ctx, c_model, a, b);
        if (!edge) {
            bad += compare(c_hw, c_model, 256);
            continue;
        }
        edge_differ += compare(c_hw, c_model, 256);
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 16; n++) {
                double abs_sum = 0;
                for (int k = 0; k < 32; k++) {
                    uint32_t x = (uint32_t)a[m * 32 + k] << 16,
                             y = (uint32_t)b[(k / 2) * 32 + 2 * n + k % 2] << 16;
                    float fx, fy;
                    memcpy(&fx, &x, 4);
                    memcpy(&fy, &y, 4);
                    abs_sum += fabs((double)fx * fy);
                }
                double tol = 32 * 0x1p-126 * 1.0001 + 64 * 0x1p-24 * abs_sum;
                edge_beyond += !(fabs((double)c_hw[m * 16 + n] - c_model[m * 16 + n]) <= tol);
            }
    }
    printf("TDPBF16PS: %ld of 2000 normal-range tiles differ from the model; denormal and "
           "tiny ranges: %ld of 2000 tiles differ, %ld elements beyond the bound\n",
           bad, edge_differ, edge_beyond);
    CHECK(bad == 0 && edge_beyond == 0);
}

static void check_gemm(const native_amx_ops *hw, const native_amx_ops *model, void *ctx)
{
    const int64_t m = 48, n = 80, kp = 48;
    uint16_t *a = malloc((size_t)(m * 2 * kp) * 2), *b = malloc((size_t)(kp * n * 2) * 2);
    float *c1 = malloc((size_t)(m * n) * 4), *c2 = malloc((size_t)(m * n) * 4);
    for (int64_t i = 0; i < m * 2 * kp; i++)
        a[i] = sleapc__native_amx_bf16((float)((int32_t)amx_rand() >> 8) * 0x1p-23f);
    for (int64_t i = 0; i < kp * n * 2; i++)
        b[i] = sleapc__native_amx_bf16((float)((int32_t)amx_rand() >> 8) * 0x1p-23f);
    sleapc__native_amx_gemm(hw, ctx, m, n, kp, a, 2 * kp * 2, b, n * 4, c1, n);
    sleapc__native_amx_gemm(model, ctx, m, n, kp, a, 2 * kp * 2, b, n * 4, c2, n);
    CHECK_MSG(compare(c1, c2, (size_t)(m * n)) == 0, "gemm: real tiles differ from the model");
    free(a);
    free(b);
    free(c1);
    free(c2);
}

static void check_conv(const native_amx_ops *hw, const native_amx_ops *model)
{
    const int ci = 13, co = 21, h = 11, w = 17;
    float *x = malloc((size_t)(ci * h * w) * 4), *wt = malloc((size_t)(co * ci * 9) * 4);
    float *bias = malloc((size_t)co * 4), *y1 = malloc((size_t)(co * h * w) * 4),
          *y2 = malloc((size_t)(co * h * w) * 4);
    for (int i = 0; i < ci * h * w; i++)
        x[i] = (float)((int32_t)amx_rand() >> 8) * 0x1p-23f;
    for (int i = 0; i < co * ci * 9; i++)
        wt[i] = (float)((int32_t)amx_rand() >> 8) * 0x1p-23f;
    for (int i = 0; i < co; i++)
        bias[i] = (float)i * 0.01f;
    native_amx_conv *c_hw = NULL, *c_model = NULL;
    CHECK_OK(sleapc__native_amx_conv_create(hw, ci, co, 3, 3, wt, bias, true, &c_hw));
    CHECK_OK(sleapc__native_amx_conv_create(model, ci, co, 3, 3, wt, bias, true, &c_model));
    sleapc_threadpool *tp = NULL;
    CHECK_OK(sleapc__threadpool_create(2, &tp));
    void *scratch = sleapc__aligned_alloc(sleapc__native_amx_conv_scratch_size(c_hw, 2));
    native_conv_src src = {.n = 1, .data = {x}, .c = {ci}};
    sleapc__native_amx_conv_run(c_hw, tp, &src, 1, h, w, y1, scratch);
    sleapc__native_amx_conv_run(c_model, tp, &src, 1, h, w, y2, scratch);
    CHECK_MSG(compare(y1, y2, (size_t)(co * h * w)) == 0, "conv: real tiles differ from the model");
    sleapc__aligned_free(scratch);
    sleapc__threadpool_destroy(tp);
    sleapc__native_amx_conv_destroy(c_hw);
    sleapc__native_amx_conv_destroy(c_model);
    free(x);
    free(wt);
    free(bias);
    free(y1);
    free(y2);
}

int main(void)
{
    const native_amx_ops *hw = sleapc__native_amx_hw_ops();
    if (!hw) {
        printf("skipped: %s\n",
               sleapc__cpu_has_amx_bf16()
                   ? "this build has no AMX tiles (the compiler lacked -mamx-tile -mamx-bf16), "
                     "or Linux refused the tile data (arch_prctl ARCH_REQ_XCOMP_PERM)"
                   : "this CPU has no AMX-TILE and AMX-BF16, or the OS does not save the tile "
                     "state");
        return 77;
    }
    const native_amx_ops *model = sleapc__native_amx_model_ops();
    void *ctx = sleapc__aligned_alloc(NATIVE_AMX_CTX_BYTES);
    check_tiles(hw, model, ctx);
    check_gemm(hw, model, ctx);
    check_conv(hw, model);
    sleapc__aligned_free(ctx);
    return test_finish();
}
