/* Public render functions: check arguments, call the pipeline. */
#include "api/opts_size.h"
#include "core/error.h"
#include "pipeline/render/render_job.h"

sleapc_render_opts sleapc_render_opts_default(void)
{
    sleapc_render_opts o = sleapc__render_opts_default();
    o.struct_size = sizeof o;
    return o;
}

sleapc_status sleapc_render(const char *labels_path, const char *video_path, const char *out_path,
                            const int64_t *frames, int64_t n_frames, const sleapc_render_opts *opts)
{
    if (!labels_path || !out_path || (frames && n_frames < 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "render: a labels file, an output path and (when frames are given) "
                            "at least one frame are required");
    sleapc_render_opts o, d = sleapc__render_opts_default();
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_render_opts);
    return st ? st : sleapc__render(labels_path, video_path, out_path, frames, n_frames, &o);
}
