/* TrackEval 1.3.0's CLEAR-MOT, Identity and HOTA metrics, as sleap-nn 0.3.5
 * reproduces them (sleap_nn/tracking/mot_metrics.py): a sequence is a list of
 * timesteps, each with its ground-truth ids, predicted ids and a
 * ground-truth x prediction similarity in [0, 1]. Sequences are scored one by
 * one (sleapc__mot_sequence) and combined as TrackEval's COMBINED_SEQ row
 * (sleapc__mot_combine): counts summed, ratios recomputed. */
#ifndef SLEAPC_PIPELINE_EVAL_TRACKEVAL_H
#define SLEAPC_PIPELINE_EVAL_TRACKEVAL_H

#include <stdint.h>

#include "sleapc/sleapc.h"

/* HOTA's localisation thresholds, alpha = 0.05, 0.10, ..., 0.95. */
#define SLEAPC_MOT_N_ALPHA 19

/* One sequence, built a timestep at a time (sleapc__mot_seq_push). */
typedef struct sleapc_mot_seq {
    int64_t n_steps, cap_steps;
    int64_t *g_off, *p_off, *s_off; /* [n_steps + 1]: where step t's ids and similarity start */
    int64_t *gid, *pid;             /* ids, unique within a step */
    double *sim;                    /* step t: ng x np, row-major */
    int64_t cap_g, cap_p, cap_s;
    int64_t *resets; /* steps at which CLEAR's frame-to-frame state is cleared */
    int64_t n_resets, cap_resets;
} sleapc_mot_seq;

/* Append a timestep (copies). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_seq_push(sleapc_mot_seq *s, const int64_t *gid, int64_t ng,
                                   const int64_t *pid, int64_t np, const double *sim);
/* Mark the next timestep as a reset (a new video under global identities). */
sleapc_status sleapc__mot_seq_reset_here(sleapc_mot_seq *s);
void sleapc__mot_seq_free(sleapc_mot_seq *s);

/* A sequence's counts: what COMBINED_SEQ sums. */
typedef struct sleapc_mot_counts {
    int64_t tp, fn, fp, idsw, mt, pt, ml, frag, frames;
    double motp_sum;
    int64_t idtp, idfn, idfp;
    double hota_tp[SLEAPC_MOT_N_ALPHA], hota_fn[SLEAPC_MOT_N_ALPHA], hota_fp[SLEAPC_MOT_N_ALPHA];
    double ass_a[SLEAPC_MOT_N_ALPHA], ass_re[SLEAPC_MOT_N_ALPHA], ass_pr[SLEAPC_MOT_N_ALPHA];
    double loc_a[SLEAPC_MOT_N_ALPHA];
} sleapc_mot_counts;

/* The combined scores, TrackEval's field names in snake case. */
typedef struct sleapc_mot_scores {
    double mota, motp, moda;
    int64_t idsw, frag, mt, pt, ml, clr_tp, clr_fn, clr_fp;
    double idf1, idp, idr;
    int64_t idtp, idfp, idfn;
    double hota[SLEAPC_MOT_N_ALPHA], det_a[SLEAPC_MOT_N_ALPHA], ass_a[SLEAPC_MOT_N_ALPHA];
    double loc_a[SLEAPC_MOT_N_ALPHA], det_re[SLEAPC_MOT_N_ALPHA], det_pr[SLEAPC_MOT_N_ALPHA];
    double ass_re[SLEAPC_MOT_N_ALPHA], ass_pr[SLEAPC_MOT_N_ALPHA], owta[SLEAPC_MOT_N_ALPHA];
} sleapc_mot_scores;

/* Score one sequence; CLEAR-MOT and Identity match at similarity >=
 * threshold. SLEAPC_ERR_NOMEM; SLEAPC_ERR_INVALID_ARG for a non-finite
 * similarity. */
sleapc_status sleapc__mot_sequence(const sleapc_mot_seq *s, double threshold,
                                   sleapc_mot_counts *out);

/* Combine n >= 1 sequences' counts. */
void sleapc__mot_combine(const sleapc_mot_counts *per, int64_t n, sleapc_mot_scores *out);

/* The alphas: numpy's arange(0.05, 0.99, 0.05), to the last bit. */
double sleapc__mot_alpha(int k);

#endif
