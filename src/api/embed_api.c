/* Public embedding function: arguments checked, the work in
 * pipeline/embed_detections.c. */
#include "api/opts_size.h"
#include "core/compat.h"
#include "core/error.h"
#include "pipeline/embed_detections.h"
#include "pipeline/predictor_impl.h"
#include "sleapc/embedding.h"

sleapc_status sleapc_embed_detections(const sleapc_model *model, const char *data_path,
                                      const char *out_path, const sleapc_predictor_opts *opts,
                                      int64_t *n_embedded)
{
    if (n_embedded)
        *n_embedded = 0;
    if (!model || !data_path || !out_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "embed detections: model, data_path and out_path are required");
    sleapc_predictor_opts o, d = sleapc__predictor_opts_default();
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_predictor_opts);
    if (!st && !sleapc__compat_valid(o.compat))
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "embed detections: unknown compat value %d",
                          (int)o.compat);
    return st ? st : sleapc__embed_detections(model, data_path, out_path, &o, n_embedded);
}
