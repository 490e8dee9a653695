/* numpy's pairwise summation of float64 (numpy/core/src/umath/
 * loops_utils.h.src, pairwise_sum_DOUBLE): where sleap-nn's numbers are
 * reproduced to the last bit, sums follow its order. */
#ifndef SLEAPC_CORE_NP_SUM_H
#define SLEAPC_CORE_NP_SUM_H

#include <stdint.h>

/* Sequential under 8 values, eight accumulators up to 128, halves above
 * (np.add.reduce adds this to its identity, 0.0, which turns -0.0 into 0.0). */
double sleapc__np_pairwise_sum(const double *a, int64_t n);

#endif
