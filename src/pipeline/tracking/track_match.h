/* Matching of sleap-nn's tracker (tracking/utils.py) and the column order of
 * its fixed-window store, which is a CPython set's iteration order. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_MATCH_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_MATCH_H

#include <stdint.h>

#include "layers/ops/hungarian.h"
#include "pipeline/tracking/tracker.h"

/* Scratch kept by the tracker across frames (grown, never shrunk). */
typedef struct sleapc_track_match_ws {
    sleapc_hungarian_ws hws;
    double *cost;       /* filled copy for the Hungarian solver */
    int64_t *idx;       /* greedy order / solver rows */
    int64_t *cols;      /* solver columns */
    unsigned char *used;
    int64_t cap;        /* cells in cost / idx */
    int64_t *table;     /* set emulation */
    int64_t table_cap;
} sleapc_track_match_ws;

void sleapc__track_match_ws_free(sleapc_track_match_ws *ws);

/* Pairs of rows and columns of cost (n_rows x n_cols, -score, +inf invalid),
 * in sleap-nn's order: Hungarian (non-finite cells replaced by 10 * max|finite|
 * + 1, scipy's assignment, rows ascending) or greedy (cells by ascending cost,
 * ties in row-major order). Ungated: min(n_rows, n_cols) pairs.
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__track_match(sleapc_track_matching m, const double *cost, int n_rows,
                                  int n_cols, sleapc_track_match_ws *ws, int *rows, int *cols,
                                  int *n_pairs);

/* Iteration order of a CPython 3 set filled by adding keys[0..n) (non-negative
 * ints, hash = value; repeats ignored): the distinct keys into out, their
 * count returned, or -1 on allocation failure. */
int sleapc__pyset_order(const int64_t *keys, int n, sleapc_track_match_ws *ws, int64_t *out);

#endif
