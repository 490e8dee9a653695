/* Entry points the sleapc command line and benchmarks use that are NOT part
 * of the stable API: .npy files, the synthetic sample of `sleapc demo`, and
 * measuring this machine. Not exported from libsleapc.so and not installed;
 * programs of this source tree that use them link libsleapc.a. */
#ifndef SLEAPC_TOOLS_H
#define SLEAPC_TOOLS_H

#include "sleapc/runner.h"
#include "sleapc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NumPy .npy files ---- */

/* Read a .npy (v1/v2, C order, little-endian; float32, uint8, bool, int32,
 * int64, float64 -> float32). out->data is owned by the caller: free it with
 * sleapc_tensor_free. Returns SLEAPC_ERR_IO or SLEAPC_ERR_FORMAT on failure. */
sleapc_status sleapc_npy_read(const char *path, sleapc_tensor *out);

/* Write t as a .npy v1.0 file, atomically (temporary file, then rename). */
sleapc_status sleapc_npy_write(const char *path, const sleapc_tensor *t);

/* Free data returned in a tensor by sleapc_npy_read and clear the view.
 * Accepts NULL and an empty tensor. */
void sleapc_tensor_free(sleapc_tensor *t);

/* ---- The synthetic sample ----
 * A small single-instance model folder in sleap-nn's own format and a clip of
 * a moving animal with known keypoints. The model's weights are constructed,
 * not trained: its confidence map for node k is the clip's colour channel k,
 * and each body part is drawn as a Gaussian spot in its own channel, so the
 * maps peak on the drawn parts. */

typedef struct sleapc_sample_opts {
    int n_frames;    /* 60 */
    int height;      /* 192 */
    int width;       /* 256 */
    unsigned seed;   /* 1 */
} sleapc_sample_opts;

sleapc_sample_opts sleapc_sample_opts_default(void);

/* Write into folder dir (created if needed):
 *   dir/model/training_config.yaml, dir/model/best.ckpt  the model (3 nodes)
 *   dir/clip.npy    (n_frames, height, width, 3) uint8 frames
 *   dir/truth.npy   (n_frames, 3, 2) float32 true (x, y) of each node
 * Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG or SLEAPC_ERR_IO. */
sleapc_status sleapc_sample_write(const char *dir, const sleapc_sample_opts *opts);

/* ---- Measuring this machine ---- */

/* Multiply-add throughput in GFLOP/s (2 per multiply-add) with n_threads
 * threads (<= 0: one per core), measured for about `seconds` with a loop of
 * independent vector FMAs (fp32) or AVX512-BF16 dot products (bf16; 0 when
 * the CPU has none). FP16 is not measured (0). */
double sleapc_bench_peak_gflops(int n_threads, sleapc_precision precision, double seconds);

/* The widest vector instruction set the native kernels use here:
 * "avx512f", "avx2+fma" or "generic". Static text. */
const char *sleapc_bench_simd_name(void);

#ifdef __cplusplus
}
#endif

#endif
