/* The one frame descriptor of the public API: frames as they lie in the
 * caller's memory (a numpy array, a camera or grabber buffer), taken by
 * sleapc_predictor_run, sleapc_predict_array and sleapc_stream_predict. */
#ifndef SLEAPC_FRAME_H
#define SLEAPC_FRAME_H

#include "sleapc/sleapc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sleapc_pixel_format {
    SLEAPC_PIXEL_FORMAT_GRAY8 = 0, /* 1 byte per pixel: 1 channel */
    SLEAPC_PIXEL_FORMAT_RGB24,     /* 3 bytes per pixel, R G B */
    SLEAPC_PIXEL_FORMAT_BGR24      /* 3 bytes per pixel, B G R (OpenCV's order) */
} sleapc_pixel_format;

/* n_frames frames of height x width pixels, uint8, never owned. Row y of
 * frame i starts at data + (i * height + y) * row_stride_bytes: rows may be
 * padded, frames follow each other. n_frames 0 is taken as 1 and
 * row_stride_bytes 0 as packed rows (width * bytes per pixel), so
 * {.data, .height, .width, .format} is one packed frame. */
typedef struct sleapc_frame {
    const uint8_t *data;
    int64_t n_frames;
    int64_t height, width;
    int64_t row_stride_bytes;
    sleapc_pixel_format format;
} sleapc_frame;

#ifdef __cplusplus
}
#endif

#endif
