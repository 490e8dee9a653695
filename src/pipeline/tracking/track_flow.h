/* Pyramidal Lucas-Kanade point tracking as OpenCV 4.6's calcOpticalFlowPyrLK
 * computes it on uint8 grayscale frames (sleap-nn's FlowShiftTracker): a
 * reflect-101 bordered Gaussian pyramid, Scharr derivatives, 14-bit fixed
 * point bilinear patches, float normal equations summed in the order of
 * OpenCV's 4-lane SIMD loops, at most 30 iterations or a step under 0.01 px,
 * minimum eigenvalue 1e-4. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_FLOW_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_FLOW_H

#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_track_flow sleapc_track_flow;

/* win_size: window side (>= 3); max_levels: pyramid levels above the base;
 * img_scale: frames are resized by it first (bilinear; 1 = as given);
 * cache_frames: how many frames' pyramids to keep (the candidate window + 1). */
sleapc_status sleapc__track_flow_create(int win_size, int max_levels, double img_scale,
                                        int cache_frames, sleapc_track_flow **out);
void sleapc__track_flow_destroy(sleapc_track_flow *f);

/* Moves pts (n, 2) float64 from frame prev to frame next (both height x
 * width, row-major): dst (n, 2), as float32 values (sleap-nn casts the
 * points to float32); NaN where a point is missing or was not found.
 * prev_key / next_key name the frames for the pyramid cache: a key must
 * always mean the same pixels. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__track_flow_points(sleapc_track_flow *f, const uint8_t *prev,
                                        int64_t prev_key, const uint8_t *next, int64_t next_key,
                                        int64_t height, int64_t width, const double *pts,
                                        int64_t n, double *dst);

#endif
