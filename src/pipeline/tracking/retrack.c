/* Retracking a predictions file (see retrack.h). */
#include "pipeline/tracking/retrack.h"

#include <string.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/results.h"
#include "pipeline/tracking/predictions_load.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"

static bool has_ext(const char *path, const char *ext)
{
    const size_t n = strlen(path), k = strlen(ext);
    return n > k && strcmp(path + n - k, ext) == 0;
}

/* One output file by extension, atomically (as sleapc_writer_close). */
static sleapc_status write_predictions(const sleapc_predictions *pr, const char *path)
{
    sleapc_status st;
    if (has_ext(path, ".slp")) {
        st = sleapc__predictions_write_slp(pr, path);
    } else if (has_ext(path, ".h5") || has_ext(path, ".hdf5")) {
        const int64_t unheld = sleapc__predictions_h5_unheld(pr);
        if (unheld > 0)
            sleapc__log(SLEAPC_LOG_WARN,
                        "%s: the analysis .h5 holds one instance per track and frame; %lld "
                        "instances are left out (%s)",
                        path, (long long)unheld,
                        pr->n_tracks ? "untracked" : "no tracks: use --tracking");
        st = sleapc__predictions_write_analysis_h5(pr, path);
    } else if (has_ext(path, ".csv") || has_ext(path, ".json")) {
        sleapc_atomic_file af;
        st = sleapc__atomic_open(path, &af);
        if (!st) {
            st = has_ext(path, ".csv") ? sleapc__predictions_write_csv(pr, af.f)
                                       : sleapc__predictions_write_json(pr, af.f);
            st = st ? (sleapc__atomic_abort(&af), st) : sleapc__atomic_commit(&af);
        }
    } else {
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write %s: unknown output format (use .slp, .h5, .csv or .json)",
                            path);
    }
    return st ? sleapc__wrap(st, "write %s", path) : SLEAPC_OK;
}

sleapc_status sleapc__retrack(const char *in_path, const char *const *out_paths, int n_out,
                              const sleapc_tracking_opts *t, const sleapc_filter_opts *f)
{
    for (int i = 0; i < n_out; i++) {
        const char *p = out_paths[i];
        if (!p || !(has_ext(p, ".slp") || has_ext(p, ".h5") || has_ext(p, ".hdf5") ||
                    has_ext(p, ".csv") || has_ext(p, ".json")))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "write %s: unknown output format (use .slp, .h5, .csv or .json)",
                                p ? p : "(null)");
    }
    sleapc_filter_config fc;
    sleapc_tracker_opts to;
    sleapc_status st = sleapc__filters_resolve(f, &fc);
    if (!st && t && t->tracking)
        st = sleapc__tracking_resolve(t, 0, &to);
    if (st)
        return st;
    sleapc_predictions pr;
    memset(&pr, 0, sizeof pr);
    int64_t n_user = 0;
    if ((st = sleapc__predictions_load(in_path, &pr, &n_user)))
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
        st = write_predictions(&pr, out_paths[i]);
    sleapc__predictions_free(&pr);
    return st;
}

