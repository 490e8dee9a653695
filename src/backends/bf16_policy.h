/* Mixed precision for --precision bf16: which nodes compute in bfloat16 and
 * where values are rounded to it, decided once from the graph so that every
 * backend (oneDNN's bf16 kernels, the native backend's exact emulation)
 * rounds at the same points.
 *
 * A node that computes in bf16 reads bf16 sources and weights and
 * accumulates in float32 (bias float32). Values are rounded to bf16 when a
 * bf16 node writes them and when a bf16 node reads a float32 value. Chosen by
 * measurement against float32 on the reference cases (bench/README.md): the
 * first convolution (the image in [0, 1] has more significant bits than bf16
 * keeps), every head, and the last decoder block before each head (whose
 * rounding lands directly on the confidence maps) stay in float32. */
#ifndef SLEAPC_BACKENDS_BF16_POLICY_H
#define SLEAPC_BACKENDS_BF16_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"
#include "sleapc/sleapc.h"

/* How far bf16 heads may be from float32 (relative L2) on a model that
 * tolerates bf16. bf16 keeps 8 significant bits (unit roundoff u = 2^-8,
 * 3.9e-3): the ~10-20 rounded layers between the float32 first convolution
 * and the float32 last block add up, if independent, to sqrt(L) * u ~ 1.2e-2
 * to 1.7e-2. Measured on the reference models that are not multi-class:
 * 2.8e-3 to 1.9e-2 (test_bf16_heads), under this budget. A model beyond it
 * amplifies rounding itself (measured: the multi-class models, 2.6e-2 to
 * 1.3e-1), and its keypoints can move by whole peaks. */
#define SLEAPC_BF16_HEAD_BUDGET 2e-2

/* The same bound for fp16 storage (Vulkan --precision fp16): every weight
 * and every stored activation is rounded to binary16 (u = 2^-11), first
 * convolution and heads included, arithmetic stays float32. Each layer adds
 * its weights' and its output's rounding, independent, so over L layers
 * sqrt(2L + 1) * u: ~3.8e-3 for L = 30 (the deepest UNet here with its
 * heads); the budget allows the same amplification by ~2 as bf16's. The
 * peak budget below is shared: it bounds what any rounding may move.
 *
 * fp16 arithmetic (Vulkan devices with shaderFloat16): the convolutions
 * also round each product w x of two binary16 values to binary16 once
 * (relative error d <= u, the exact product fits float32) and accumulate in
 * float32. A dot product of length K then moves by sum_k w_k x_k d_k, at
 * most sqrt(K) u max|w_k x_k| if the d_k are independent: the same form
 * and size as its weights' rounding (sum_k w_k x_k e_k), so each
 * convolution adds one more u in quadrature, sqrt(2L + C + 1) u for C
 * convolutions among the L layers, at most sqrt(3L + 1) u: ~4.7e-3 for
 * L = 30. The same budget holds with an amplification of ~1.7 instead of 2;
 * the reference networks amplify storage rounding by at most 1.3 (measured
 * on lavapipe: centered instance 4.9e-3 storage, 6.2e-3 with arithmetic;
 * arithmetic over storage 1.0-1.26, sqrt(3/2) = 1.22 predicted), so 8e-3
 * is kept for both. (Products below binary16's normal range, 6.1e-5, keep
 * an absolute error of 3e-8 where the device keeps fp16 subnormals; one
 * that flushes them moves more, which the first-batch check measures.) */
#define SLEAPC_FP16_HEAD_BUDGET 8e-3

/* The share of keypoints bf16 may be expected to move by a grid cell or
 * drop (layers/bf16_fragility.h): the goal of 99.5% of points within 0.5 px
 * of float32 leaves 0.5% for such jumps. */
#define SLEAPC_BF16_PEAK_BUDGET 5e-3

/* Which nodes stay float32 (bits may be or'ed). */
enum {
    SLEAPC_BF16_KEEP_FIRST = 1u,  /* the convolutions that read the image */
    SLEAPC_BF16_KEEP_HEADS = 2u,  /* the convolutions that write a graph output */
    SLEAPC_BF16_KEEP_LAST = 4u,   /* each head's last decoder block */
    SLEAPC_BF16_KEEP_DECODER = 8u, /* every convolution from the first upsampling on */
    SLEAPC_BF16_KEEP_DEFAULT = 7u,
    SLEAPC_BF16_KEEP_ALL = 15u
};

typedef struct sleapc_bf16_plan {
    int n;
    bool *compute;   /* node computes in bf16 (convolutions only) */
    bool *value;     /* node's output is stored as bf16 */
    bool *rounded;   /* node's output may be rounded where it is written: it
                        is stored as bf16, or every reader converts it (a
                        bf16 node reading a float32 value that is not
                        rounded reads a rounded copy) */
} sleapc_bf16_plan;

/* Decide for graph g keeping `keep` in float32. */
sleapc_status sleapc__bf16_plan_make(const sleapc_graph *g, unsigned keep, sleapc_bf16_plan *out);
void sleapc__bf16_plan_free(sleapc_bf16_plan *p);

/* The keep bits from SLEAPC_BF16_KEEP (a number) when set, else the default:
 * lets a measurement try other splits without a rebuild. */
unsigned sleapc__bf16_keep_default(void);
/* keep when non-zero (a caller's choice), else sleapc__bf16_keep_default(). */
unsigned sleapc__bf16_keep_or_default(unsigned keep);

/* The share of g's FLOPs (convolutions) that plan p computes in bf16 for
 * one (h, w) input; 0 when the shapes cannot be inferred. */
double sleapc__bf16_plan_flop_share(const sleapc_graph *g, const sleapc_bf16_plan *p, int64_t h,
                                    int64_t w);

/* Round float32 to the nearest bfloat16 (ties to even), kept as float32. */
float sleapc__bf16_round(float x);
void sleapc__bf16_round_array(float *x, int64_t n);

#endif
