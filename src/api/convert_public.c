/* Public conversion and frame-selection functions: check arguments, call the
 * pipeline. */
#include "core/error.h"
#include "pipeline/convert.h"
#include "pipeline/labels_select.h"

sleapc_status sleapc_predictions_convert(const char *in_path, const char *out_path)
{
    if (!in_path || !out_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "convert: input and output paths are required");
    return sleapc__predictions_convert(in_path, out_path);
}

sleapc_status sleapc_labels_select_frames(const char *path, int video_index,
                                          sleapc_frame_filter filter, int64_t **frames,
                                          int64_t *n_frames)
{
    if (!path || !frames || !n_frames)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "select frames: path and outputs are required");
    return sleapc__labels_select_frames(path, video_index, filter, frames, n_frames);
}

sleapc_status sleapc_labels_frames_at_positions(const char *path, int video_index,
                                                const int64_t *positions, int64_t n_positions,
                                                int64_t **frames, int64_t *n_frames,
                                                int64_t *n_beyond)
{
    if (!path || !frames || !n_frames || !n_beyond || n_positions < 0 ||
        (n_positions > 0 && !positions))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "frames at positions: path, positions and outputs are required");
    return sleapc__labels_frames_at_positions(path, video_index, positions, n_positions, frames,
                                              n_frames, n_beyond);
}
