/* Public render functions: check arguments, call the pipeline. */
#include "core/error.h"
#include "pipeline/render/render_job.h"

sleapc_render_opts sleapc_render_opts_default(void)
{
    return sleapc__render_opts_default();
}

sleapc_status sleapc_render(const char *labels_path, const char *video_path, const char *out_path,
                            const int64_t *frames, int64_t n_frames, const sleapc_render_opts *opts)
{
    if (!labels_path || !out_path || (frames && n_frames < 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "render: a labels file, an output path and (when frames are given) "
                            "at least one frame are required");
    return sleapc__render(labels_path, video_path, out_path, frames, n_frames, opts);
}
