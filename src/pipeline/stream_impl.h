/* Real-time prediction of one frame at a time (include/sleapc/stream.h):
 * strided gray / RGB / BGR frames packed into the predictor's HWC layout (in
 * a buffer kept between calls), predicted as a batch of one, and timed. */
#ifndef SLEAPC_PIPELINE_STREAM_IMPL_H
#define SLEAPC_PIPELINE_STREAM_IMPL_H

#include "sleapc/stream.h"

/* Bytes per pixel of a format; 0 for one this library does not know. */
int64_t sleapc__pixel_format_bytes(sleapc_pixel_format f);

/* The bodies of the public stream functions; pointers are never NULL here
 * and the frame is checked (api/stream_api.c). */
sleapc_status sleapc__stream_create(sleapc_predictor *p, sleapc_stream **out);
void sleapc__stream_destroy(sleapc_stream *s);
sleapc_status sleapc__stream_predict(sleapc_stream *s, const sleapc_frame *f, int *n_instances);
sleapc_stream_timing sleapc__stream_last_timing(const sleapc_stream *s);

#endif
