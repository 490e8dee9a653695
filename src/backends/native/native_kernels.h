/* Compute kernels of the native backend. All activations are float32,
 * contiguous NCHW; weights use PyTorch layouts. Kernels split their work
 * over the thread pool (tp may be NULL: serial). None allocates when run. */
#ifndef SLEAPC_BACKENDS_NATIVE_KERNELS_H
#define SLEAPC_BACKENDS_NATIVE_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/threadpool.h"
#include "sleapc/sleapc.h"

/* k x k convolution, stride 1, "same" zero padding as PyTorch pads it
 * (top/left (k-1)/2, the rest bottom/right), bias, optional fused ReLU.
 * Weights are packed once at create; a conv is read-only afterwards, so
 * concurrent runs may share it, each with its own scratch. Inputs at most
 * NATIVE_MAX_WIDTH (2^24) columns wide. */
typedef struct native_conv native_conv;

/* weight: (c_out, c_in, kh, kw) OIHW; bias: (c_out) or NULL. Both copied.
 * Returns SLEAPC_ERR_INVALID_ARG (NULL weight or out; channels outside
 * 1..2^20, kernel outside 1..64) or SLEAPC_ERR_NOMEM; *out NULL then. */
sleapc_status sleapc__native_conv_create(int c_in, int c_out, int kh, int kw,
                                         const float *weight, const float *bias, bool relu,
                                         native_conv **out);
/* A 3x3 conv computed in bfloat16 with float32 sums (AVX512-BF16's
 * VDPBF16PS): weights and each input value rounded to bf16 (nearest, ties
 * to even) as it is read, products exact, sums and bias float32; outputs are
 * float32. SLEAPC_ERR_UNSUPPORTED on a CPU without AVX512-BF16. Run, scratch
 * and destroy as for any conv. */
sleapc_status sleapc__native_conv_create_bf16(int c_in, int c_out, const float *weight,
                                              const float *bias, bool relu, native_conv **out);
void sleapc__native_conv_destroy(native_conv *conv);
/* How later runs compute a 3x3 float32 conv: m = 0 the direct method, 2, 4
 * or 6 Winograd F(m x m, 3 x 3) (native_winograd.h), whose transformed
 * weights are made on the first call for each m and kept. Changes the
 * scratch size. SLEAPC_ERR_UNSUPPORTED for other kernels and bf16 convs,
 * SLEAPC_ERR_INVALID_ARG for another m, SLEAPC_ERR_NOMEM; the method is
 * unchanged then. Not while a run is in flight. */
sleapc_status sleapc__native_conv_set_winograd(native_conv *conv, int m);
/* Frees the Winograd weights of every tile size but the one set: timing
 * makes them for each candidate, and F(6)'s are 7x the direct ones (a 57M-
 * parameter ConvNeXt held 3 GB of them). A later plan remakes what it needs. */
void sleapc__native_conv_keep_tile(native_conv *conv);
/* Later runs round every output to bf16 as they store it (after the ReLU),
 * as sleapc__bf16_round, whatever the method: --precision bf16 on the
 * float32 kernels, where the value is stored as bf16. Not for AMX convs. */
void sleapc__native_conv_set_round_bf16(native_conv *conv, bool round_bf16);
/* Whether set_winograd can choose Winograd (3x3, float32). */
bool sleapc__native_conv_winograd_ok(const native_conv *conv);
/* 0 (direct) or the m of the Winograd runs. */
int sleapc__native_conv_winograd(const native_conv *conv);
/* Bytes of scratch one run on an h x w input needs with n_threads threads
 * (pass sleapc__threadpool_n_threads of the pool the run will use). SIZE_MAX
 * when no buffer could hold it. */
size_t sleapc__native_conv_scratch_size(const native_conv *conv, int64_t h, int64_t w,
                                        int n_threads);
/* src: (b, c_in, h, w) -> dst: (b, c_out, h, w); src and dst must not
 * overlap. scratch: at least scratch_size bytes, 64-byte aligned; its content
 * is not kept between runs. */
void sleapc__native_conv_run(const native_conv *conv, sleapc_threadpool *tp, const float *src,
                             int64_t b, int64_t h, int64_t w, float *dst, void *scratch);

/* An input given as a channel concat that was never copied together: part k
 * is (b, c[k], h, w) at data[k]; the n counts c[k] (each >= 1) add up to
 * c_in. */
#define NATIVE_CONV_MAX_PARTS 4
typedef struct native_conv_src {
    int n;
    const float *data[NATIVE_CONV_MAX_PARTS];
    int c[NATIVE_CONV_MAX_PARTS];
} native_conv_src;

/* sleapc__native_conv_run on the concat of src's parts. */
void sleapc__native_conv_run_parts(const native_conv *conv, sleapc_threadpool *tp,
                                   const native_conv_src *src, int64_t b, int64_t h, int64_t w,
                                   float *dst, void *scratch);

/* 3 x 3 transposed convolution, stride 2, output exactly 2h x 2w, bias,
 * optional ReLU. Every input pixel (i, j) adds x * W[ci, co, a, c] to the
 * "full" position (2i + a, 2j + c), full size (2h+1) x (2w+1).
 *  - PyTorch placement (ConvTranspose2d padding=1, output_padding=1, what
 *    sleap-nn runs): output (y, x) = full (y + 1, x + 1).
 *  - Keras placement (Conv2DTranspose padding="same"): output (y, x) = full (y, x). */
typedef struct native_convt native_convt;

/* weight: (c_in, c_out, 3, 3) as PyTorch stores ConvTranspose2d; bias
 * (c_out) or NULL. Copied. Errors as for native_conv. */
sleapc_status sleapc__native_convt_create(int c_in, int c_out, const float *weight,
                                          const float *bias, bool relu, bool keras_placement,
                                          native_convt **out);
void sleapc__native_convt_destroy(native_convt *convt);
/* As for native_conv: h x w is the input size; run writes (b, c_out, 2h, 2w). */
size_t sleapc__native_convt_scratch_size(const native_convt *convt, int64_t h, int64_t w,
                                         int n_threads);
void sleapc__native_convt_run(const native_convt *convt, sleapc_threadpool *tp,
                              const float *src, int64_t b, int64_t h, int64_t w, float *dst,
                              void *scratch);

/* 2 x 2 max pool, stride 2, floor: (b,c,h,w) -> (b,c,h/2,w/2). */
void sleapc__native_maxpool2(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                             int64_t h, int64_t w, float *dst);

/* Bilinear resize, align_corners=False, as PyTorch's upsample_bilinear2d:
 * src index = max(scale * (dst + 0.5) - 0.5, 0), neighbour clamped to the
 * last index. scale_h/scale_w: 0.5 for nn.Upsample(scale_factor=2), in/out
 * for a resize to a given size. (b,c,h,w) -> (b,c,oh,ow). */
void sleapc__native_resize_bilinear(sleapc_threadpool *tp, const float *src, int64_t b,
                                    int64_t c, int64_t h, int64_t w, float *dst, int64_t oh,
                                    int64_t ow, float scale_h, float scale_w);
/* The same, each output row then passed to round_rows(row, n) while it is
 * in cache (bf16 values rounded where written); NULL: none. */
typedef void (*native_round_rows_fn)(float *row, int64_t n);
void sleapc__native_resize_bilinear_rounded(sleapc_threadpool *tp, const float *src, int64_t b,
                                            int64_t c, int64_t h, int64_t w, float *dst, int64_t oh,
                                            int64_t ow, float scale_h, float scale_w,
                                            native_round_rows_fn round_rows);

/* (b,c,h,w) -> (b,c): max over each channel map. */
void sleapc__native_global_maxpool(const float *src, int64_t b, int64_t c, int64_t h,
                                   int64_t w, float *dst);

/* (b,c,h,w) -> (b,c): the generalized mean (mean(max(x,eps)^p))^(1/p) over each
 * channel map (sleap-nn GeM); p NULL: the plain mean. *p is clamped to [1, 6]. */
void sleapc__native_global_gempool(const float *src, int64_t b, int64_t c, int64_t h,
                                   int64_t w, const float *p, float eps, float *dst);

/* (b,c) in place: each row divided by max(its L2 norm, eps) (F.normalize). */
void sleapc__native_l2norm(float *x, int64_t b, int64_t c, float eps);

/* (b,in) -> (b,out); weight (out,in), bias (out) or NULL, optional ReLU. */
void sleapc__native_linear(const float *src, int64_t b, int64_t n_in, int64_t n_out,
                           const float *weight, const float *bias, bool relu, float *dst);

/* In place. The sigmoid is the one all backends share (backends/sigmoid.h);
 * softmax is over the last axis of a (rows, n) matrix. */
void sleapc__native_sigmoid(float *x, int64_t n);
void sleapc__native_softmax(float *x, int64_t rows, int64_t n);

/* ---- ConvNeXt / SwinT (native_transformer.c, native_attention.c) ---- */

/* SLEAPC_OP_PATCHES (graph.h): (b,c,h,w) -> (b,c*k*k,oh,ow). */
void sleapc__native_patches(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                            int64_t h, int64_t w, int k, int stride, int pad, bool merge,
                            float *dst, int64_t oh, int64_t ow);
/* Depthwise k x k, pad (k-1)/2; weight (c,1,k,k), bias (c) or NULL. */
void sleapc__native_dwconv(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                           int64_t h, int64_t w, int k, const float *weight, const float *bias,
                           float *dst);
/* LayerNorm over the c channels of each of the hw pixels (biased variance). */
void sleapc__native_layernorm(sleapc_threadpool *tp, const float *src, int64_t b, int64_t c,
                              int64_t hw, const float *weight, const float *bias, float eps,
                              float *dst);
/* dst = x + gamma[c] * y (gamma NULL: 1). */
void sleapc__native_scale_add(sleapc_threadpool *tp, const float *x, const float *y,
                              const float *gamma, int64_t b, int64_t c, int64_t hw, float *dst);
/* In place: x * (1 + erf(x / sqrt 2)) / 2. */
void sleapc__native_gelu(sleapc_threadpool *tp, float *x, int64_t n);

/* SLEAPC_OP_WINDOW_ATTENTION: the relative position bias is expanded at
 * create; a run needs scratch_size bytes (64-byte aligned). */
typedef struct native_wattn native_wattn;
sleapc_status sleapc__native_wattn_create(int c, int heads, int ws, int shift,
                                          const float *table, const float *qkv_bias,
                                          native_wattn **out);
void sleapc__native_wattn_destroy(native_wattn *a);
size_t sleapc__native_wattn_scratch_size(const native_wattn *a, int n_threads);
/* src (b,3c,h,w) qkv map -> dst (b,c,h,w). */
void sleapc__native_wattn_run(const native_wattn *a, sleapc_threadpool *tp, const float *src,
                              int64_t b, int64_t h, int64_t w, float *dst, void *scratch);

#endif
