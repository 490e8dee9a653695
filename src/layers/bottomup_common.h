/* What the bottom-up layers share: local peaks of a confidence map in
 * model-input pixels (BottomUpLayer, BottomUpMultiClassLayer), and the
 * grouping's setup and packing (BottomUpLayer, ExportedBottomUpLayer). */
#ifndef SLEAPC_LAYERS_BOTTOMUP_COMMON_H
#define SLEAPC_LAYERS_BOTTOMUP_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/layer_outputs.h"
#include "layers/ops/grouping.h"
#include "layers/stage.h"
#include "sleapc/sleapc.h"

typedef struct sleapc_peak_list {
    int64_t n;               /* peaks found */
    int64_t cap;
    float *peaks;            /* (cap, 2) x, y in input pixels (grid peak x stride) */
    float *vals;             /* (cap) */
    int32_t *sample_inds;    /* (cap) */
    int32_t *channel_inds;   /* (cap) */
    int device;              /* the backend finds them (stage_local_peaks.h): 1 yes,
                                -1 no, 0 not asked yet */
    int64_t device_channels; /* the head's channels, for device */
} sleapc_peak_list;

/* Local peaks of cms (b, c, h, w) as convention cv finds and refines them
 * (refine_k: see peaks.h, peaks_sleap1.h; flat_tops: the stage's), multiplied
 * by stride. The arrays grow as needed and are reused. */
sleapc_status sleapc__peak_list_find(sleapc_peak_list *pl, const sleapc_convention *cv,
                                     bool flat_tops, const float *cms, int64_t b, int64_t c,
                                     int64_t h, int64_t w, double threshold, int refine_k,
                                     int stride);
void sleapc__peak_list_free(sleapc_peak_list *pl);

/* Run the stage on frames and find the peaks of its MultiInstanceConfmapsHead
 * (sleapc__peak_list_find at that head's stride, in the stage's convention;
 * the backend is asked once to find them on its device, and then they come
 * from there when it did: stage_local_peaks.h).
 * frames NULL: the stage has run (a collected batch, layer.h's collect).
 * cms: that head's output (NULL when the peaks were found on the device);
 * second: the head named second_head (PAFs or class maps), its data NULL
 * while it is kept on the device (stage_kept_heads.h). keep_second: NULL,
 * or 0 to ask, once the peaks were asked for, to keep the second head on
 * the device (then 1 when it is kept, -1 when not). */
sleapc_status sleapc__bottomup_stage_peaks(sleapc_stage *stage, sleapc_peak_list *pl,
                                           const uint8_t *frames, int64_t b, int64_t c, int64_t h,
                                           int64_t w, double threshold, int refine_k,
                                           const char *second_head, int *keep_second,
                                           const sleapc_tensor **cms,
                                           const sleapc_tensor **second);

/* The grouping options the predictor options give (min_line_scores,
 * min_instance_peaks; below 1 that is a fraction of the nodes, sleap-nn's
 * float reading). */
sleapc_grouping_opts sleapc__bottomup_grouping_opts(const sleapc_predictor_opts *o);

/* *order: a new array with the BFS edge order of the skeleton. */
sleapc_status sleapc__bottomup_edge_order(const int (*edges)[2], int n_edges, int n_nodes,
                                          int **order, int *n_order);

/* Room for b per-frame grouping results (kept across batches; they keep their
 * own arrays). who names the layer in the message. */
sleapc_status sleapc__bottomup_frames_reserve(sleapc_grouping_result **frames, int64_t *cap,
                                              int64_t b, const char *who);
void sleapc__bottomup_frames_free(sleapc_grouping_result *frames, int64_t cap);

/* Pack the grouped frames into out (sleap-nn group_scored_batch): slots for
 * the most instances a frame has (or max_instances), instance scores set, the
 * input scale undone, and with undo_eff_scale the size matcher's eff_scale too. */
sleapc_status sleapc__bottomup_outputs(sleapc_grouping_result *frames, int64_t b, int64_t n_nodes,
                                       int64_t max_instances, float input_scale, float eff_scale,
                                       bool undo_eff_scale, sleapc_layer_outputs *out);

#endif
