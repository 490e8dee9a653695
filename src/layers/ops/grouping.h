/* Bottom-up instance grouping: match scored PAF candidates edge by edge,
 * assemble instances, then pack them into fixed (B, I, ...) slots. Mirrors
 * sleap-nn's ops/paf.py (toposort_edges, match_candidates_sample,
 * group_instances_sample, assign_connections_to_instances,
 * make_predicted_instances) and inference/streaming.py (group_scored_batch).
 * Pure functions on plain arrays. */
#ifndef SLEAPC_LAYERS_OPS_GROUPING_H
#define SLEAPC_LAYERS_OPS_GROUPING_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Grouping parameters (sleap-nn PAFScorer defaults in brackets). */
typedef struct sleapc_grouping_opts {
    double min_line_scores;              /* [0.25] matches scoring below are dropped (>= kept);
                                          * compared in float32, as numpy does */
    double min_instance_peaks;           /* [0] 0 = off; instances with fewer peaks are dropped */
    bool min_instance_peaks_is_fraction; /* sleap-nn treats a Python float as a fraction:
                                          * threshold = (int)(value * n_nodes) [false] */
} sleapc_grouping_opts;

sleapc_grouping_opts sleapc__grouping_opts_default(void);

/* Edge visiting order of sleap-nn's toposort_edges: root = the first node,
 * in order of first appearance in the edge list, without an incoming edge;
 * then a breadth-first walk from it along out-edges in list order, keeping
 * tree edges only. Edges off that tree are never used for grouping, as in
 * sleap-nn.
 * edges: (n_edges, 2) node indices in [0, n_nodes).
 * order: out, room for n_edges entries; n_order: out, entries written.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad node indices or a graph
 * where every node has an incoming edge (sleap-nn raises there);
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__grouping_edge_order(const int (*edges)[2], int n_edges, int n_nodes,
                                          int *order, int *n_order);

/* A skeleton prepared for grouping. All pointers are borrowed. */
typedef struct sleapc_grouping_skeleton {
    int n_nodes;
    int n_edges;
    const int (*edges)[2]; /* (n_edges, 2) source, destination node */
    int n_order;
    const int *order; /* from sleapc__grouping_edge_order */
} sleapc_grouping_skeleton;

/* Grouping scratch kept by a result between frames (grouping.c). */
typedef struct sleapc_grouping_ws sleapc_grouping_ws;

/* One frame's instances, reusable from frame to frame: zero-initialise it
 * once, pass it to sleapc__grouping_group_frame for every frame (a result
 * already filled is overwritten, and its arrays and scratch are reused when
 * large enough, so a steady stream of frames allocates nothing), and release
 * it with sleapc__grouping_result_free. Arrays are owned. */
typedef struct sleapc_grouping_result {
    int64_t n_instances;
    int64_t n_nodes;
    float *keypoints;   /* (n_instances, n_nodes, 2) (x, y) in the peaks' pixels; NaN = missing */
    float *peak_values; /* (n_instances, n_nodes); NaN = missing */
    float *scores;      /* (n_instances,) float32 sum of the instance's kept line scores */
    /* Reuse state, zero in a fresh result; callers only read the fields above.
     * A result built by hand (arrays not from group_frame) keeps these 0. */
    int64_t *order;         /* (cap_instances,) scratch of sleapc__grouping_pack's cut */
    int64_t cap_instances;  /* entries scores and order have room for */
    int64_t cap_points;     /* (instance, node) cells keypoints and peak_values have room for */
    sleapc_grouping_ws *ws; /* matching and assembly scratch; NULL until first used */
} sleapc_grouping_result;

/* Frees the arrays and scratch and zeroes *r. Accepts NULL and a zeroed
 * result. */
void sleapc__grouping_result_free(sleapc_grouping_result *r);

/* Group one frame.
 * peaks: (n_peaks, 2); peak_vals, peak_channel_inds: (n_peaks,).
 * edge_inds, edge_peak_inds, line_scores: (n_cand,) scored candidates (from
 *   sleapc__paf_candidates / sleapc__paf_score_lines).
 * Per edge, rows are the edge's distinct source peaks and columns its distinct
 * destination peaks in ascending peak index, cost = -score (NaN = forbidden);
 * scipy's assignment is used (sleapc__hungarian_solve_partial: where scipy
 * would raise on an infeasible matrix, forbidden pairs are skipped instead).
 * Instances are numbered in order of creation; a lone peak forms none.
 * out: zeroed, or a result from an earlier call (overwritten; its arrays
 *   and scratch are reused, growing geometrically when too small); filled on
 *   success, freed and zeroed on failure; release with
 *   sleapc__grouping_result_free.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad sizes or indices;
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__grouping_group_frame(const sleapc_grouping_skeleton *sk, const float *peaks,
                                           const float *peak_vals, const int32_t *peak_channel_inds,
                                           int64_t n_peaks, const int32_t *edge_inds,
                                           const int64_t (*edge_peak_inds)[2],
                                           const float *line_scores, int64_t n_cand,
                                           const sleapc_grouping_opts *opts,
                                           sleapc_grouping_result *out);

/* Instance slots I of group_scored_batch: max_instances when > 0, else the
 * largest n_instances over the frames, and at least 1. */
int64_t sleapc__grouping_n_slots(const sleapc_grouping_result *frames, int64_t n_frames,
                                 int64_t max_instances);

/* Pack frames into (B, I, ...) slots as group_scored_batch does: keypoints
 * divided by input_scale, then by eff_scale[b] (float32); with
 * max_instances > 0 and more instances than slots, the instances are
 * reordered by numpy's argsort of the scores, reversed (descending, ties
 * later-index first), and cut; otherwise assembly order is kept. Unused
 * slots are NaN.
 * frames: (n_frames,); eff_scale: (n_frames,), NULL = all 1. The cut sorts
 *   in the order scratch of a frame's result (from
 *   sleapc__grouping_group_frame), so packing such results allocates
 *   nothing; a frame without that scratch (built by hand) gets a temporary
 *   buffer.
 * keypoints: out (n_frames, n_slots, n_nodes, 2); peak_values: out
 *   (n_frames, n_slots, n_nodes); instance_scores: out (n_frames, n_slots).
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad sizes; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__grouping_pack(const sleapc_grouping_result *frames, int64_t n_frames,
                                    int64_t n_nodes, int64_t max_instances, int64_t n_slots,
                                    float input_scale, const float *eff_scale, float *keypoints,
                                    float *peak_values, float *instance_scores);

/* numpy.argsort(v) (default kind, numpy 1.24: introsort with insertion sort
 * up to 17 elements and a heapsort fallback) on float32, NaN last. Equal
 * values come out in numpy's order, which is what sleap-nn's score cuts
 * depend on. order: out (n,). */
void sleapc__grouping_argsort(const float *v, int64_t n, int64_t *order);

#endif
