/* AMX bf16 tiles for the native backend's --precision bf16: one tiling
 * driver (native_amx_gemm.c, plain C) over a small table of tile operations
 * with two implementations: the real instructions (native_amx_tiles.c, where
 * the compiler, the CPU and the OS allow them) and an exact software model of
 * them (native_amx_model.c), which runs the same driver on every CPU.
 *
 * Every tile is configured as palette 1's largest: 16 rows of 64 bytes (16
 * fp32, or 16 bf16 pairs). The driver keeps a 2 x 2 block of C tiles:
 * C tile c = 2i + j (tmm0..3) takes A tile i (tmm4, tmm5) times B tile j
 * (tmm6, tmm7). */
#ifndef SLEAPC_BACKENDS_NATIVE_AMX_H
#define SLEAPC_BACKENDS_NATIVE_AMX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/native/native_kernels.h"
#include "core/threadpool.h"
#include "sleapc/sleapc.h"

#define NATIVE_AMX_ROWS 16  /* rows of a tile */
#define NATIVE_AMX_PAIRS 16 /* bf16 pairs (or fp32) in a tile row of 64 bytes */
/* The model's tile file: 8 tiles of 1 KiB. The real instructions keep none. */
#define NATIVE_AMX_CTX_BYTES (8 * 1024)

/* The tile operations. ctx: NATIVE_AMX_CTX_BYTES, 64-byte aligned, one per
 * thread (the model's tiles; the real tiles are the thread's registers).
 * Strides are in bytes. Between config and release one thread uses them. */
typedef struct native_amx_ops {
    const char *name;
    void (*config)(void *ctx);                                          /* LDTILECFG */
    void (*zero_c)(void *ctx, int c);                                   /* TILEZERO tmm c */
    void (*load_a)(void *ctx, int i, const void *base, int64_t stride); /* TILELOADD tmm 4+i */
    void (*load_b)(void *ctx, int j, const void *base, int64_t stride); /* TILELOADD tmm 6+j */
    void (*dot)(void *ctx, int c); /* TDPBF16PS tmm c, tmm 4+c/2, tmm 6+c%2 */
    void (*store_c)(void *ctx, int c, void *base, int64_t stride); /* TILESTORED tmm c */
    void (*release)(void *ctx);                                    /* TILERELEASE */
} native_amx_ops;

/* The software model (every CPU). */
const native_amx_ops *sleapc__native_amx_model_ops(void);
/* The real instructions: NULL unless this build has them, cpuid reports
 * AMX-TILE and AMX-BF16 with the OS saving the tile state, and Linux granted
 * the process the tile data (arch_prctl ARCH_REQ_XCOMP_PERM, asked once). */
const native_amx_ops *sleapc__native_amx_hw_ops(void);
/* What the native backend's bf16 runs on: the model when the developer
 * switch SLEAPC_AMX_MODEL is on, else the real tiles, else NULL. */
const native_amx_ops *sleapc__native_amx_ops(void);

/* One TDPBF16PS step of the model on element C[m][n]: acc + a * b as one
 * fp32 FMA (a, b bf16 bits), rounding to nearest even once, with denormal
 * inputs (a, b and acc) read as zero and a result that is tiny after
 * rounding flushed to a zero of its sign. */
float sleapc__native_amx_model_fma(float acc, uint16_t a, uint16_t b);
/* TDPBF16PS on whole tiles: c[16][16] fp32, a[16][32] bf16 (16 pairs a
 * row), b[16][32] bf16 (row k: the pairs of K rows 2k, 2k + 1 for each of
 * 16 columns). */
void sleapc__native_amx_model_tdpbf16ps(float *c, const uint16_t *a, const uint16_t *b);

/* C = A B with the tiles of ops: A m x 2kp bf16 (rows lda bytes apart), B
 * in pair layout (kp rows of n pairs, ldb bytes apart), C m x n fp32 (ldc
 * floats apart); m and n multiples of 16, kp of 16. Each C element is
 * summed from +0 over its pairs in order, as TDPBF16PS orders them: the
 * first of each pair, then the second. */
void sleapc__native_amx_gemm(const native_amx_ops *ops, void *ctx, int64_t m, int64_t n, int64_t kp,
                             const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
                             float *c, int64_t ldc);

/* x rounded to bfloat16 (nearest, ties to even; NaN kept quiet), its bits:
 * as sleapc__bf16_round. */
uint16_t sleapc__native_amx_bf16(float x);

/* A stride-1 "same" convolution (PyTorch padding, as native_conv) as a GEMM
 * on the tiles: C (c_out x pixels) = W (c_out x K) X (K x pixels), with K
 * running over kernel taps, then pairs of input channels. Weights are
 * rounded to bf16 and packed at create; input values are rounded to bf16 as
 * they are staged; sums fp32, then the bias, then ReLU. */
typedef struct native_amx_conv native_amx_conv;

sleapc_status sleapc__native_amx_conv_create(const native_amx_ops *ops, int c_in, int c_out, int kh,
                                             int kw, const float *weight, const float *bias,
                                             bool relu, native_amx_conv **out);
void sleapc__native_amx_conv_destroy(native_amx_conv *cv);
size_t sleapc__native_amx_conv_scratch_size(const native_amx_conv *cv, int n_threads);
void sleapc__native_amx_conv_run(const native_amx_conv *cv, sleapc_threadpool *tp,
                                 const native_conv_src *src, int64_t b, int64_t h, int64_t w,
                                 float *dst, void *scratch);

/* A native_conv (native_kernels.h) that runs as native_amx_conv: the
 * backend's bf16 convs where it has AMX tiles (or forces the model). */
sleapc_status sleapc__native_conv_create_amx(const native_amx_ops *ops, int c_in, int c_out, int kh,
                                             int kw, const float *weight, const float *bias,
                                             bool relu, native_conv **out);

/* A dense layer (b, n_in) -> (b, n_out) on the tiles, weight (n_out, n_in)
 * packed at create in pair layout, inputs rounded to bf16 as staged. */
typedef struct native_amx_linear native_amx_linear;

sleapc_status sleapc__native_amx_linear_create(const native_amx_ops *ops, int n_in, int n_out,
                                               const float *weight, const float *bias, bool relu,
                                               native_amx_linear **out);
void sleapc__native_amx_linear_destroy(native_amx_linear *l);
/* Scratch bytes for a batch of b rows (64-byte aligned when given). */
size_t sleapc__native_amx_linear_scratch_size(const native_amx_linear *l, int64_t b);
void sleapc__native_amx_linear_run(const native_amx_linear *l, const float *src, int64_t b,
                                   float *dst, void *scratch);

#endif
