/* The public frame descriptor (include/sleapc/frame.h) read by the
 * pipeline: checked with its defaults filled in, then frame by frame packed
 * into the predictor's HWC layout or copied straight into the network's CHW
 * input. */
#ifndef SLEAPC_PIPELINE_FRAME_VIEW_H
#define SLEAPC_PIPELINE_FRAME_VIEW_H

#include <stdbool.h>

#include "sleapc/frame.h"

/* *out = *in with n_frames and row_stride_bytes resolved (0 -> 1 and packed
 * rows); SLEAPC_ERR_INVALID_ARG, naming `what` (the caller), when in is NULL,
 * without data, of an unknown format, empty or too large, or with rows
 * shorter than a row of pixels. */
sleapc_status sleapc__frame_resolve(const sleapc_frame *in, const char *what, sleapc_frame *out);

/* Channels of f's pixels: 1 (gray) or 3 (RGB, BGR). */
int64_t sleapc__frame_channels(const sleapc_frame *f);

/* Whether f (resolved) already lies as packed gray or RGB frames, usable in
 * place as (N,H,W,C). */
bool sleapc__frame_is_packed(const sleapc_frame *f);

/* Frame i of f (resolved) as packed gray or RGB rows (H,W,C) in dst. */
void sleapc__frame_pack(const sleapc_frame *f, int64_t i, uint8_t *dst);

/* Frame i of f (resolved) as the network's (C,H,W) planes in chw. */
void sleapc__frame_to_planes(const sleapc_frame *f, int64_t i, uint8_t *chw);

#endif
