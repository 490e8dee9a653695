/* The real AMX tiles against their software model, where this build, the
 * CPU and the OS have them (skipped otherwise, saying which is missing):
 * TDPBF16PS on whole tiles with denormals, tiny and huge values, the tiling
 * driver on odd shapes and a convolution, all bit for bit. The model follows
 * the SDM's pseudo-code, which fixes every finite result (one FMA per
 * element, DAZ, FTZ, nearest even); only NaN payloads are left open, and no
 * input here makes a NaN or an infinity. */
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

static void check_tiles(const native_amx_ops *hw, const native_amx_ops *model, void *ctx)
{
    uint16_t a[512], b[512];
    float c_hw[256], c_model[256];
    long bad = 0;
    for (int rep = 0; rep < 2000; rep++) {
        for (int i = 0; i < 512; i++) {
            a[i] = amx_rand_bf16();
            b[i] = amx_rand_bf16();
        }
        /* Keep products and sums finite: no exponent above 2^58. */
        for (int i = 0; i < 512; i++) {
            if (((a[i] >> 7) & 0xff) > 185)
                a[i] = (uint16_t)((a[i] & 0x807f) | (185 << 7));
            if (((b[i] >> 7) & 0xff) > 185)
                b[i] = (uint16_t)((b[i] & 0x807f) | (185 << 7));
        }
        tile_op(hw, ctx, c_hw, a, b);
        tile_op(model, ctx, c_model, a, b);
        bad += compare(c_hw, c_model, 256);
    }
    printf("TDPBF16PS: %ld of 2000 tiles differ from the model\n", bad);
    CHECK(bad == 0);
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
