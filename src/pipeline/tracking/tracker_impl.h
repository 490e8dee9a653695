/* Private to the tracker (tracker.c, tracker_stores.c): its state, the
 * instance sets it stores, and what the candidate stores call back. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACKER_IMPL_H
#define SLEAPC_PIPELINE_TRACKING_TRACKER_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/track_cull.h"
#include "pipeline/tracking/track_flow.h"
#include "pipeline/tracking/track_match.h"
#include "pipeline/tracking/tracker.h"

/* Instances of one frame: the current one, a fixed-window slot, or (n = 1
 * each) the entries of a local queue. */
typedef struct inst_set {
    int n, cap;
    int64_t frame_idx;
    int64_t seq;    /* the call that brought this frame: names its image */
    int64_t *track; /* -1 = None */
    int *valid;     /* visible points */
    double *kp;     /* (cap, n_nodes, 2) */
    double *feat;   /* (cap, fdim) */
    uint8_t *gray;  /* flow: the frame (height * width), else NULL */
} inst_set;

typedef struct local_queue {
    inst_set *entries; /* ring of window_size single-instance sets */
    int head, n;
} local_queue;

struct sleapc_tracker {
    sleapc_tracker_opts o;
    int n_nodes, fdim, swidth;
    int64_t height, width; /* flow frame size, 0 until the first frame */
    int64_t next_id;       /* 1 + the largest id created */
    int64_t seq;           /* frames tracked so far */
    /* fixed window: ring of window_size frames */
    inst_set *window;
    int win_head, win_n;
    /* local queues */
    local_queue *queues;
    int n_queues, queues_cap;
    /* current frame */
    inst_set cur;
    int *cur_src; /* input index of each current instance */
    double *cur_tscore;
    /* scratch */
    int64_t *col_track;
    int cols_cap;
    double *cost, *vals, *shifted, *shift_feat;
    int64_t cost_cap, vals_cap, shifted_cap;
    int *rows, *cols, *out_tracks;
    int pairs_cap;
    bool *keep;
    int keep_cap;
    double *node_work;            /* n_nodes: feature and OKS scratch */
    double *clean_pts, *clean_sc; /* pairs_cap instances: post-tracking cull */
    sleapc_track_cull_ws cull;
    sleapc_track_match_ws mws;
    sleapc_track_connect connect;
    sleapc_track_flow *flow;
};

/* Copies instance i of src (or all when i < 0) into dst, and the image. */
sleapc_status sleapc__tracker_set_copy(sleapc_tracker *t, inst_set *dst, const inst_set *src,
                                       int i);
/* Grows *p (of *cap elements of elem bytes) to hold need. */
sleapc_status sleapc__tracker_grow(void **p, int64_t *cap, int64_t need, size_t elem);
/* Scores the current frame against n_cols columns into t->cost. */
sleapc_status sleapc__tracker_score_columns(sleapc_tracker *t, int n_cols, const uint8_t *gray);
/* sleap-nn 0.3.5's Tracker.assign_tracks gate (#745, tracker_infeasible.c):
 * drops from the matcher's n_pairs pairs (t->rows, t->cols over t->cost of
 * n_cols columns) those at a non-finite cost whose detection can start a
 * track instead; the others stand. slots: tracks the store may still create
 * (-1 = no cap). Returns the pairs left, in order. Nothing dropped when
 * t->o.keep_infeasible (0.3.3). */
int sleapc__tracker_drop_infeasible(sleapc_tracker *t, int n_cols, int n_pairs, int64_t slots);
/* The two candidate stores (tracker_stores.c): match the current frame,
 * give it tracks, store it; order: the instances kept, in output order. */
sleapc_status sleapc__tracker_track_window(sleapc_tracker *t, const uint8_t *gray, int *order,
                                           int *n_order);
sleapc_status sleapc__tracker_track_queues(sleapc_tracker *t, const uint8_t *gray, int *order,
                                           int *n_order);

#endif
