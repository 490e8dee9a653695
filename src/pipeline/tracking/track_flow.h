/* Pyramidal Lucas-Kanade point tracking as OpenCV's calcOpticalFlowPyrLK
 * computes it (sleap-nn's FlowShiftTracker): grayscale uint8 frames, a
 * winSize x winSize window, maxLevel pyramid levels, stop after 30
 * iterations or a step under 0.01 px. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_FLOW_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_FLOW_H

#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_track_flow sleapc_track_flow;

sleapc_status sleapc__track_flow_create(int win_size, int max_levels, double img_scale,
                                        sleapc_track_flow **out);
void sleapc__track_flow_destroy(sleapc_track_flow *f);

/* Moves pts (n, 2) float64 from frame prev to frame next (both height x
 * width): dst (n, 2); NaN where the point is missing or was not found. */
sleapc_status sleapc__track_flow_points(sleapc_track_flow *f, const uint8_t *prev,
                                        const uint8_t *next, int64_t height, int64_t width,
                                        const double *pts, int64_t n, double *dst);

#endif
