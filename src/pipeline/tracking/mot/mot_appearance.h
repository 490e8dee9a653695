/* The appearance side of sleap-nn 0.3.5's BaseMOTTracker (tracking/mot/
 * base.py: _appearance_cos, _appearance_gate, _appearance_margin,
 * _gate_context, _update_appearance, the memory of a spawned track): what
 * DeepSORT, StrongSORT, BoT-SORT and Deep OC-SORT share. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_APPEARANCE_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_APPEARANCE_H

#include "pipeline/tracking/mot/mot_tracker.h"

enum { MOT_STAT_EMA = 0, MOT_STAT_GALLERY = 1 };

/* Sets the tracker's appearance state (calibration read, memory length). */
void sleapc__mot_app_init(mot_tracker *T);

/* The frame's detections' vectors, into the frame's scratch.
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_app_frame(mot_tracker *T, int64_t d0, int m);

/* Minimum cosine for appearance to support a match, NaN when appearance
 * is off for association (_appearance_gate). */
double sleapc__mot_app_gate(const mot_tracker *T, int stat);

/* The calibrated association margin m_assoc, else 0. */
double sleapc__mot_app_margin(const mot_tracker *T);

/* (n x m) cosines of tracks to the frame's detections by the statistic;
 * NaN where unavailable, everywhere when the gate is off
 * (_appearance_cos). */
void sleapc__mot_app_cos(const mot_tracker *T, mot_track *const *tracks, int n, int m, int stat,
                         double *out);

/* The quality gate's context over pool (the live tracks after the
 * association; matches: whether the frame matched any). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_app_gate_context(mot_tracker *T, mot_track *const *pool, int n,
                                           int64_t d0, int m, bool matches);

/* Track t matched detection j of the frame: the quality-gated update. */
void sleapc__mot_app_matched(mot_tracker *T, mot_track *t, int64_t d0, int j);

/* Track t spawned from detection j: a new memory seeded with its vector.
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_app_spawned(mot_tracker *T, mot_track *t, int j);

/* Whether t's memory holds a vector. */
bool sleapc__mot_app_has(const mot_track *t);

/* decisive_cells: the admissible cells whose cosine is the top admissible
 * one of their row and of their column, each by a top-1 minus top-2
 * margin above 0 and at least margin. work: n * m + n + m doubles. */
void sleapc__mot_decisive_cells(const double *cos, const bool *admissible, int n, int m,
                                double margin, double *work, bool *out);

/* BoT-SORT's stage-1/3 cost of tracks rows[0..n) (of T->tracks) and the
 * frame's detections cols[0..k): cost (n x k, the geometric cost) lowered
 * where appearance decides (sim: the live tracks' n_live x m geometric
 * similarity). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_botsort_cost(mot_tracker *T, int m, const double *sim, const int *rows,
                                       int n, const int *cols, int k, double *cost);

/* Deep OC-SORT's stage 1 over every live track and the frame's detections
 * cols[0..k): valid (n x k, geometric admissibility) gains the rescues and
 * score (sim + OCM) the appearance term; sim: the stage's n x k geometric
 * similarity. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_deepocsort_stage1(mot_tracker *T, int m, const int *cols, int k,
                                            const double *sim, bool *valid, double *score);

#endif
