/* Retracking a predictions file (see retrack.h). */
#include "pipeline/tracking/retrack.h"

#include "core/error.h"
#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"

sleapc_status sleapc__retrack(const char *in_path, const char *const *out_paths, int n_out,
                              const sleapc_tracking_opts *t, const sleapc_filter_opts *f)
{
    const sleapc_pred_format *fmt;
    for (int i = 0; i < n_out; i++) {
        sleapc_status st = sleapc__pred_format_for_output(out_paths[i], &fmt);
        if (st)
            return st;
    }
    sleapc_filter_config fc;
    sleapc_tracker_opts to;
    sleapc_status st = sleapc__filters_resolve(f, &fc);
    if (!st && t && t->tracking)
        st = sleapc__tracking_resolve(t, 0, &to);
    if (st)
        return st;
    sleapc_predictions pr;
    int64_t n_user = 0;
    if ((st = sleapc__predictions_read(in_path, &pr, &n_user)))
        return st;
    if (n_user > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: %lld frames have user instances; sleapc tracks the predicted "
                    "instances and leaves the user instances out",
                    in_path, (long long)n_user);
    if (t && t->tracking)
        st = sleapc__tracking_resolve(t, pr.n_nodes, &to);
    if (!st)
        st = sleapc__predictions_postprocess(&pr, &fc, t && t->tracking ? &to : NULL, in_path);
    for (int i = 0; !st && i < n_out; i++)
        if ((st = sleapc__predictions_write_path(&pr, out_paths[i])))
            st = sleapc__wrap(st, "write %s", out_paths[i]);
    sleapc__predictions_free(&pr);
    return st;
}
