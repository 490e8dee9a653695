#include "core/cpu_peak.h"
#include "sleapc/tools.h"

double sleapc_bench_peak_gflops(int n_threads, sleapc_precision precision, double seconds)
{
    if (precision == SLEAPC_PRECISION_FP16 || !(seconds > 0))
        return 0.0;
    return sleapc__cpu_peak_gflops(n_threads, precision == SLEAPC_PRECISION_BF16, seconds);
}

const char *sleapc_bench_simd_name(void)
{
    return sleapc__cpu_simd_name();
}
