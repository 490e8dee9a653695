/* Public tracking functions: option defaults and checks; the work is in
 * pipeline/tracking. */
#include <math.h>

#include "api/opts_size.h"
#include "core/error.h"
#include "pipeline/merge.h"
#include "pipeline/tracking/retrack.h"
#include "pipeline/tracking/tracking_config.h"
#include "pipeline/writer_impl.h"
#include "sleapc/tracking.h"

sleapc_tracking_opts sleapc_tracking_opts_default(void)
{
    sleapc_tracking_opts t = sleapc__tracking_opts_default();
    t.struct_size = sizeof t;
    return t;
}

static sleapc_filter_opts filter_defaults(void)
{
    sleapc_filter_opts f = {
        .struct_size = sizeof f,
        .filter_overlapping = false,
        .filter_overlapping_method = "iou",
        .filter_overlapping_threshold = 0.8,
    };
    return f;
}

sleapc_filter_opts sleapc_filter_opts_default(void)
{
    return filter_defaults();
}

/* The caller's tracking and filter options (either may be NULL: off) as this
 * library's structs, into *t_out / *f_out (NULL when not given). */
static sleapc_status read_opts(const sleapc_tracking_opts *t, const sleapc_filter_opts *f,
                               sleapc_tracking_opts *t_buf, sleapc_filter_opts *f_buf,
                               const sleapc_tracking_opts **t_out, const sleapc_filter_opts **f_out)
{
    sleapc_tracking_opts td = sleapc__tracking_opts_default();
    sleapc_filter_opts fd = filter_defaults();
    sleapc_status st = SLEAPC__OPTS_READ(t_buf, td, t, sleapc_tracking_opts);
    if (!st)
        st = SLEAPC__OPTS_READ(f_buf, fd, f, sleapc_filter_opts);
    *t_out = t ? t_buf : NULL;
    *f_out = f ? f_buf : NULL;
    return st;
}

/* Declares t2 / f2, the options read, and returns on a refused struct. */
#define READ_OPTS(t, f)                                                                            \
    sleapc_tracking_opts t_buf;                                                                    \
    sleapc_filter_opts f_buf;                                                                      \
    const sleapc_tracking_opts *t2;                                                                \
    const sleapc_filter_opts *f2;                                                                  \
    sleapc_status rd = read_opts(t, f, &t_buf, &f_buf, &t2, &f2);                                  \
    if (rd)                                                                                        \
    return rd

sleapc_status sleapc_tracking_opts_check(const sleapc_tracking_opts *t,
                                         const sleapc_filter_opts *f, int n_nodes)
{
    READ_OPTS(t, f);
    sleapc_tracker_opts o;
    sleapc_filter_config c;
    sleapc_status st = SLEAPC_OK;
    if (t2 && t2->tracking)
        st = sleapc__tracking_resolve(t2, n_nodes > 0 ? n_nodes : 0, &o);
    if (!st)
        st = sleapc__filters_resolve(f2, &c);
    return st;
}

sleapc_status sleapc_retrack(const char *in_path, const char *const *out_paths, int n_out,
                             const sleapc_tracking_opts *t, const sleapc_filter_opts *f)
{
    if (!in_path || !out_paths || n_out < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "retrack: input and output paths required");
    READ_OPTS(t, f);
    return sleapc__retrack(in_path, out_paths, n_out, t2, f2);
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
    READ_OPTS(t, f);
    return sleapc__predictions_merge(in_paths, n_in, out_path, t2, f2);
}

sleapc_status sleapc_writer_set_tracking(sleapc_writer *w, const sleapc_tracking_opts *t,
                                         const sleapc_filter_opts *f)
{
    if (!w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "set tracking: no writer");
    READ_OPTS(t, f);
    return sleapc__writer_set_tracking(w, t2, f2);
}
