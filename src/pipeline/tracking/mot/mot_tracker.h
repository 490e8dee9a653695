/* The shared machinery of sleap-nn 0.3.5's MOT trackers
 * (tracking/mot/base.py: BaseMOTTracker): time in steps, Kalman prediction,
 * the track lifecycle (tentative, confirmed, lost, removed), labels minted
 * at confirmation and written back to the track's earlier detections, and
 * for the appearance trackers each track's re-ID memory (mot_appearance.h).
 * Each tracker (mot_sort.c, mot_ocsort.c with Deep OC-SORT's stage in
 * mot_deepocsort.c, mot_bytetrack.c with BoT-SORT's cost in mot_botsort.c,
 * mot_deepsort.c) supplies its own association of one frame. One tracker
 * tracks one video. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_TRACKER_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/ops/hungarian.h"
#include "pipeline/tracking/mot/mot_detect.h"
#include "pipeline/tracking/mot/mot_kalman.h"
#include "pipeline/tracking/mot/mot_memory.h"
#include "pipeline/tracking/mot/mot_params.h"
#include "pipeline/tracking/mot/mot_scratch.h"

typedef enum mot_state { MOT_TENTATIVE = 0, MOT_CONFIRMED, MOT_LOST, MOT_REMOVED } mot_state;

typedef struct mot_track {
    int tid;
    mot_state state;
    double mean[MOT_KF_MAX], cov[MOT_KF_MAX * MOT_KF_MAX];
    int64_t start_frame, last_frame, step;
    double last_box[4], last_raw[4], kf_center[2];
    double *last_kp; /* n_nodes * 2 */
    double last_score;
    int hits, hit_streak;
    int64_t age, tsu; /* steps since spawn / since the last match */
    /* OC-SORT: observation history (the last 2 delta_t + 1, by step) */
    int n_obs;
    int64_t *obs_step;
    double *obs_box;
    bool has_last_obs, has_vel, frozen;
    double last_obs[4], vel[2];
    double fz_mean[MOT_KF_MAX], fz_cov[MOT_KF_MAX * MOT_KF_MAX];
    int64_t fz_step;
    /* detections matched while tentative: (detection, similarity) */
    int64_t *mem_det;
    double *mem_sim;
    int n_mem, mem_cap;
    int public_id;  /* -1 until confirmed */
    mot_memory app; /* appearance trackers: the re-ID memory */
    struct mot_track *next_spare;
} mot_track;

typedef struct mot_match {
    mot_track *t;
    int det; /* in the frame */
    double sim;
} mot_match;

/* What one frame's association decided (base.py AssociationResult). */
typedef struct mot_result {
    mot_match *matches;
    int n_matches;
    bool *no_spawn; /* per detection of the frame */
    mot_track **removed;
    int n_removed;
} mot_result;

typedef struct mot_tracker mot_tracker;

/* One frame's association: the live tracks (predicted to this step) against
 * the frame's detections [d0, d0 + m) of the video. */
typedef sleapc_status (*mot_associate_fn)(mot_tracker *T, int64_t d0, int m, mot_result *r);

struct mot_tracker {
    sleapc_mot_params p;
    mot_kf kf;
    const mot_video *v;
    mot_calibration cal;
    mot_associate_fn associate;
    /* the family's lifecycle (base.py class attributes) */
    bool tentative_dies, confirm_on_streak, use_oru, keeps_obs;
    int hits_start;
    int zero_vel[2], n_zero_vel; /* velocities zeroed while not tracked */
    mot_track **tracks;          /* live tracks, in creation order */
    int n_tracks, tracks_cap;
    mot_track **dead; /* removed this frame (tracks_cap slots) */
    int n_dead;
    int next_tid, next_public;
    int64_t step, last_frame_idx;
    int name_offset;
    /* per detection of the video: public id + name_offset or -1; score */
    int *label;
    double *tscore;
    sleapc_hungarian_ws hws;
    mot_scratch tmp;  /* this frame's working memory */
    mot_track *spare; /* removed tracks, kept for reuse */
    /* appearance trackers (mot_appearance.h) */
    bool uses_app, vectors_seen;
    int app_stat;    /* the statistic thresholded: MOT_STAT_EMA or MOT_STAT_GALLERY */
    int app_gallery; /* the memories' gallery length */
    bool *vhas;      /* this frame's detections: a usable vector */
    double *vraw;    /* its float32 unit vector, in float64 (m x dim) */
    double *vunit;   /* the same renormalized in float64 */
    bool frame_vec;  /* some detection of this frame has a vector */
    int m_frame;     /* this frame's detections */
    /* the quality gate's context, taken before this frame's updates */
    bool gate_on;
    mot_track **gpool;
    int n_gpool;
    bool *gneighbor;
    double *gdet_iou, *gtrk_iou, *ggeo, *gcos;
};

/* A tracker for video v (borrowed, finished with the calibration cal);
 * label / tscore: caller arrays of v->n entries. SLEAPC_ERR_NOMEM,
 * SLEAPC_ERR_UNSUPPORTED (a tracker or setting sleapc does not run). */
sleapc_status sleapc__mot_tracker_init(mot_tracker *T, const sleapc_mot_params *p,
                                       const mot_video *v, const mot_calibration *cal,
                                       int name_offset, int *label, double *tscore);

/* Tracks frame f of the video (frames in order). */
sleapc_status sleapc__mot_tracker_frame(mot_tracker *T, int64_t f);

void sleapc__mot_tracker_free(mot_tracker *T);

/* ---- for the trackers' associations ------------------------------------ */

/* The live tracks' similarity to the frame's detections (sleap-nn's
 * _geometric_similarity: IoU of the predicted box and the padded box);
 * out: n x m. */
void sleapc__mot_geometric_sim(const mot_tracker *T, mot_track *const *tracks, int n, int64_t d0,
                               int m, double *out);

/* The same against each track's last observation (OC-SORT OCR); a track
 * never updated since its spawn scores 0. */
void sleapc__mot_last_obs_sim(const mot_tracker *T, mot_track *const *tracks, int n, int64_t d0,
                              int m, double *out);

/* Appends a match. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_result_add(mot_result *r, mot_track *t, int det, double sim);

/* The associations. */
sleapc_status sleapc__mot_sort_associate(mot_tracker *T, int64_t d0, int m, mot_result *r);
sleapc_status sleapc__mot_ocsort_associate(mot_tracker *T, int64_t d0, int m, mot_result *r);
sleapc_status sleapc__mot_bytetrack_associate(mot_tracker *T, int64_t d0, int m, mot_result *r);
sleapc_status sleapc__mot_deepsort_associate(mot_tracker *T, int64_t d0, int m, mot_result *r);

#endif
