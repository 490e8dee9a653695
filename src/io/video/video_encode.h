/* Writing images and videos with FFmpeg's encoders: a PNG from one frame, and
 * a video from a stream of frames. Every file is written atomically: it
 * appears under its name only once complete, and a failure leaves nothing. */
#ifndef SLEAPC_IO_VIDEO_VIDEO_ENCODE_H
#define SLEAPC_IO_VIDEO_VIDEO_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Write a packed HWC uint8 image (channels 1: gray, 3: RGB) as a PNG file
 * (8-bit gray or RGB, lossless). pixels is not kept. Returns
 * SLEAPC_ERR_INVALID_ARG (bad shape), SLEAPC_ERR_IO, SLEAPC_ERR_UNSUPPORTED
 * (no PNG encoder in this FFmpeg) or SLEAPC_ERR_NOMEM; messages name path. */
sleapc_status sleapc__png_write(const char *path, const uint8_t *pixels, int64_t height,
                                int64_t width, int64_t channels);

typedef struct sleapc_video_writer sleapc_video_writer;

/* Start a video at path. The container follows the extension (anything
 * FFmpeg's muxers know: .mp4, .mov, .mkv, .avi, ...). Frames are packed HWC
 * uint8 of height x width x channels (1: gray, written as RGB; 3: RGB).
 * lossy (lossless false): H.264 through libx264 (constant quality, CRF 18),
 * or MPEG-4 part 2 when this FFmpeg has no libx264, as yuv420p with BT.601
 * limited range; an odd width or height is padded to even by repeating the
 * last column or row. lossless: FFV1 storing 8-bit RGB (bgr0), exact on
 * read-back; the container must accept FFV1 (.mkv, .avi, .nut).
 * fps: frames per second, in (0, 1000] (stored as the nearest fraction, so
 * 29.97 becomes 2997/100). Nothing appears at path until close succeeds.
 * Returns SLEAPC_ERR_INVALID_ARG (bad size, fps, or an extension no muxer
 * knows), SLEAPC_ERR_UNSUPPORTED (the container cannot hold the codec, or
 * no encoder), SLEAPC_ERR_IO or SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__video_writer_open(const char *path, int64_t height, int64_t width,
                                        int64_t channels, double fps, bool lossless,
                                        sleapc_video_writer **out);

/* Encode the next frame (height*width*channels bytes as given at open; not
 * kept). On failure the writer stays valid only for discard. */
sleapc_status sleapc__video_writer_write(sleapc_video_writer *w, const uint8_t *pixels);

/* Flush the encoder, finish the container, sync and rename the file into
 * place. Frees w, also on failure (then nothing is left at or beside the
 * path). SLEAPC_ERR_STATE when no frame was written. */
sleapc_status sleapc__video_writer_close(sleapc_video_writer *w);

/* Free w and remove its temporary file. Accepts NULL. */
void sleapc__video_writer_discard(sleapc_video_writer *w);

/* The average frame rate FFmpeg reports for the first video stream of path,
 * or 0 when it reports none (images, .npy, damaged headers). Never fails. */
double sleapc__video_probe_fps(const char *path);

#endif
