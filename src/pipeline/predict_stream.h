/* The main job's loop: frames decoded on one thread, inference and writing on
 * the caller's, joined by bounded queues so decoding overlaps the network and
 * memory stays flat however long the video. */
#ifndef SLEAPC_PIPELINE_PREDICT_STREAM_H
#define SLEAPC_PIPELINE_PREDICT_STREAM_H

#include "sleapc/pipeline.h"

/* Where frames come from: read frame idx into dst as (c, h, w) uint8, the
 * network's input layout, so a frame is copied once between its source and
 * the network (frame_layout.h). A live source has next instead: the next
 * frame into dst, or *end. */
typedef struct sleapc_frame_reader {
    void *ctx;
    sleapc_status (*read)(void *ctx, int64_t idx, uint8_t *dst);
    sleapc_status (*next)(void *ctx, uint8_t *dst, bool *end);
    /* Optional: called on the caller's thread before frames idx[0..n) go
     * through the predictor (a labels file gives their instances). */
    sleapc_status (*before)(void *ctx, const int64_t *idx, int64_t n);
    int64_t height, width, channels;
} sleapc_frame_reader;

/* frame_indices NULL with a reader that has next: every frame to the end,
 * numbered 0, 1, ... (n_frames is ignored; progress totals are 0). */
sleapc_status sleapc__predict_stream(sleapc_predictor *p, const sleapc_frame_reader *reader,
                                     const int64_t *frame_indices, int64_t n_frames,
                                     sleapc_writer *w, const sleapc_run_opts *opts);

/* Body of sleapc_predict_array (predict_array.c): frames resolved by
 * sleapc__frame_resolve (frame_view.h) in the public function. */
sleapc_status sleapc__predict_array(sleapc_predictor *p, const sleapc_frame *frames,
                                    const int64_t *frame_indices, int64_t n_indices,
                                    sleapc_writer *w, const sleapc_run_opts *opts);

#endif
