/* Identity linking of sleap-nn 0.3.5's MOT trackers
 * (tracking/mot/linking.py: link_tracklets, --link_tracklets and
 * max_tracks), run once per video after tracking, for detections without
 * appearance vectors (the calibration's status "no_vectors": no swap
 * correction, gap links by position only):
 *  1. open set: an identity that ends and one that starts later within
 *     four track buffers are merged when the junction passes the spatial
 *     gate and is unique (mot_link_open.c);
 *  2. closed set, with max_tracks: the best-supported identities present
 *     together become anchors, every other tracklet joins the anchor it
 *     fits best or is untracked (mot_link_close.c).
 * The detections of one identity keep the earlier identity's track. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_LINK_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/mot/mot_detect.h"
#include "pipeline/tracking/mot/mot_params.h"

/* Links the tracked video v (finished detections, calibration cal with
 * step_p95): label[d] (track id, -1 untracked) is rewritten to the linked
 * identities' ids, tscore[d] is 0 for a detection the closed set untracks.
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_link(const mot_video *v, const sleapc_mot_params *p,
                               const mot_calibration *cal, int *label, double *tscore);

/* ---- shared by the linking stages ----------------------------------------- */

typedef struct mot_ilist {
    int *v;
    int n, cap;
} mot_ilist;

/* Appends x. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_ilist_push(mot_ilist *l, int x);

typedef struct mot_linker {
    /* tracked detections, in time order (frame, then input order) */
    int n;
    int64_t *det; /* index in the video */
    int64_t *pos; /* processed-frame position */
    double *step, *cen, *score;
    bool *valid_c;
    int *label, *owner; /* identity, -1: untracked by the closed set */
    /* duplicate pairs (a < b), sorted */
    int64_t *dup_keys;
    int n_dups;
    int *dup_a, *dup_b;
    /* identities: the distinct tracks, by first appearance */
    int m;
    int *name_id, *name_rank;
    mot_ilist *mem; /* members, time-ordered */
    bool *alive;
    double *first, *last, *start_c, *end_c;
    int *n_dets;
    double *score_sum;
    /* the rule's scales */
    int track_buffer;
    double body, step_scale, gate_frames;
    /* open set: candidate pairs (earlier i, later j) */
    int np, pcap;
    int *pi, *pj;
    double *pgap, *pdist;
    bool *pwin, *plive;
    signed char *verdict; /* -1 unknown, 0 rejected, 1 accepted */
    mot_ilist *rows, *cols;
} mot_linker;

/* Whether a junction over gap steps, dist px apart, passes the spatial gate
 * (ungated past link_spatial_gate_frames or without a motion scale). */
bool sleapc__mot_link_gate_ok(const mot_linker *L, double gap, double dist);

/* The gate's radius for a gap (steps). */
double sleapc__mot_link_radius(const mot_linker *L, double gap);

/* First and last step, first and last valid centroid of identity k. */
void sleapc__mot_link_extent(mot_linker *L, int k);

/* Open-set gap linking until no link is accepted; *n_merges. NOMEM. */
sleapc_status sleapc__mot_link_open(mot_linker *L, int *n_merges);

/* Closed set down to n_max identities. NOMEM. */
sleapc_status sleapc__mot_link_close(mot_linker *L, int n_max, int *n_forced, int *n_untracked);

#endif
