/* Real-time prediction: one camera frame in, that frame's poses out, with
 * the frame taken as a camera or a grabber hands it over (gray, RGB or BGR
 * rows, with padding between rows), and the time each call took. */
#ifndef SLEAPC_STREAM_H
#define SLEAPC_STREAM_H

#include "sleapc/predictor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Time one sleapc_stream_predict call took, in milliseconds: the whole call,
 * and the part spent converting the frame to the predictor's layout. */
typedef struct sleapc_stream_timing {
    double total_ms;
    double convert_ms;
} sleapc_stream_timing;

typedef struct sleapc_stream sleapc_stream;

/* A stream over predictor p (borrowed: it must outlive the stream; one
 * stream per predictor at a time, one thread at a time). Returns SLEAPC_OK,
 * SLEAPC_ERR_INVALID_ARG or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_stream_create(sleapc_predictor *p, sleapc_stream **out);
/* Accepts NULL. */
SLEAPC_API void sleapc_stream_destroy(sleapc_stream *s);

/* Predict one frame (frame->n_frames 0 or 1); *n_instances (may be NULL) is the number of instances
 * found. The poses are then read as frame 0 of the predictor's last run
 * (sleapc_predictor_frame_results). After the first frame of a size, a call
 * allocates nothing in the stream. Returns SLEAPC_OK,
 * SLEAPC_ERR_INVALID_ARG (bad frame) or a prediction failure. */
SLEAPC_API sleapc_status sleapc_stream_predict(sleapc_stream *s, const sleapc_frame *frame,
                                               int *n_instances);

/* Timing of the last sleapc_stream_predict call (zeros before the first). */
SLEAPC_API sleapc_stream_timing sleapc_stream_last_timing(const sleapc_stream *s);

#ifdef __cplusplus
}
#endif

#endif
