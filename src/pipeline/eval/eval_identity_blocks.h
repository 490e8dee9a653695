/* The two blocks of eval-tracking's result (eval_identity.h), each over the
 * same alignment and matcher. */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_BLOCKS_H
#define SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_BLOCKS_H

#include "pipeline/eval/eval_identity.h"
#include "pipeline/eval/eval_identity_frames.h"

typedef struct sleapc_id_ctx {
    const sleapc_ev_labels *gt, *pr;
    const sleapc_id_opts *o;
    const sleapc_id_align *al;
    bool distance;    /* a one-node skeleton: match centroids by pixel distance */
    double threshold; /* OKS, or px for distance */
} sleapc_id_ctx;

/* The frame's tracked predictions, in file order; returns how many. */
int64_t sleapc__id_pred_tracked(const sleapc_ev_labels *pr, int64_t f, int64_t *out);

/* identity_metrics: the legacy block's fields (dict d, sleap-nn's order, up
 * to notes) and the report's per-frame data in r. */
sleapc_status sleapc__id_legacy(const sleapc_id_ctx *c, sleapc_et_result *r, sleapc_pyobj *d);

/* compute_mot_metrics: the `mot` block; *out a new dict ({"error": ...}
 * where sleap-nn refuses the files: a track on two detections of a frame). */
sleapc_status sleapc__id_mot(const sleapc_id_ctx *c, sleapc_pyobj **out);

/* sleap-nn's human-readable caveats, in the order they arose. */
typedef struct sleapc_id_notes {
    int n;
    char *s[16];
} sleapc_id_notes;

/* Add a note (printf format); false when out of memory. */
bool sleapc__id_note(sleapc_id_notes *n, const char *fmt, ...);
/* The alignment's notes (_align_identity_frames). */
bool sleapc__id_align_notes(const sleapc_id_align *al, sleapc_id_notes *n);
/* Set key "notes" of d to the list; frees the notes. */
sleapc_status sleapc__id_put_notes(sleapc_pyobj *d, sleapc_id_notes *n);
void sleapc__id_notes_free(sleapc_id_notes *n);

/* Put a float, None when not finite (sleap-nn's JSON). */
sleapc_status sleapc__id_put_num(sleapc_pyobj *d, const char *k, double v);

#endif
