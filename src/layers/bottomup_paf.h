/* PAF line scores of a bottom-up batch: on the backend's device where it
 * offers it (backend.h: device_paf_scores) and the model's convention scores
 * as sleap-nn does, else on the host (core/paf.h), frame by frame. */
#ifndef SLEAPC_LAYERS_BOTTOMUP_PAF_H
#define SLEAPC_LAYERS_BOTTOMUP_PAF_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/bottomup_common.h"
#include "core/paf.h"
#include "layers/stage.h"

/* The device's request buffers, reused from batch to batch. */
typedef struct sleapc_paf_scorer {
    bool device; /* try the device (cleared after a refusal or failure) */
    bool told;   /* the first device scoring was logged */
    int64_t cap;
    int32_t *sample;
    float (*src)[2], (*dst)[2];
    float *t;
    int t_n;
} sleapc_paf_scorer;

/* device: whether to try the device at all (the convention's scoring is
 * sleap-nn's). */
void sleapc__paf_scorer_init(sleapc_paf_scorer *ps, bool device);
void sleapc__paf_scorer_free(sleapc_paf_scorer *ps);

/* Score the candidates of a batch of b frames. Frame s's peaks are
 * pk->peaks[peak_off[s], peak_off[s + 1]), its candidates
 * [cand_off[s], cand_off[s + 1]) of edge_inds, edge_peak_inds (peak indices
 * within the frame) and scores. pafs: the head's (B, 2E, h, w) output as the
 * stage has it (no data while it is kept on the device: the host's scoring
 * fetches it). A device refusal or failure is logged once and the host
 * scores from then on. */
sleapc_status sleapc__paf_scorer_run(sleapc_paf_scorer *ps, sleapc_stage *stage, const char *head,
                                     const sleapc_tensor *pafs, int64_t n_edges,
                                     const sleapc_peak_list *pk, const int64_t *peak_off,
                                     const int64_t *cand_off, int64_t b, const int32_t *edge_inds,
                                     const int64_t (*edge_peak_inds)[2],
                                     const sleapc_paf_score_opts *opts, float *scores);

#endif
