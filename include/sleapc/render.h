/* Pictures and videos: predictions drawn on their frames, and frames written
 * as PNG images or video files. Every output file is written atomically: it
 * appears only when complete, and a failure leaves nothing behind. */
#ifndef SLEAPC_RENDER_H
#define SLEAPC_RENDER_H

#include <stdbool.h>

#include "sleapc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How sleapc_render draws; sleapc_render_opts_default() fills it. The abort
 * callback (sleapc_abort_set) stops after the current frame; a video keeps
 * the frames drawn so far (SLEAPC_ERR_INTERRUPTED). */
typedef struct sleapc_render_opts {
    uint32_t struct_size;  /* sizeof(sleapc_render_opts) */
    int video_index;       /* which video of the labels file (0) */
    double node_radius_px; /* node disc radius; 0: from the frame size */
    double line_width_px;  /* edge thickness; 0: from the frame size */
    double fps;            /* video outputs; 0: the source video's rate, else 30 */
} sleapc_render_opts;

SLEAPC_API sleapc_render_opts sleapc_render_opts_default(void);

/* Draw the instances of labels_path (a .slp file, predictions or labels) on
 * their frames. Edges are lines and nodes discs, coloured by track, or by
 * instance within the frame when an instance has no track; missing points
 * are not drawn; predicted instances replaced by a user instance are
 * hidden, as SLEAP hides them. Grayscale frames are drawn in colour.
 *   video_path  the frames: any input sleapc_video_open reads, or NULL for
 *               the video the labels file names (found as SLEAP finds it;
 *               images embedded in a package file are used as they are).
 *   out_path    .png: one image; .mp4 / .mov: a video (H.264, lossy);
 *               .mkv / .avi: a lossless video (FFV1). Video sides are padded
 *               to even for the lossy formats.
 *   frames      frame indices in the order wanted, not kept; NULL: the
 *               labeled frames of the video, ascending. A .png shows
 *               frames[0] (NULL: the first labeled frame). Frames without
 *               instances are written as they are.
 *   opts        NULL: the defaults.
 * Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG (NULL or bad path, a frame
 * beyond the video, an output name that is not .png or a video container,
 * no labeled frames and no list, a video index the file does not have),
 * SLEAPC_ERR_IO, SLEAPC_ERR_FORMAT (unreadable labels or video),
 * SLEAPC_ERR_UNSUPPORTED or SLEAPC_ERR_NOMEM, with a message naming the file. */
SLEAPC_API sleapc_status sleapc_render(const char *labels_path, const char *video_path,
                                       const char *out_path, const int64_t *frames,
                                       int64_t n_frames, const sleapc_render_opts *opts);

/* Write frames (N,H,W,C) or (N,H,W) uint8, C 1 or 3, as a video file at
 * path, fps frames per second (0 < fps <= 1000). lossless false: H.264
 * (MPEG-4 part 2 where FFmpeg lacks libx264), yuv420p, for .mp4/.mov/.mkv/
 * .avi; odd sides are padded to even by repeating the last row/column.
 * lossless true: FFV1 in RGB, read back exactly by sleapc_video_read, for
 * .mkv/.avi. frames is not kept. Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG
 * (bad tensor, fps or extension), SLEAPC_ERR_UNSUPPORTED (that container
 * cannot hold that codec), SLEAPC_ERR_IO or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_video_write(const char *path, const sleapc_tensor *frames,
                                            double fps, bool lossless);

/* Write one image (H,W,C) or (H,W) uint8, C 1 (gray) or 3 (RGB), as a PNG
 * file. image is not kept. Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG,
 * SLEAPC_ERR_IO, SLEAPC_ERR_UNSUPPORTED or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_image_write_png(const char *path, const sleapc_tensor *image);

#ifdef __cplusplus
}
#endif

#endif
