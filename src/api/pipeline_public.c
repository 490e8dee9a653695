/* Public entry point of the overlapped prediction loop: check arguments, call
 * the pipeline. */
#include "api/opts_size.h"
#include "core/error.h"
#include "pipeline/frame_view.h"
#include "pipeline/predict_stream.h"

sleapc_status sleapc_predict_array(sleapc_predictor *p, const sleapc_frame *frames,
                                   const int64_t *frame_indices, int64_t n_indices,
                                   sleapc_writer *w, const sleapc_run_opts *opts)
{
    if (!p)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: predictor is required");
    sleapc_frame f;
    sleapc_status st = sleapc__frame_resolve(frames, "predict", &f);
    if (st)
        return st;
    sleapc_run_opts o, d = {.struct_size = sizeof d};
    st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_run_opts);
    return st ? st : sleapc__predict_array(p, &f, frame_indices, n_indices, w, &o);
}

sleapc_run_opts sleapc_run_opts_default(void)
{
    return (sleapc_run_opts){.struct_size = sizeof(sleapc_run_opts)};
}
