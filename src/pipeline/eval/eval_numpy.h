/* numpy's arithmetic where its order of operations shows in the last bits:
 * the pairwise summation of np.sum / np.mean, np.percentile's linear
 * interpolation, np.linspace and a stable descending argsort. */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_NUMPY_H
#define SLEAPC_PIPELINE_EVAL_EVAL_NUMPY_H

#include <stdint.h>

/* np.sum of n contiguous float64 (numpy's pairwise_sum, 8 accumulators,
 * blocks of 128). */
double sleapc__ev_np_sum(const double *a, int64_t n);

/* np.mean (NaN for n = 0). */
double sleapc__ev_np_mean(const double *a, int64_t n);

/* np.percentile(a, p) with the default linear method. sorted: the n values,
 * ascending, no NaN; n > 0. */
double sleapc__ev_np_percentile_sorted(const double *sorted, int64_t n, double p);

/* np.linspace(start, stop, num)[i]. */
double sleapc__ev_np_linspace(double start, double stop, int num, int i);

/* Indices that sort v descending as np.argsort(-v, kind="mergesort") does:
 * stable, NaN last. idx: [n], out. */
void sleapc__ev_np_argsort_desc(const double *v, int64_t n, int64_t *idx);

#endif
