/* Measuring this machine, for benchmarks that report against it. */
#ifndef SLEAPC_BENCH_H
#define SLEAPC_BENCH_H

#include "sleapc/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Multiply-add throughput in GFLOP/s (2 per multiply-add) with n_threads
 * threads (<= 0: one per core), measured for about `seconds` with a loop of
 * independent vector FMAs (fp32) or AVX512-BF16 dot products (bf16; 0 when
 * the CPU has none). FP16 is not measured (0). */
SLEAPC_API double sleapc_bench_peak_gflops(int n_threads, sleapc_precision precision,
                                           double seconds);

/* The widest vector instruction set the native kernels use here:
 * "avx512f", "avx2+fma" or "generic". Static text. */
SLEAPC_API const char *sleapc_bench_simd_name(void);

#ifdef __cplusplus
}
#endif

#endif
