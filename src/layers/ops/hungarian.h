/* Rectangular linear-sum assignment (minimum cost), solved the way
 * scipy.optimize.linear_sum_assignment does it, so that ties between equally
 * cheap assignments break the same way. sleap-nn uses that scipy function for
 * PAF edge matching (ops/paf.py:match_candidates_sample) and for identity
 * assignment (ops/identity.py). */
#ifndef SLEAPC_LAYERS_OPS_HUNGARIAN_H
#define SLEAPC_LAYERS_OPS_HUNGARIAN_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Minimum-cost assignment of rows to columns.
 *
 * cost: n_rows x n_cols, row-major, float64; read only, not kept. +inf marks a
 *   forbidden pair. Either size may be 0 (then no pairs).
 * row_ind, col_ind: caller buffers of at least min(n_rows, n_cols) entries;
 *   on success they hold exactly min(n_rows, n_cols) pairs, sorted by row
 *   (scipy's return order, also when n_rows > n_cols).
 *
 * Algorithm: the shortest augmenting path method of scipy >= 1.6
 * (rectangular_lsap.cpp, after Crouse 2016), including its order of column
 * scans, its preference for unassigned columns on equal path costs and its
 * transposition of tall matrices, so that tie-breaking matches scipy.
 *
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for a NULL buffer, a NaN or -inf
 * entry (scipy: "matrix contains invalid numeric entries") or when no
 * assignment of min(n_rows, n_cols) finite pairs exists (scipy: "cost matrix is
 * infeasible"); SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__hungarian_solve(const double *cost, int64_t n_rows, int64_t n_cols,
                                      int64_t *row_ind, int64_t *col_ind);

/* As sleapc__hungarian_solve, but a matrix that is infeasible because of +inf
 * entries is not an error: when scipy would raise, the assignment instead
 * maximises the number of finite pairs, then minimises their cost, and the
 * forbidden pairs are left out. When scipy succeeds the result is identical
 * to scipy's.
 *
 * n_pairs: out, the number of pairs written (<= min(n_rows, n_cols)), sorted
 *   by row.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for NULL buffers or NaN / -inf
 * entries; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__hungarian_solve_partial(const double *cost, int64_t n_rows, int64_t n_cols,
                                              int64_t *row_ind, int64_t *col_ind,
                                              int64_t *n_pairs);

/* Scratch for repeated solves. Zero-initialise it, pass it to any number of
 * sleapc__hungarian_solve_ws and _partial_ws calls and release it with
 * sleapc__hungarian_ws_free. It grows (geometrically) to the largest matrix
 * seen, so a solve no larger than an earlier one allocates nothing. */
typedef struct sleapc_hungarian_ws {
    void *block; /* owned */
    size_t cap;  /* bytes in block */
} sleapc_hungarian_ws;

/* Frees the scratch and zeroes *ws. Accepts NULL and a zeroed workspace. */
void sleapc__hungarian_ws_free(sleapc_hungarian_ws *ws);

/* sleapc__hungarian_solve with caller-kept scratch: the same arguments,
 * results and statuses (an infeasible matrix is an error), plus ws
 * (required; kept by the caller, grown as needed, still valid after a
 * failure). */
sleapc_status sleapc__hungarian_solve_ws(const double *cost, int64_t n_rows, int64_t n_cols,
                                         sleapc_hungarian_ws *ws, int64_t *row_ind,
                                         int64_t *col_ind);

/* sleapc__hungarian_solve_partial with caller-kept scratch: the same
 * arguments, results and statuses, plus ws (required; kept by the caller,
 * grown as needed, still valid after a failure). */
sleapc_status sleapc__hungarian_solve_partial_ws(const double *cost, int64_t n_rows,
                                                 int64_t n_cols, sleapc_hungarian_ws *ws,
                                                 int64_t *row_ind, int64_t *col_ind,
                                                 int64_t *n_pairs);

#endif
