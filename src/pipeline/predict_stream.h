/* The main job's loop: frames decoded on one thread, inference and writing on
 * the caller's, joined by bounded queues so decoding overlaps the network and
 * memory stays flat however long the video. */
#ifndef SLEAPC_PIPELINE_PREDICT_STREAM_H
#define SLEAPC_PIPELINE_PREDICT_STREAM_H

#include <signal.h>

#include "sleapc/pipeline.h"

/* Where frames come from: read frame idx as (h, w, c) uint8 into dst. */
typedef struct sleapc_frame_reader {
    void *ctx;
    sleapc_status (*read)(void *ctx, int64_t idx, uint8_t *dst);
    int64_t height, width, channels;
} sleapc_frame_reader;

sleapc_status sleapc__predict_stream(sleapc_predictor *p, const sleapc_frame_reader *reader,
                                     const int64_t *frame_indices, int64_t n_frames,
                                     sleapc_writer *w, const sleapc_run_opts *opts);

/* Body of sleapc_predict_array (predict_array.c): frames is a uint8 tensor of
 * 2 to 4 dimensions, checked by the public function. */
sleapc_status sleapc__predict_array(sleapc_predictor *p, const sleapc_tensor *frames,
                                    const int64_t *frame_indices, int64_t n_indices,
                                    sleapc_writer *w, const sleapc_run_opts *opts);

#endif
