/* Frame sources: video files (anything FFmpeg reads), single images, folders
 * of images and .npy arrays, behind one reader.
 *
 * Frames are packed HWC uint8. A video's frames are RGB as the ffmpeg command
 * line gives them with BT.601 conversion; the channel count is fixed at open
 * by sleap-io's rule: 1 when channel 0 equals channel 2 everywhere on frame 0
 * (then every frame keeps channel 0 only), else 3. */
#ifndef SLEAPC_VIDEO_H
#define SLEAPC_VIDEO_H

#include "sleapc/sleapc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sleapc_video sleapc_video;

/* Open path:
 * - a folder: its .png/.jpg/.jpeg/.tif/.tiff/.bmp files (any case, dot files
 *   skipped) in natural name order (img2 before img10); all of one size;
 * - a .npy file: uint8 (N,H,W,C), (H,W,C), (N,H,W) or (H,W), C 1 or 3;
 * - a PNG, JPEG, TIFF (first page) or BMP file: one frame;
 * - anything else FFmpeg can demux and decode as video.
 * A video's frames are counted exactly at open by reading its packets once
 * (no decoding); frame 0 is the first frame the decoder outputs (a stream
 * cut inside a group of pictures starts at its first decodable frame, as
 * with the ffmpeg command line). Frame 0 is decoded at open. FFmpeg's own
 * logging is switched off (process-wide). On success *out is the handle;
 * close it with sleapc_video_close. On failure *out is NULL and the status is
 * SLEAPC_ERR_INVALID_ARG (NULL argument), SLEAPC_ERR_IO (missing or
 * unreadable), SLEAPC_ERR_FORMAT (corrupt, empty or not a video),
 * SLEAPC_ERR_UNSUPPORTED (no decoder) or SLEAPC_ERR_NOMEM; the message names
 * the file. */
SLEAPC_API sleapc_status sleapc_video_open(const char *path, sleapc_video **out);
/* As sleapc_video_open, frames decoded as the sleap-nn release compat says
 * (sleapc_video_open: the default, sleap-io 0.9.5's frames). */
SLEAPC_API sleapc_status sleapc_video_open_compat(const char *path, sleapc_compat compat,
                                                  sleapc_video **out);

/* Number of frames (>= 1); 0 for NULL. */
SLEAPC_API int64_t sleapc_video_n_frames(const sleapc_video *v);

/* Frame shape; each out pointer may be NULL. All 0 for a NULL v. */
SLEAPC_API void sleapc_video_shape(const sleapc_video *v, int64_t *height, int64_t *width,
                                   int64_t *channels);

/* Read frame idx (0-based) into dst: height*width*channels bytes, HWC,
 * caller-owned. Exact for any order of calls: reading frame k after frame j
 * gives frame k, also with B-frames and after seeking. Reading idx+1 after idx
 * continues decoding without a seek and, after the first frame, allocates
 * nothing in sleapc. Returns SLEAPC_ERR_INVALID_ARG (idx out of range, NULL
 * argument), SLEAPC_ERR_FORMAT (the frame cannot be decoded: damaged file),
 * SLEAPC_ERR_IO or SLEAPC_ERR_NOMEM. One thread at a time per handle. */
SLEAPC_API sleapc_status sleapc_video_read(sleapc_video *v, int64_t idx, uint8_t *dst);

/* Close and free. Accepts NULL. */
SLEAPC_API void sleapc_video_close(sleapc_video *v);

/* Decode one encoded image held in memory (PNG, JPEG, TIFF or BMP, e.g. a
 * frame embedded in a .pkg.slp; trailing zero padding is harmless). bytes is
 * not kept. On success *pixels is a new HWC uint8 buffer of (*h)*(*w)*(*c)
 * bytes, to free with sleapc_free; *c is 1 for a grayscale image (gray or
 * gray+alpha formats) and 3 otherwise (RGB order; alpha dropped). Files
 * written through OpenCV hold BGR: swap channels 0 and 2 if the source says
 * so. Returns SLEAPC_ERR_INVALID_ARG, SLEAPC_ERR_FORMAT (not a decodable
 * image), SLEAPC_ERR_UNSUPPORTED or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_image_decode(const uint8_t *bytes, size_t n, int64_t *h,
                                             int64_t *w, int64_t *c, uint8_t **pixels);

#ifdef __cplusplus
}
#endif

#endif
