/* A track's appearance memory (sleap-nn 0.3.5 tracking/mot/appearance.py
 * AppearanceMemory): the EMA of its unit re-ID vectors and a bounded
 * gallery of its most recent ones that passed the quality gate, in
 * float64; and the quality gate itself (passes_quality_gate). */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_MEMORY_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_MEMORY_H

#include <stdbool.h>

#include "sleapc/sleapc.h"

typedef struct mot_memory {
    int dim, cap;    /* vector length, gallery capacity */
    int n_gal, head; /* gallery ring: n_gal vectors, the oldest at head */
    bool has_ema;
    bool adaptive; /* Deep OC-SORT's score-adaptive momentum */
    double alpha, floor;
    double *ema; /* dim */
    double *gal; /* cap * dim, then two work rows */
    int room;    /* doubles allocated at ema, kept on reuse */
} mot_memory;

/* An empty memory for vectors of dim values (a memory's buffers are
 * reused when they are large enough). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_memory_init(mot_memory *m, int dim, int cap, double alpha, bool adaptive,
                                      double score_floor);
void sleapc__mot_memory_free(mot_memory *m);

/* seed: EMA and gallery become the unit vector u. */
void sleapc__mot_memory_seed(mot_memory *m, const double *u);

/* update: a memory without an EMA is seeded; otherwise, when gated, the
 * EMA moves to renorm(a ema + (1 - a) u) and u joins the gallery. */
void sleapc__mot_memory_update(mot_memory *m, const double *u, double score, bool gated);

/* Cosine of x to the EMA, clipped to [-1, 1] (NaN without an EMA). */
double sleapc__mot_memory_ema_cos(const mot_memory *m, const double *x);

/* Largest cosine of the unit vector u over the gallery (the EMA's when the
 * gallery is empty), clipped. */
double sleapc__mot_memory_gallery_max(const mot_memory *m, const double *u);

/* passes_quality_gate: whether a matched detection's vector may update
 * its track's memory (min_margin NaN: no margin test). */
bool sleapc__mot_quality_gate(double score, int n_visible, int n_nodes, double max_iou_other,
                              double margin, double high_threshold, double min_margin,
                              int gallery_len);

#endif
