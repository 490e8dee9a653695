/* Public tracking functions: option defaults and checks; the work is in
 * pipeline/tracking. */
#include <math.h>

#include "core/error.h"
#include "pipeline/merge.h"
#include "pipeline/tracking/retrack.h"
#include "pipeline/tracking/tracking_config.h"
#include "pipeline/writer_impl.h"
#include "sleapc/tracking.h"

sleapc_tracking_opts sleapc_tracking_opts_default(void)
{
    return sleapc__tracking_opts_default();
}

sleapc_filter_opts sleapc_filter_opts_default(void)
{
    sleapc_filter_opts f = {
        .filter_overlapping = false,
        .filter_overlapping_method = "iou",
        .filter_overlapping_threshold = 0.8,
    };
    return f;
}

sleapc_status sleapc_tracking_opts_check(const sleapc_tracking_opts *t,
                                         const sleapc_filter_opts *f, int n_nodes)
{
    sleapc_tracker_opts o;
    sleapc_filter_config c;
    sleapc_status st = SLEAPC_OK;
    if (t && t->tracking)
        st = sleapc__tracking_resolve(t, n_nodes > 0 ? n_nodes : 0, &o);
    if (!st)
        st = sleapc__filters_resolve(f, &c);
    return st;
}

sleapc_status sleapc_retrack(const char *in_path, const char *const *out_paths, int n_out,
                             const sleapc_tracking_opts *t, const sleapc_filter_opts *f)
{
    if (!in_path || !out_paths || n_out < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "retrack: input and output paths required");
    return sleapc__retrack(in_path, out_paths, n_out, t, f);
}

sleapc_status sleapc_predictions_merge(const char *const *in_paths, int n_in,
                                       const char *out_path, const sleapc_tracking_opts *t,
                                       const sleapc_filter_opts *f)
{
    if (!in_paths || n_in < 1 || !out_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "merge: input and output paths required");
    for (int i = 0; i < n_in; i++)
        if (!in_paths[i])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "merge: input path %d is NULL", i);
    return sleapc__predictions_merge(in_paths, n_in, out_path, t, f);
}

sleapc_status sleapc_writer_set_tracking(sleapc_writer *w, const sleapc_tracking_opts *t,
                                         const sleapc_filter_opts *f)
{
    if (!w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "set tracking: no writer");
    return sleapc__writer_set_tracking(w, t, f);
}
