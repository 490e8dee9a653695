/* Part affinity field line scoring for bottom-up grouping: candidate
 * connections between the peaks of one frame and their PAF line integrals.
 * Mirrors sleap-nn's ops/paf.py (get_connection_candidates, make_line_subs,
 * score_paf_lines, score_paf_lines_batch) including its float32 operation
 * order. Pure functions on plain arrays. */
#ifndef SLEAPC_CORE_PAF_H
#define SLEAPC_CORE_PAF_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Line scoring parameters (sleap-nn PAFScorer defaults in brackets). */
typedef struct sleapc_paf_score_opts {
    int n_points;                 /* points sampled per line, >= 1 [10] */
    int paf_stride;               /* input pixels per PAF cell, >= 1 */
    double max_edge_length_ratio; /* [0.25] */
    double dist_penalty_weight;   /* [1.0] */
    bool sleap1;                  /* SLEAP 1.x scoring (paf_grouping.py) [false] */
} sleapc_paf_score_opts;

/* sleap-nn's defaults (n_points 10, ratio 0.25, weight 1.0, sleap1 false);
 * paf_stride 1 must be set by the caller. */
sleapc_paf_score_opts sleapc__paf_score_opts_default(void);

/* Longest connection before the distance penalty starts, in input pixels:
 * ratio * max(2 * n_edges, paf_w, paf_h) * paf_stride. The PAF channel count
 * takes part in the max (score_paf_lines_batch reads the last three sizes of
 * the (B, h, w, 2E) tensor); that quirk is kept. */
double sleapc__paf_max_edge_length(double ratio, int64_t n_edges, int64_t paf_h, int64_t paf_w,
                                   int paf_stride);

/* Number of candidate connections of one frame: the sum over edges of
 * n_peaks(src node) * n_peaks(dst node).
 * peak_channel_inds: (n_peaks,) node of each peak, each in [0, n_nodes).
 * edges: (n_edges, 2) source and destination node of each skeleton edge.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for a node index out of range or
 * a count that overflows int64. */
sleapc_status sleapc__paf_count_candidates(const int32_t *peak_channel_inds, int64_t n_peaks,
                                           int n_nodes, const int (*edges)[2], int n_edges,
                                           int64_t *out_n);

/* Enumerate candidate connections (get_connection_candidates): for each edge
 * in skeleton order, every (src peak, dst peak) pair, source-major, each
 * node's peaks in ascending peak index.
 * capacity: entries available in edge_inds / edge_peak_inds (use
 *   sleapc__paf_count_candidates).
 * edge_inds: out (n,) edge index; edge_peak_inds: out (n, 2) peak indices.
 * n_out: out, the number written.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad indices or too small a
 * capacity. */
sleapc_status sleapc__paf_candidates(const int32_t *peak_channel_inds, int64_t n_peaks, int n_nodes,
                                     const int (*edges)[2], int n_edges, int64_t capacity,
                                     int32_t *edge_inds, int64_t (*edge_peak_inds)[2],
                                     int64_t *n_out);

/* Score candidate connections against one frame's PAFs (make_line_subs +
 * get_paf_lines + score_paf_lines). With opts->sleap1, SLEAP 1.x's
 * sleap/nn/paf_grouping.py instead: points from tf.linspace(src, dst) (src,
 * src + ((dst - src) / (n - 1)) * j, dst), a look-up outside the map reads 0
 * (TensorFlow's GPU gather_nd) instead of the clipped border, and the maximum
 * edge length in float32. Otherwise (sleap-nn):
 *   points p_j = src + ((dst - src) / (1 + eps)) * t_j, t_j = torch's float32
 *   linspace(0, 1, n_points), looked up at round-half-even(p_j / stride),
 *   clipped to the map; score = mean_j(PAF(p_j) . unit(dst - src)) +
 *   min(max_edge_length / |dst - src| - 1, 0) * dist_penalty_weight.
 * A zero-length candidate scores NaN, as in sleap-nn.
 *
 * pafs: (2 * n_edges, paf_h, paf_w) float32, this frame's slice of the head
 *   output in NCHW order; channel 2k is the x, 2k+1 the y component of edge k.
 * peaks: (n_peaks, 2) (x, y) in input pixels (grid peak x output stride).
 * edge_inds, edge_peak_inds: (n_cand,) and (n_cand, 2) candidates.
 * line_scores: out (n_cand,).
 * Nothing is kept. Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad sizes,
 * options or indices. */
sleapc_status sleapc__paf_score_lines(const float *pafs, int64_t n_edges, int64_t paf_h,
                                      int64_t paf_w, const float *peaks, int64_t n_peaks,
                                      const int32_t *edge_inds, const int64_t (*edge_peak_inds)[2],
                                      int64_t n_cand, const sleapc_paf_score_opts *opts,
                                      float *line_scores);

/* torch.linspace(0, 1, n) in float32 as torch 1.13's CPU kernel produces it:
 * start + step * j, except that full blocks of 16 are generated 8 at a time
 * from a block base, which can differ by an ulp. t: out (n,). n >= 1. */
void sleapc__paf_linspace(int n, float *t);

#endif
