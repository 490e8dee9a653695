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
