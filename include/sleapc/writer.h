/* Writing predictions to a file. The format follows the file's extension;
 * the file appears only when sleapc_writer_close succeeds (it is written to
 * a temporary file and renamed into place). */
#ifndef SLEAPC_WRITER_H
#define SLEAPC_WRITER_H

#include "sleapc/predictor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sleapc_video_info {
    const char *filename;  /* as it should be recorded */
    int64_t n_frames;
    int64_t height, width, channels;
    /* Frames embedded in the labels package `filename`: their HDF5 dataset
     * ("video0/video"), recorded so that the predictions open with those
     * images; NULL for a video file. */
    const char *dataset;
    const char *source_json; /* the package's record of the original video, or NULL */
} sleapc_video_info;

typedef struct sleapc_writer sleapc_writer;

/* Start a predictions file for p's skeleton and tracks (a centroid-only
 * model on a multi-node skeleton writes sleap-nn's one-node "centroid"
 * skeleton, each centroid its one point). Formats by
 * extension: ".slp" (SLEAP labels, as sleap-io writes them), ".h5" (SLEAP's
 * analysis HDF5), ".csv" (one row per instance), ".json" (sleapc-predictions,
 * see README). The predictor's models and options are recorded as
 * provenance. videos are copied. The frames added are kept in a temporary
 * file beside path, removed from the folder at once (memory stays flat over
 * any run length); path itself is written at close. Returns SLEAPC_OK,
 * SLEAPC_ERR_INVALID_ARG (unknown extension), SLEAPC_ERR_IO (no temporary
 * file in path's folder) or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_writer_open(const char *path, const sleapc_predictor *p,
                                            const sleapc_video_info *videos, int n_videos,
                                            sleapc_writer **out);

/* Record the frames of p's last run: frame k of the run is frame
 * frame_indices[k] of video `video`. The filters set by
 * sleapc_writer_set_tracking run here; the frames go to the temporary file.
 * SLEAPC_ERR_IO when it cannot take them (a full disk: the message names
 * path); the writer is then only good for sleapc_writer_discard. */
SLEAPC_API sleapc_status sleapc_writer_add(sleapc_writer *w, const sleapc_predictor *p, int video,
                                           const int64_t *frame_indices);

/* drop true: frames without instances are left out of the file (sleap-nn's
 * --no_empty_frames); by default every predicted frame is written. Set
 * before the first sleapc_writer_add (SLEAPC_ERR_STATE after). */
SLEAPC_API sleapc_status sleapc_writer_set_drop_empty(sleapc_writer *w, bool drop);

/* Write the file atomically and free w (also on failure). *n_instances
 * (NULL: not wanted) is how many instances the file holds: after tracking
 * (--max_tracks culls), the filters and --no_empty_frames; for an analysis
 * .h5, those its tracks hold. */
SLEAPC_API sleapc_status sleapc_writer_close(sleapc_writer *w, int64_t *n_instances);

/* Free w without writing anything. Accepts NULL. */
SLEAPC_API void sleapc_writer_discard(sleapc_writer *w);

/* Read the predictions of in_path (a .slp file's predicted instances, a
 * sleapc JSON predictions file, or a SLEAP analysis HDF5 file: one instance
 * per occupied frame and track; its frames without instances are not in it)
 * and write them to out_path in the format of its extension, atomically, as
 * sleapc_writer_close writes them. Returns SLEAPC_ERR_INVALID_ARG (unknown
 * extension, same file), SLEAPC_ERR_UNSUPPORTED (.csv inputs), SLEAPC_ERR_IO,
 * SLEAPC_ERR_FORMAT or SLEAPC_ERR_NOMEM, naming the file. */
SLEAPC_API sleapc_status sleapc_predictions_convert(const char *in_path, const char *out_path);

#ifdef __cplusplus
}
#endif

#endif
