/* Public entry point of the overlapped prediction loop: check arguments, call
 * the pipeline. */
#include "api/opts_size.h"
#include "core/error.h"
#include "pipeline/predict_stream.h"

sleapc_status sleapc_predict_array(sleapc_predictor *p, const sleapc_tensor *frames,
                                   const int64_t *frame_indices, int64_t n_indices,
                                   sleapc_writer *w, const sleapc_run_opts *opts)
{
    if (!p || !frames || !frames->data || frames->dtype != SLEAPC_DTYPE_U8 || frames->ndim < 2 ||
        frames->ndim > 4)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "predict: frames must be uint8 (H,W), (H,W,C) or (N,H,W,C)");
    sleapc_run_opts o, d = {.struct_size = sizeof d};
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_run_opts);
    return st ? st : sleapc__predict_array(p, frames, frame_indices, n_indices, w, &o);
}

sleapc_run_opts sleapc_run_opts_default(void)
{
    return (sleapc_run_opts){.struct_size = sizeof(sleapc_run_opts)};
}
