/* Public stream functions: check arguments, call the pipeline. */
#include "core/error.h"
#include "pipeline/frame_view.h"
#include "pipeline/stream_impl.h"

sleapc_status sleapc_stream_create(sleapc_predictor *p, sleapc_stream **out)
{
    if (!p || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create stream: predictor and out are required");
    return sleapc__stream_create(p, out);
}

void sleapc_stream_destroy(sleapc_stream *s)
{
    sleapc__stream_destroy(s);
}

sleapc_status sleapc_stream_predict(sleapc_stream *s, const sleapc_frame *frame, int *n_instances)
{
    if (n_instances)
        *n_instances = 0;
    if (!s)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: stream is required");
    sleapc_frame f;
    sleapc_status st = sleapc__frame_resolve(frame, "stream predict", &f);
    if (st)
        return st;
    if (f.n_frames != 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "stream predict: one frame at a time, got %lld (sleapc_predictor_run "
                            "takes a batch)",
                            (long long)f.n_frames);
    return sleapc__stream_predict(s, &f, n_instances);
}

sleapc_stream_timing sleapc_stream_last_timing(const sleapc_stream *s)
{
    sleapc_stream_timing none = {0};
    return s ? sleapc__stream_last_timing(s) : none;
}
