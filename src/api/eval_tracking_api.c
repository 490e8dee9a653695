/* Public eval-tracking functions: check arguments, call pipeline/eval. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/opts_size.h"
#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/compat.h"
#include "core/error.h"
#include "io/pyobj/pyobj.h"
#include "pipeline/eval/eval_identity.h"
#include "pipeline/eval/eval_report.h"
#include "pipeline/eval/eval_tracking.h"
#include "sleapc/eval.h"

struct sleapc_eval_tracking {
    sleapc_et_result *r;
    char *json;
    char *summary;
};

sleapc_eval_tracking_opts sleapc_eval_tracking_opts_default(void)
{
    return (sleapc_eval_tracking_opts){.struct_size = sizeof(sleapc_eval_tracking_opts),
                                       .match = NULL,
                                       .match_threshold = NAN,
                                       .oks_stddev = 0.025,
                                       .compat = SLEAPC_COMPAT_DEFAULT,
                                       .carrier = "auto",
                                       .mt_threshold = 0.8,
                                       .ml_threshold = 0.2,
                                       .user_labels_only = false,
                                       .global_identity = false};
}

/* sleap-nn 0.3.5's eval-tracking. */
static sleapc_status run_035(const char *gt_path, const char *pred_path,
                             const sleapc_eval_tracking_opts *opts, sleapc_eval_tracking **out)
{
    sleapc_id_opts o = sleapc__id_opts_default();
    const char *c = opts->carrier ? opts->carrier : "auto";
    if (!strcmp(c, "auto"))
        o.carrier = SLEAPC_ID_AUTO;
    else if (!strcmp(c, "pose"))
        o.carrier = SLEAPC_ID_POSE;
    else if (!strcmp(c, "mask"))
        o.carrier = SLEAPC_ID_MASK;
    else
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: carrier \"%s\": expected auto, pose or mask", c);
    if (opts->match)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: match \"%s\" chooses sleapc's 0.3.3 matcher; sleap-nn "
                            "0.3.5 matches by OKS (or centroid distance for one-node skeletons): "
                            "leave match unset, or choose compat 0.3.3",
                            opts->match);
    o.match_threshold = opts->match_threshold;
    o.oks_stddev = opts->oks_stddev;
    o.mt_threshold = opts->mt_threshold;
    o.ml_threshold = opts->ml_threshold;
    o.user_labels_only = opts->user_labels_only;
    o.global_identity = opts->global_identity;
    if (!isfinite(o.mt_threshold) || !isfinite(o.ml_threshold))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: mt_threshold and ml_threshold must be finite");
    sleapc_eval_tracking *et = sleapc__calloc(1, sizeof *et);
    if (!et)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    sleapc_status st = sleapc__id_run(gt_path, pred_path, &o, &et->r);
    if (st) {
        sleapc__free(et);
        return st;
    }
    *out = et;
    return SLEAPC_OK;
}

sleapc_status sleapc_eval_tracking_run(const char *gt_path, const char *pred_path,
                                       const sleapc_eval_tracking_opts *opts,
                                       sleapc_eval_tracking **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval-tracking: out is required");
    *out = NULL;
    if (!gt_path || !pred_path)
        return sleapc__fail(
            SLEAPC_ERR_INVALID_ARG,
            "eval-tracking: a ground-truth file and a predictions file are required");
    sleapc_eval_tracking_opts given, d = sleapc_eval_tracking_opts_default();
    sleapc_status rd = SLEAPC__OPTS_READ(&given, d, opts, sleapc_eval_tracking_opts);
    if (rd)
        return rd;
    opts = &given;
    if (!sleapc__compat_valid(opts->compat))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval-tracking: unknown compat value %d",
                            (int)opts->compat);
    if (!sleapc__compat_is_0_3_3(opts->compat))
        return run_035(gt_path, pred_path, opts, out);
    sleapc_et_opts o = sleapc__et_opts_default();
    const char *m = opts->match ? opts->match : "distance";
    if (strcmp(m, "distance") && strcmp(m, "oks"))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: match \"%s\": expected distance or oks", m);
    o.oks = !strcmp(m, "oks");
    o.threshold = opts->match_threshold;
    o.oks_stddev = opts->oks_stddev;
    if (!(o.oks_stddev > 0) || (!isnan(o.threshold) && !isfinite(o.threshold)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: the OKS spread must be > 0 and the threshold finite");
    sleapc_eval_tracking *et = sleapc__calloc(1, sizeof *et);
    if (!et)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    sleapc_status st = sleapc__et_run(gt_path, pred_path, &o, &et->r);
    if (st) {
        sleapc__free(et);
        return st;
    }
    *out = et;
    return SLEAPC_OK;
}

const char *sleapc_eval_tracking_json(sleapc_eval_tracking *et)
{
    if (!et || !et->r)
        return NULL;
    if (!et->json && sleapc__pyobj_to_json(et->r->metrics, &et->json))
        return NULL;
    return et->json;
}

const char *sleapc_eval_tracking_summary(sleapc_eval_tracking *et)
{
    if (!et || !et->r)
        return NULL;
    if (!et->summary && (et->r->v035 ? sleapc__id_summary(et->r, &et->summary)
                                     : sleapc__et_summary(et->r, &et->summary)))
        return NULL;
    return et->summary;
}

sleapc_status sleapc_eval_tracking_save(sleapc_eval_tracking *et, const char *path)
{
    if (!et || !path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "save tracking metrics: a result and a path are required");
    const char *json = sleapc_eval_tracking_json(et);
    if (!json)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "save tracking metrics: out of memory");
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    if (fputs(json, af.f) == EOF) {
        sleapc__atomic_abort(&af);
        return sleapc__fail(SLEAPC_ERR_IO, "save tracking metrics: %s: write failed", path);
    }
    return sleapc__atomic_commit(&af);
}

sleapc_status sleapc_eval_tracking_report(sleapc_eval_tracking *et, const char *html_path)
{
    if (!et || !html_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "report: a result and a path are required");
    return sleapc__et_report(et->r, html_path);
}

void sleapc_eval_tracking_destroy(sleapc_eval_tracking *et)
{
    if (!et)
        return;
    sleapc__et_result_free(et->r);
    sleapc__free(et->json);
    sleapc__free(et->summary);
    sleapc__free(et);
}
