/* The tiling driver of the AMX kernels: the one loop nest both tile
 * implementations (real and model) run, so that what the model checks on
 * every CPU is the code AMX machines run. */
#include "backends/native/native_amx.h"

/* Blocks of 2 x 2 C tiles (32 x 32 floats), the K loop innermost: each step
 * loads two A and two B tiles for four TDPBF16PS. At the edges of M or N a
 * block has one tile row or column. */
void sleapc__native_amx_gemm(const native_amx_ops *ops, void *ctx, int64_t m, int64_t n, int64_t kp,
                             const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
                             float *c, int64_t ldc)
{
    const int64_t t = NATIVE_AMX_ROWS;
    ops->config(ctx);
    for (int64_t i0 = 0; i0 < m; i0 += 2 * t) {
        int ni = m - i0 > t ? 2 : 1;
        for (int64_t j0 = 0; j0 < n; j0 += 2 * t) {
            int nj = n - j0 > t ? 2 : 1;
            for (int q = 0; q < 4; q++)
                if (q / 2 < ni && q % 2 < nj)
                    ops->zero_c(ctx, q);
            for (int64_t k = 0; k < kp; k += NATIVE_AMX_PAIRS) {
                for (int i = 0; i < ni; i++)
                    ops->load_a(ctx, i, (const char *)a + (i0 + i * t) * lda + k * 4, lda);
                for (int j = 0; j < nj; j++)
                    ops->load_b(ctx, j, (const char *)b + k * ldb + (j0 + j * t) * 4, ldb);
                for (int q = 0; q < 4; q++)
                    if (q / 2 < ni && q % 2 < nj)
                        ops->dot(ctx, q);
            }
            for (int q = 0; q < 4; q++)
                if (q / 2 < ni && q % 2 < nj)
                    ops->store_c(ctx, q, c + (i0 + (q / 2) * t) * ldc + j0 + (q % 2) * t,
                                 ldc * (int64_t)sizeof(float));
        }
    }
    ops->release(ctx);
}
