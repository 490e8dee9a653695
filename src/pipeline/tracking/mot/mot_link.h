/* Identity linking of sleap-nn 0.3.5's MOT trackers
 * (tracking/mot/linking.py: link_tracklets, --link_tracklets and
 * max_tracks), run once per video after tracking:
 *  0. with appearance calibrated for linking (cal->app.for_linking), swap
 *     correction at crossings by appearance (mot_link_swap.c);
 *  1. open set: an identity that ends and one that starts later are merged
 *     when their appearance agrees by the calibrated threshold and margin
 *     (mot_link_appearance.c), or, without vectors on both sides, when the
 *     junction is within four track buffers, passes the spatial gate and
 *     is unique (mot_link_open.c);
 *  2. closed set, with max_tracks: the best-supported identities present
 *     together become anchors, every other tracklet joins the anchor it
 *     fits best (appearance first, then geometry) or is untracked
 *     (mot_link_close.c).
 * The detections of one identity keep the earlier identity's track. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_LINK_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_LINK_H

#include <math.h>
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
    /* appearance: gated vectors (confident, mostly visible, isolated) */
    int dim;
    float *vec;     /* (n, dim), unit rows; meaningful where gated */
    bool *gated;    /* the detection's vector may enter a gallery */
    bool *in_event; /* the detection overlaps another identity's */
    int n_ov, ov_cap;
    int *ov_a, *ov_b; /* overlapping pairs of different identities, by frame */
    bool use_app;     /* appearance decides links (calibrated, vectors gated) */
    double thresh_n[MOT_LINK_QUERY_LEN], margin_n[MOT_LINK_QUERY_LEN];
    /* open set: candidate pairs (earlier i, later j) */
    int np, pcap;
    int *pi, *pj;
    double *pgap, *pdist, *pscore; /* pscore: s_link, NaN without vectors */
    bool *pwin, *plive, *papp, *pspat;
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

/* _gap_fits(h, [k]): whether k lies entirely inside one gap of host h,
 * with the junctions' gaps (steps) and distances. */
bool sleapc__mot_link_gap_fits(const mot_linker *L, int h, int k, double *gap1, double *gap2,
                               double *d1, double *d2);

/* ---- appearance (mot_link_appearance.c) ----------------------------------- */

/* Gated vectors and overlaps of the tracked detections [o, o + k) of frame
 * f (every detection of the frame counts for isolation). NOMEM. */
sleapc_status sleapc__mot_link_gate_frame(mot_linker *L, const mot_video *v,
                                          const sleapc_mot_params *p, int64_t f, int o, int k);

/* link_rule_tables: the calibrated (threshold, margin) per query length. */
void sleapc__mot_link_rule_tables(mot_linker *L, const mot_appearance_calibration *app);

/* _rule: (threshold, margin) of an n-vector query (NaN: undecidable). */
void sleapc__mot_link_rule(const mot_linker *L, int n, double *thresh, double *margin);

/* _s_link: mean over the query detections q of the mean top-5 cosines
 * against the gallery detections g; NaN when either is empty. */
double sleapc__mot_link_s_link(const mot_linker *L, const int *q, int nq, const int *g, int ng);

/* Head (first 10) and tail (last 30) gated members of k; the count. */
int sleapc__mot_link_head(const mot_linker *L, int k, int *out);
int sleapc__mot_link_tail(const mot_linker *L, int k, int *out);

/* _score_pairs for one pair: j's head against i's tail (NaN without). */
double sleapc__mot_link_pair_score(const mot_linker *L, int i, int j);

/* _margin_ok: the appearance margin of i -> j over its proven-different
 * competitors. */
bool sleapc__mot_link_margin_ok(mot_linker *L, int i, int j, double score);

/* _appearance_candidates: the best ordered, feasible pairs by the
 * mean-vector proxy, appended to (*ii, *jj) (*n of *cap). NOMEM. */
sleapc_status sleapc__mot_link_app_candidates(const mot_linker *L, int **ii, int **jj, int *n,
                                              int *cap);

/* The closed set's appearance tier of rest (the tracklet's detections
 * joining anchor a): 0 agrees, 1 undecidable, 2 disagrees. */
int sleapc__mot_link_fit_tier(const mot_linker *L, const int *rest, int n_rest, int a);

/* linking.py SPATIAL_ONLY_BUFFERS: the spatial-only window, in track buffers. */
#define MOT_LINK_SPATIAL_ONLY_BUFFERS 4

/* The gaps (steps) within which position alone may link. */
static inline double sleapc__mot_link_window(const mot_linker *L)
{
    return (double)(MOT_LINK_SPATIAL_ONLY_BUFFERS * L->track_buffer);
}

/* Euclidean distance of two points (NaN when either is). */
static inline double sleapc__mot_link_dist(const double *a, const double *b)
{
    const double dx = a[0] - b[0], dy = a[1] - b[1];
    return sqrt(dx * dx + dy * dy);
}

/* Swap correction at every ambiguity event; *n_swaps. NOMEM. */
sleapc_status sleapc__mot_link_swaps(mot_linker *L, int *n_swaps);

/* _init_pairs: the open set's first candidate pairs (mot_link_pairs.c). NOMEM. */
sleapc_status sleapc__mot_link_init_pairs(mot_linker *L);

/* _add_pairs: the ordered, feasible pairs among (ii[t], jj[t]), t < n. NOMEM. */
sleapc_status sleapc__mot_link_add_pairs(mot_linker *L, const int *ii, const int *jj, int n);

/* Open-set gap linking until no link is accepted; *n_merges. NOMEM. */
sleapc_status sleapc__mot_link_open(mot_linker *L, int *n_merges);

/* _select_anchors: the closed set's n_max anchors into anchors[0..*n_a)
 * (mot_link_anchors.c). NOMEM. */
sleapc_status sleapc__mot_link_anchors(const mot_linker *L, int n_max, int *anchors, int *n_a);

/* Closed set down to n_max identities. NOMEM. */
sleapc_status sleapc__mot_link_close(mot_linker *L, int n_max, int *n_forced, int *n_untracked);

#endif
