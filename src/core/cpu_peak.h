/* This machine's multiply-add throughput, measured with loops of independent
 * vector FMAs, bf16 dot products or AMX tile products: the baseline
 * benchmarks report against. */
#ifndef SLEAPC_CORE_CPU_PEAK_H
#define SLEAPC_CORE_CPU_PEAK_H

#include "sleapc/sleapc.h"

typedef enum sleapc_peak_unit {
    SLEAPC_PEAK_FP32_FMA,  /* the widest fp32 FMA: AVX-512, AVX2, NEON or scalar */
    SLEAPC_PEAK_BF16_DOT,  /* AVX512-BF16 VDPBF16PS */
    SLEAPC_PEAK_BF16_AMX   /* AMX TDPBF16PS */
} sleapc_peak_unit;

/* Whether this CPU (and OS, for AMX) has the unit. */
bool sleapc__cpu_peak_unit_present(sleapc_peak_unit unit);

/* GFLOP/s (2 per multiply-add) of one unit with n_threads threads for about
 * seconds; 0 when the unit is absent. */
double sleapc__cpu_peak_unit_gflops(int n_threads, sleapc_peak_unit unit, double seconds);

/* fp32: the FMA peak. bf16: the best of the bf16 units present (0: none). */
double sleapc__cpu_peak_gflops(int n_threads, bool bf16, double seconds);

/* "avx512f", "avx2+fma", "neon" or "generic": the widest FMA set in use. */
const char *sleapc__cpu_simd_name(void);

#endif
