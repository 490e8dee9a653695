/* Public writer functions: check arguments, call the pipeline. */
#include "core/error.h"
#include "pipeline/writer_impl.h"

sleapc_status sleapc_writer_open(const char *path, const sleapc_predictor *p,
                                 const sleapc_video_info *videos, int n_videos,
                                 sleapc_writer **out)
{
    if (!path || !p || !out || n_videos < 0 || (n_videos > 0 && !videos))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open writer: path, predictor and out are required");
    return sleapc__writer_open(path, p, videos, n_videos, out);
}

sleapc_status sleapc_writer_add(sleapc_writer *w, const sleapc_predictor *p, int video,
                                const int64_t *frame_indices)
{
    if (!w || !p || !frame_indices)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: bad arguments");
    return sleapc__writer_add(w, p, video, frame_indices);
}

sleapc_status sleapc_writer_close(sleapc_writer *w, int64_t *n_instances)
{
    if (n_instances)
        *n_instances = 0;
    if (!w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "close writer: no writer");
    return sleapc__writer_close(w, n_instances);
}

void sleapc_writer_discard(sleapc_writer *w)
{
    sleapc__writer_discard(w);
}

sleapc_status sleapc_writer_set_drop_empty(sleapc_writer *w, bool drop)
{
    if (!w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer drop empty: no writer");
    return sleapc__writer_set_drop_empty(w, drop);
}
