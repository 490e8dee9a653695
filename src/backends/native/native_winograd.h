/* Winograd F(m x m, 3 x 3) convolution for 3 x 3 stride-1 "same" convs, m =
 * 2, 4 or 6 (native_winograd.c): the same result as native_conv up to
 * rounding, with 9 m^2 / (m + 2)^2 as many multiplications per output
 * (2.25x, 4x, 5.1x fewer). */
#ifndef SLEAPC_BACKENDS_NATIVE_WINOGRAD_H
#define SLEAPC_BACKENDS_NATIVE_WINOGRAD_H

#include "backends/native/native_kernels.h"

/* Y = A^T [(G g G^T) . (B^T d B)] A for an alpha x alpha tile d (alpha =
 * m + 2); see native_wino_mats.c. */
typedef struct native_wino_mats {
    int m, alpha;
    float bt[8][8];  /* B^T, alpha x alpha */
    double g[8][3];  /* G, alpha x 3 (weights transform in double at create) */
    float at[6][8];  /* A^T, m x alpha */
} native_wino_mats;

/* The tables for m = 2, 4, 6; NULL otherwise. */
const native_wino_mats *sleapc__native_wino_mats(int m);

/* How much larger than the direct method's the rounding error of F(m) can
 * be: the largest sum, over one output, of the absolute products the
 * transforms form (|A||G||B| on all-ones data), over the direct method's 9.
 * Both methods' float32 error is at most about depth * 2^-24 times such a
 * sum of absolute values, so F(m)'s bound is this gain times the direct
 * one's (see README "Winograd convolutions"). */
double sleapc__native_wino_gain(int m);

typedef struct native_wino native_wino;

/* weight (c_out, c_in, 3, 3) OIHW, bias (c_out) or NULL: copied, weights
 * transformed now (in double, rounded once). uk NULL: the best set. */
struct native_ukernels;
sleapc_status sleapc__native_wino_create(const struct native_ukernels *uk, int m, int c_in,
                                         int c_out, const float *weight, const float *bias,
                                         bool relu, native_wino **out);
void sleapc__native_wino_destroy(native_wino *wg);
int sleapc__native_wino_m(const native_wino *wg);
/* Outputs rounded to bf16 as they are written (after the ReLU), as
 * sleapc__bf16_round: --precision bf16 on the float32 kernels. */
void sleapc__native_wino_set_round_bf16(native_wino *wg, bool round_bf16);
/* As for native_conv. */
size_t sleapc__native_wino_scratch_size(const native_wino *wg, int64_t h, int64_t w,
                                        int n_threads);
void sleapc__native_wino_run_parts(const native_wino *wg, sleapc_threadpool *tp,
                                   const native_conv_src *src, int64_t b, int64_t h, int64_t w,
                                   float *dst, void *scratch);

#endif
