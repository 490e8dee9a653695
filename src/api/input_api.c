/* Public input functions: check arguments, call the pipeline. */
#include "api/opts_size.h"
#include "core/compat.h"
#include "core/error.h"
#include "io/video/frame_source.h"
#include "pipeline/input_impl.h"

sleapc_status sleapc_input_open(const char *path, int video_index, sleapc_input **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open input: path and out are required");
    return sleapc__input_open(path, video_index, SLEAPC_DECODE_FFMPEG_DEFAULT, out);
}

sleapc_status sleapc_input_open_compat(const char *path, int video_index, sleapc_compat compat,
                                       sleapc_input **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open input: path and out are required");
    if (!sleapc__compat_valid(compat))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open input: unknown compat value %d",
                            (int)compat);
    return sleapc__input_open(path, video_index, sleapc__decode_rule_of(compat), out);
}

void sleapc_input_close(sleapc_input *in)
{
    sleapc__input_close(in);
}

bool sleapc_input_path_is_live(const char *path)
{
    return path && sleapc__frame_source_is_live(path);
}

bool sleapc_input_is_live(const sleapc_input *in)
{
    return in && sleapc__input_is_live(in);
}

int64_t sleapc_input_n_frames(const sleapc_input *in)
{
    return in ? sleapc__input_n_frames(in) : 0;
}

int64_t sleapc_input_n_default_frames(const sleapc_input *in)
{
    return in ? sleapc__input_n_default_frames(in) : 0;
}

const int64_t *sleapc_input_default_frames(const sleapc_input *in)
{
    return in ? sleapc__input_default_frames(in) : NULL;
}

sleapc_video_info sleapc_input_video_info(const sleapc_input *in)
{
    sleapc_video_info v = {0};
    return in ? sleapc__input_video_info(in) : v;
}

sleapc_status sleapc_predict_input(sleapc_predictor *p, sleapc_input *in, const int64_t *frames,
                                   int64_t n_frames, sleapc_writer *w, const sleapc_run_opts *opts)
{
    if (!p || !in)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: predictor and input are required");
    sleapc_run_opts o, d = {.struct_size = sizeof d};
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_run_opts);
    return st ? st : sleapc__predict_input(p, in, frames, n_frames, w, &o);
}
