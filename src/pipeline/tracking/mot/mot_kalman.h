/* The constant-velocity box Kalman filters of sleap-nn's MOT trackers
 * (tracking/mot/kalman.py): xysr (SORT, OC-SORT: [cx, cy, area, w/h],
 * 7-D state, fixed noise), xyah ([cx, cy, w/h, h]) and xywh ([cx, cy, w, h]),
 * both 8-D with size-scaled noise. Boxes go in and out as xyxy; sides are
 * clamped to >= 1 px. A track owns its mean and covariance; the filter is
 * configuration only. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_KALMAN_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_KALMAN_H

#include <stdbool.h>

enum { MOT_KF_MAX = 8 };

typedef enum mot_kf_kind { MOT_KF_XYWH = 0, MOT_KF_XYAH, MOT_KF_XYSR } mot_kf_kind;

typedef struct mot_kf {
    mot_kf_kind kind;
    int ndim; /* 7 (xysr) or 8 */
    bool nsa; /* measurement noise scaled by (1 - score)^2 (StrongSORT NSA) */
} mot_kf;

mot_kf sleapc__mot_kf(mot_kf_kind kind, bool nsa);

/* xyxy -> the filter's measurement (non-finite coordinates propagate). */
void sleapc__mot_kf_z(const mot_kf *kf, const double box[4], double z[4]);

/* State mean -> xyxy box. */
void sleapc__mot_kf_box(const mot_kf *kf, const double *mean, double box[4]);

/* A new state from a first box (non-finite coordinates read as 0). */
void sleapc__mot_kf_initiate(const mot_kf *kf, const double box[4], double *mean, double *cov);

/* One prediction step, in place. */
void sleapc__mot_kf_predict(const mot_kf *kf, double *mean, double *cov);

/* Correction with an xyxy box, in place; score: the detection's confidence
 * (read with nsa only; NaN: none). A non-finite box, or a non-finite result,
 * leaves the state as it was. */
void sleapc__mot_kf_update(const mot_kf *kf, double *mean, double *cov, const double box[4],
                           double score);

/* OC-SORT's observation-centric re-update: from the state frozen at a
 * track's first miss, replay n_gap steps of predict + update along boxes
 * interpolated (in cx, cy, w, h) from last_obs to new_obs, the last being
 * new_obs itself; frozen_steps: steps the frozen state had been predicted
 * past last_obs. Result in mean / cov (ready for the real update). */
void sleapc__mot_kf_oru(const mot_kf *kf, const double *frozen_mean, const double *frozen_cov,
                        const double last_obs[4], const double new_obs[4], int n_gap, double score,
                        int frozen_steps, double *mean, double *cov);

/* Squared Mahalanobis distances of m boxes' centres to the state's
 * projected position (gating_distances with only_position: un-scaled
 * measurement noise); inf for a non-finite box or state. */
void sleapc__mot_kf_gating_position(const mot_kf *kf, const double *mean, const double *cov,
                                    const double *boxes, int m, double *out);

#endif
