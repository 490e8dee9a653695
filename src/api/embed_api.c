/* Public embedding functions: arguments checked, the work in
 * pipeline/embed_detections.c. */
#include "api/opts_size.h"
#include "core/compat.h"
#include "core/error.h"
#include "pipeline/embed_detections.h"
#include "pipeline/predictor_impl.h"
#include "pipeline/tracking/tracking_config.h"
#include "sleapc/embedding.h"

/* The caller's predictor options as this library's, checked. */
static sleapc_status read_predictor_opts(const sleapc_predictor_opts *opts,
                                         sleapc_predictor_opts *o)
{
    sleapc_predictor_opts d = sleapc__predictor_opts_default();
    sleapc_status st = SLEAPC__OPTS_READ(o, d, opts, sleapc_predictor_opts);
    if (!st && !sleapc__compat_valid(o->compat))
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "embed detections: unknown compat value %d",
                          (int)o->compat);
    return st;
}

sleapc_status sleapc_embed_detections(const sleapc_model *model, const char *data_path,
                                      const char *out_path, const sleapc_predictor_opts *opts,
                                      int64_t *n_embedded)
{
    if (n_embedded)
        *n_embedded = 0;
    if (!model || !data_path || !out_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "embed detections: model, data_path and out_path are required");
    sleapc_predictor_opts o;
    sleapc_status st = read_predictor_opts(opts, &o);
    return st ? st : sleapc__embed_detections(model, data_path, out_path, &o, n_embedded);
}

sleapc_status sleapc_embed_and_track(const sleapc_model *model, const char *data_path,
                                     const char *out_path, const sleapc_predictor_opts *opts,
                                     const sleapc_tracking_opts *tracking, bool keep_vectors,
                                     int64_t *n_embedded)
{
    if (n_embedded)
        *n_embedded = 0;
    if (!model || !data_path || !out_path || !tracking)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "embed and track: model, data_path, "
                                                    "out_path and tracking are required");
    sleapc_predictor_opts o;
    sleapc_tracking_opts t, td = sleapc__tracking_opts_default();
    sleapc_status st = read_predictor_opts(opts, &o);
    if (!st)
        st = SLEAPC__OPTS_READ(&t, td, tracking, sleapc_tracking_opts);
    t.tracking = true;
    return st ? st
              : sleapc__embed_and_track(model, data_path, out_path, &o, &t, keep_vectors,
                                        n_embedded);
}
