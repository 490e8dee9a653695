/* Per-frame instance culling (tracking/utils.py: nms_fast, cull_instances)
 * and the online form of tracker.py:connect_single_breaks. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_CULL_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_CULL_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Scratch of sleapc__track_cull, grown by _reserve (a crowded frame must
 * not overflow the stack, and a steady run allocates nothing). */
typedef struct sleapc_track_cull_ws {
    int *ints;       /* 4 * cap: idxs, nms, order, idx */
    double *doubles; /* 5 * cap: area, boxes (4 a box) */
    bool *removed;   /* cap */
    int cap;
} sleapc_track_cull_ws;

/* Makes ws hold n instances. NOMEM only. */
sleapc_status sleapc__track_cull_reserve(sleapc_track_cull_ws *ws, int n);
void sleapc__track_cull_ws_free(sleapc_track_cull_ws *ws);

/* Marks which of the n instances (points (n, n_nodes, 2), scores) to keep so
 * that at most `count` remain: greedy box NMS first when iou_threshold is
 * non-zero (sleap-nn's nms_fast, add-back rule included), then the lowest
 * scores go (stable ascending sort, as Python's sorted). An instance whose
 * points equal a removed one's (NaN = NaN) goes too, as sleap-io's
 * same_pose_as removes it. keep: n flags out; ws reserved for n. */
void sleapc__track_cull(sleapc_track_cull_ws *ws, const double *points, const double *scores,
                        int n, int n_nodes, int count, double iou_threshold, bool *keep);

/* State of connect_single_breaks across frames. */
typedef struct sleapc_track_connect {
    int64_t *map_from, *map_to; /* fix_track_map, in insertion order */
    int n_map, map_cap;
    int64_t *last_good; /* last good frame's set of tracks (-1 = untracked) */
    int n_last, last_cap;
    int64_t *frame; /* this frame's set of tracks */
    int frame_cap;
} sleapc_track_connect;

void sleapc__track_connect_free(sleapc_track_connect *c);

/* One frame's tracks, in output order, relabelled in place. NOMEM only. */
sleapc_status sleapc__track_connect_frame(sleapc_track_connect *c, int *tracks, int n);

#endif
