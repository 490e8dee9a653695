/* Public stream functions: check arguments, call the pipeline. */
#include "core/error.h"
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

static sleapc_status check_frame(const sleapc_frame *f)
{
    if (!f || !f->data)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: frame and its data are required");
    int64_t bpp = sleapc__pixel_format_bytes(f->format);
    if (!bpp)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: unknown pixel format %d",
                            (int)f->format);
    if (f->height < 1 || f->width < 1 || f->height > 65536 || f->width > 65536)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: frame size %lldx%lld",
                            (long long)f->height, (long long)f->width);
    if (f->row_stride_bytes < f->width * bpp)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "stream predict: row stride %lld bytes is shorter than a row (%lld)",
                            (long long)f->row_stride_bytes, (long long)(f->width * bpp));
    return SLEAPC_OK;
}

sleapc_status sleapc_stream_predict(sleapc_stream *s, const sleapc_frame *f, int *n_instances)
{
    if (n_instances)
        *n_instances = 0;
    if (!s)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: stream is required");
    sleapc_status st = check_frame(f);
    return st ? st : sleapc__stream_predict(s, f, n_instances);
}

sleapc_stream_timing sleapc_stream_last_timing(const sleapc_stream *s)
{
    sleapc_stream_timing none = {0};
    return s ? sleapc__stream_last_timing(s) : none;
}
