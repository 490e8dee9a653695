/* Frames to predict on, from whatever a user has: a video file, an image or
 * a folder of images, a .npy array, or a SLEAP labels file (.slp/.pkg.slp). */
#ifndef SLEAPC_INPUT_H
#define SLEAPC_INPUT_H

#include "sleapc/pipeline.h"
#include "sleapc/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sleapc_input sleapc_input;

/* Open path. For a labels file, video_index picks its video (0 for others),
 * and the frames predicted by default are that video's labeled frames, as
 * sleap-nn does; frames embedded in a package file are decoded from it,
 * other videos are found as SLEAP finds them (next to the labels file too).
 * Returns SLEAPC_ERR_IO, SLEAPC_ERR_FORMAT or SLEAPC_ERR_INVALID_ARG (a
 * video index the file does not have) with a message naming the file. */
SLEAPC_API sleapc_status sleapc_input_open(const char *path, int video_index, sleapc_input **out);
/* As sleapc_input_open, video frames decoded as the sleap-nn release compat
 * says (sleapc_input_open: the default, sleap-io 0.9.5's frames). */
SLEAPC_API sleapc_status sleapc_input_open_compat(const char *path, int video_index,
                                                  sleapc_compat compat, sleapc_input **out);
SLEAPC_API void sleapc_input_close(sleapc_input *in);

/* Live sources: "-" (standard input), a URL FFmpeg can open (rtsp://,
 * http(s)://, udp://, tcp://, ...), a camera (/dev/videoN; needs a build
 * with libavdevice) or a named pipe. sleapc_input_open reads them once,
 * front to back, as the frames come: they have no frame count
 * (sleapc_input_n_frames is 0), no default frames, and are predicted with
 * frames NULL (numbered 0, 1, ... in arrival order). A network source that
 * does not open within 10 s fails with SLEAPC_ERR_IO; one that stops
 * delivering frames for 10 s ends there (a warning goes to the log hook).
 * True when path names such a source (by its form; nothing is opened). */
SLEAPC_API bool sleapc_input_path_is_live(const char *path);
/* True when in was opened on a live source. */
SLEAPC_API bool sleapc_input_is_live(const sleapc_input *in);

/* Frames in the (chosen) video; valid frame indices are 0..n-1. */
SLEAPC_API int64_t sleapc_input_n_frames(const sleapc_input *in);
/* The frames predicted when the user names none: all frames, or a labels
 * file's labeled frames. Owned by in. */
SLEAPC_API int64_t sleapc_input_n_default_frames(const sleapc_input *in);
SLEAPC_API const int64_t *sleapc_input_default_frames(const sleapc_input *in);
/* What a predictions file records about the video. Strings owned by in. */
SLEAPC_API sleapc_video_info sleapc_input_video_info(const sleapc_input *in);

/* Which frames of a labels file to predict, by annotation status, as
 * sleap-nn's LabelsProvider picks them:
 *   ALL_LABELED   every labeled frame (the default of sleapc_input_open)
 *   USER_LABELED  frames with a user instance (--only_labeled_frames)
 *   SUGGESTED     suggested frames without a user instance (--only_suggested_frames)
 *   WITHOUT_USER  labeled frames without a user instance (--exclude_user_labeled)
 *   PREDICTED     frames with a predicted instance (--only_predicted_frames) */
typedef enum sleapc_frame_filter {
    SLEAPC_FRAMES_ALL_LABELED = 0,
    SLEAPC_FRAMES_USER_LABELED,
    SLEAPC_FRAMES_SUGGESTED,
    SLEAPC_FRAMES_WITHOUT_USER,
    SLEAPC_FRAMES_PREDICTED
} sleapc_frame_filter;

/* The frames of video video_index of the labels file path that pass filter,
 * ascending, each once. *frames is to be freed with sleapc_free (NULL when
 * none). Returns SLEAPC_ERR_IO / SLEAPC_ERR_FORMAT (unreadable file),
 * SLEAPC_ERR_INVALID_ARG (no such video) or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_labels_select_frames(const char *path, int video_index,
                                                     sleapc_frame_filter filter, int64_t **frames,
                                                     int64_t *n_frames);

/* sleap-nn 0.3.5's --frames on a labels file (without --video_index): the
 * entries of the file's labeled-frame list (every video, file order) at
 * `positions` (0-based, any order, repeats allowed), kept where they belong to
 * video video_index: their frame numbers, ascending, each once, into
 * *frames (freed with sleapc_free; NULL when none). *n_beyond counts the
 * distinct positions past the end of the list (sleap-nn skips them with a
 * warning). Errors as sleapc_labels_select_frames. */
SLEAPC_API sleapc_status sleapc_labels_frames_at_positions(const char *path, int video_index,
                                                           const int64_t *positions,
                                                           int64_t n_positions, int64_t **frames,
                                                           int64_t *n_frames, int64_t *n_beyond);

/* Predict frames (NULL: the default frames) of in, overlapped as
 * sleapc_predict_array does; results go to w (may be NULL). A
 * centered-instance model alone predicts a labels file as sleap-nn 0.3.5
 * does, on crops around the user instances of the frames that have any
 * (each instance scored 1), and refuses other frames larger than its crop.
 * Returns SLEAPC_OK, SLEAPC_ERR_INTERRUPTED, or the first failure. */
SLEAPC_API sleapc_status sleapc_predict_input(sleapc_predictor *p, sleapc_input *in,
                                              const int64_t *frames, int64_t n_frames,
                                              sleapc_writer *w, const sleapc_run_opts *opts);

#ifdef __cplusplus
}
#endif

#endif
