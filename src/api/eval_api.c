/* Public evaluation functions: check arguments, call pipeline/eval. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/opts_size.h"
#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/compat.h"
#include "core/error.h"
#include "core/suffix.h"
#include "io/pyobj/pyobj.h"
#include "pipeline/eval/eval_report.h"
#include "pipeline/eval/evaluation.h"
#include "sleapc/eval.h"

struct sleapc_eval {
    sleapc_ev_result *r;
    char *json;    /* cached sleapc_eval_metrics_json */
    char *summary; /* cached sleapc_eval_summary */
};

sleapc_eval_opts sleapc_eval_opts_default(void)
{
    const sleapc_ev_opts d = sleapc__ev_opts_default();
    return (sleapc_eval_opts){.struct_size = sizeof(sleapc_eval_opts),
                              .oks_stddev = d.oks_stddev,
                              .oks_scale = d.oks_scale,
                              .match_threshold = d.match_threshold,
                              .user_labels_only = d.user_labels_only,
                              .match_method = "auto",
                              .anchor_part = NULL,
                              .compat = SLEAPC_COMPAT_DEFAULT,
                              .centroid_method = NULL,
                              .centroid_fallback = NULL,
                              .bbox_source = "auto",
                              .bbox_padding = 0.0};
}

/* A centroid method's name (anchor only as the method, not the fallback). */
static sleapc_status parse_centroid(const char *s, bool method, sleapc_ev_centroid *out)
{
    *out = SLEAPC_EV_C_INFER;
    if (!s)
        return SLEAPC_OK;
    if (!strcmp(s, "center_of_mass"))
        *out = SLEAPC_EV_C_MEAN;
    else if (!strcmp(s, "bbox_center"))
        *out = SLEAPC_EV_C_BBOX;
    else if (!strcmp(s, "geometric_median"))
        *out = SLEAPC_EV_C_MEDIAN;
    else if (method && !strcmp(s, "anchor"))
        *out = SLEAPC_EV_C_ANCHOR;
    else
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: centroid %s \"%s\": expected center_of_mass, bbox_center, "
                            "geometric_median%s",
                            method ? "method" : "fallback", s, method ? " or anchor" : "");
    return SLEAPC_OK;
}

sleapc_status sleapc_eval_run(const char *gt_path, const char *pred_path,
                              const sleapc_eval_opts *opts, sleapc_eval **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: out is required");
    *out = NULL;
    if (!gt_path || !pred_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: a ground-truth file and a predictions file are required");
    sleapc_eval_opts given, d = sleapc_eval_opts_default();
    sleapc_status rd = SLEAPC__OPTS_READ(&given, d, opts, sleapc_eval_opts);
    if (rd)
        return rd;
    opts = &given;
    sleapc_ev_opts o = sleapc__ev_opts_default();
    o.oks_stddev = opts->oks_stddev;
    o.oks_scale = opts->oks_scale;
    o.match_threshold = opts->match_threshold;
    o.user_labels_only = opts->user_labels_only;
    o.anchor_part = opts->anchor_part;
    const char *m = opts->match_method ? opts->match_method : "auto";
    if (!strcmp(m, "auto"))
        o.method = SLEAPC_EV_AUTO;
    else if (!strcmp(m, "oks"))
        o.method = SLEAPC_EV_OKS;
    else if (!strcmp(m, "centroid"))
        o.method = SLEAPC_EV_CENTROID;
    else if (!strcmp(m, "bbox"))
        o.method = SLEAPC_EV_BBOX;
    else
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: match method \"%s\": expected auto, oks, centroid or bbox", m);
    if (!sleapc__compat_valid(opts->compat))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: unknown compat value %d",
                            (int)opts->compat);
    o.degenerate_fallback = !sleapc__compat_is_0_3_3(opts->compat);
    if (parse_centroid(opts->centroid_method, true, &o.centroid_method) ||
        parse_centroid(opts->centroid_fallback, false, &o.centroid_fallback))
        return SLEAPC_ERR_INVALID_ARG;
    const char *bs = opts->bbox_source ? opts->bbox_source : "auto";
    if (strcmp(bs, "auto") && strcmp(bs, "bboxes") && strcmp(bs, "instances") &&
        strcmp(bs, "masks"))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: bbox source \"%s\": expected auto, bboxes, instances or masks",
                            bs);
    if (!isfinite(opts->bbox_padding))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: bbox padding must be finite");
    o.bbox_source = !strcmp(bs, "bboxes")      ? SLEAPC_EV_BOXES_BBOXES
                    : !strcmp(bs, "instances") ? SLEAPC_EV_BOXES_INSTANCES
                    : !strcmp(bs, "masks")     ? SLEAPC_EV_BOXES_MASKS
                                               : SLEAPC_EV_BOXES_AUTO;
    o.bbox_padding = opts->bbox_padding;
    sleapc_eval *ev = sleapc__calloc(1, sizeof *ev);
    if (!ev)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    sleapc_status st = sleapc__ev_run(gt_path, pred_path, &o, &ev->r);
    if (st) {
        sleapc__free(ev);
        return st;
    }
    *out = ev;
    return SLEAPC_OK;
}

bool sleapc_eval_has_metrics(const sleapc_eval *ev)
{
    return ev && ev->r && ev->r->has_metrics;
}

const char *sleapc_eval_metrics_json(sleapc_eval *ev)
{
    if (!sleapc_eval_has_metrics(ev))
        return NULL;
    if (!ev->json && sleapc__pyobj_to_json(ev->r->metrics, &ev->json))
        return NULL;
    return ev->json;
}

const char *sleapc_eval_summary(sleapc_eval *ev)
{
    if (!ev || !ev->r)
        return NULL;
    if (!ev->summary && sleapc__ev_summary(ev->r, &ev->summary))
        return NULL;
    return ev->summary;
}

static sleapc_status write_text(const char *path, const char *text)
{
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    if (fputs(text, af.f) == EOF) {
        sleapc__atomic_abort(&af);
        return sleapc__fail(SLEAPC_ERR_IO, "save metrics: %s: write failed", path);
    }
    return sleapc__atomic_commit(&af);
}

sleapc_status sleapc_eval_save(sleapc_eval *ev, const char *path)
{
    if (!ev || !path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "save metrics: a result and a path are required");
    if (!sleapc_eval_has_metrics(ev))
        return SLEAPC_OK;
    const char *json = sleapc_eval_metrics_json(ev);
    if (!json)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "save metrics: out of memory");
    if (sleapc__ends_with(path, ".json"))
        return write_text(path, json);
    /* sleap-nn: the .npz, and a .json of the same stem beside it */
    char sibling[4096];
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    const size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
    if (stem + 6 > sizeof sibling)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "save metrics: %s: path too long", path);
    snprintf(sibling, sizeof sibling, "%.*s.json", (int)stem, path);
    sleapc_status st = sleapc__pyobj_write_npz(ev->r->metrics, "metrics", path);
    if (!st)
        st = write_text(sibling, json);
    return st;
}

sleapc_status sleapc_eval_report(sleapc_eval *ev, const char *html_path)
{
    if (!ev || !html_path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "report: a result and a path are required");
    return sleapc__ev_report(ev->r, html_path);
}

void sleapc_eval_destroy(sleapc_eval *ev)
{
    if (!ev)
        return;
    sleapc__ev_result_free(ev->r);
    sleapc__free(ev->json);
    sleapc__free(ev->summary);
    sleapc__free(ev);
}
