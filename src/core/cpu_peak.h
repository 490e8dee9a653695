/* This machine's multiply-add throughput, measured with a loop of
 * independent vector FMAs: the baseline benchmarks report against. */
#ifndef SLEAPC_CORE_CPU_PEAK_H
#define SLEAPC_CORE_CPU_PEAK_H

#include "sleapc/sleapc.h"

/* GFLOP/s (2 per multiply-add) with n_threads threads for about seconds.
 * bf16: the AVX512-BF16 dot-product instruction (2 products per fp32 lane);
 * returns 0 when the CPU lacks it. */
double sleapc__cpu_peak_gflops(int n_threads, bool bf16, double seconds);

/* "avx512f", "avx2+fma" or "generic": the widest FMA set in use. */
const char *sleapc__cpu_simd_name(void);

#endif
