/* sleap-nn 0.3.5's eval-tracking, top level (run_identity_evaluation): the
 * checks that refuse to score, then the legacy block, the carrier, the
 * motion diagnostic and the `mot` block, in sleap-nn's key order. */
#include "pipeline/eval/eval_identity.h"

#include <math.h>
#include <stdio.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_identity_blocks.h"

sleapc_id_opts sleapc__id_opts_default(void)
{
    return (sleapc_id_opts){.carrier = SLEAPC_ID_AUTO,
                            .match_threshold = NAN,
                            .mt_threshold = 0.8,
                            .ml_threshold = 0.2,
                            .user_labels_only = false,
                            .global_identity = false,
                            .oks_stddev = 0.025};
}

static int64_t n_tracked(const sleapc_ev_labels *l)
{
    int64_t n = 0;
    for (int64_t i = 0; i < l->n_insts; i++)
        n += l->insts[i].track >= 0;
    return n;
}

static sleapc_status nothing(const char *msg)
{
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval-tracking: %s", msg);
}

/* The carrier's tracked detections: sleapc reads no masks, so the mask
 * carrier has none. */
static sleapc_status check_carrier(const sleapc_id_opts *o, const sleapc_ev_labels *pr)
{
    const int64_t pose = n_tracked(pr);
    char msg[400];
    if (o->carrier == SLEAPC_ID_AUTO && !pose)
        return nothing("Nothing to score: the prediction has 0 tracked detections on either "
                       "carrier (pose or mask). Identity metrics score tracks -- run sleap-nn "
                       "track (or predict with -t) first.");
    if (o->carrier == SLEAPC_ID_MASK) {
        if (pose)
            snprintf(msg, sizeof msg,
                     "Nothing to score: the prediction has 0 tracked mask detections. The pose "
                     "carrier has %lld tracked detection(s) -- pass --carrier pose.",
                     (long long)pose);
        else
            snprintf(msg, sizeof msg,
                     "Nothing to score: the prediction has 0 tracked mask detections. Identity "
                     "metrics score tracks -- run sleap-nn track (or predict with -t) first.");
        return nothing(msg);
    }
    if (!pose)
        return nothing("Nothing to score: the prediction has 0 tracked pose detections. Identity "
                       "metrics score tracks -- run sleap-nn track (or predict with -t) first.");
    return SLEAPC_OK;
}

static bool any_single_node(const sleapc_ev_labels *l)
{
    for (int64_t i = 0; i < l->n_insts; i++)
        if (l->insts[i].n_nodes == 1)
            return true;
    return false;
}

static sleapc_status score(sleapc_et_result *r, const sleapc_id_opts *o)
{
    sleapc_id_align al;
    sleapc_status st = sleapc__id_align(r->gt, r->pr, &al);
    if (st)
        return st;
    sleapc_id_ctx c = {r->gt, r->pr, o, &al, any_single_node(r->gt) || any_single_node(r->pr), 0};
    c.threshold = !isnan(o->match_threshold) ? o->match_threshold : c.distance ? 50.0 : 0.5;
    r->oks = !c.distance;
    r->threshold = c.threshold;
    sleapc_pyobj *d = sleapc__pyobj_dict(), *mot = NULL;
    if (!d) {
        sleapc__id_align_free(&al);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    }
    if (!al.n) {
        st = nothing("Nothing to score: the prediction shares no frame with the ground truth "
                     "(compared by video path and frame index).");
        goto done;
    }
    if ((st = sleapc__id_legacy(&c, r, d)))
        goto done;
    const sleapc_pyobj *n_gt = sleapc__pyobj_get(d, "n_gt_dets");
    if (!n_gt || !n_gt->i) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "Nothing to score: no tracked ground-truth pose detections in the %lld frames "
                 "compared. Check that the ground truth carries tracks.",
                 (long long)al.n);
        st = nothing(msg);
        goto done;
    }
    if ((st = sleapc__pyobj_set(d, "carrier", sleapc__pyobj_str("pose"))))
        goto done;
    sleapc_pyobj *motion = sleapc__id_motion(r->gt);
    if ((st = sleapc__pyobj_set(d, "motion_diagnostic", motion)))
        goto done;
    if ((st = sleapc__id_mot(&c, &mot)))
        goto done;
    st = sleapc__pyobj_set(d, "mot", mot);
done:
    sleapc__id_align_free(&al);
    if (st) {
        sleapc__pyobj_free(d);
        return st;
    }
    r->metrics = d;
    return SLEAPC_OK;
}

sleapc_status sleapc__id_run(const char *gt_path, const char *pr_path, const sleapc_id_opts *o,
                             sleapc_et_result **out)
{
    *out = NULL;
    if (!(isfinite(o->oks_stddev) && o->oks_stddev > 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: oks_stddev (the per-keypoint OKS spread, e.g. the "
                            "default 0.025) must be a finite number greater than 0, got %g.",
                            o->oks_stddev);
    if (!isnan(o->match_threshold) && !isfinite(o->match_threshold))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval-tracking: match_threshold must be a finite number");
    sleapc_et_result *r = sleapc__calloc(1, sizeof *r);
    if (!r)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    r->v035 = true;
    sleapc_status st = sleapc__ev_labels_load(gt_path, &r->gt);
    if (st) {
        st = sleapc__wrap(st, "eval-tracking: ground truth");
        goto fail;
    }
    if ((st = sleapc__ev_labels_load(pr_path, &r->pr))) {
        st = sleapc__wrap(st, "eval-tracking: predictions");
        goto fail;
    }
    if ((st = check_carrier(o, r->pr)) || (st = score(r, o)))
        goto fail;
    *out = r;
    return SLEAPC_OK;
fail:
    sleapc__et_result_free(r);
    return st;
}

static double num(const sleapc_pyobj *d, const char *k)
{
    const sleapc_pyobj *v = d ? sleapc__pyobj_get(d, k) : NULL;
    if (!v)
        return NAN;
    return v->kind == SLEAPC_PYOBJ_INT ? (double)v->i : v->kind == SLEAPC_PYOBJ_FLOAT ? v->f : NAN;
}

sleapc_status sleapc__id_summary(const sleapc_et_result *r, char **out)
{
    const sleapc_pyobj *m = r->metrics, *t = sleapc__pyobj_get(m, "mot");
    char buf[2048];
    int n = snprintf(
        buf, sizeof buf,
        "Identity (legacy definitions) (pose carrier, matched by %s %g%s; %s):\n"
        "  IDSW=%.0f  IDF1=%.4f (P=%.4f R=%.4f; matched-only %.4f)  MT/PT/ML=%.0f/%.0f/%.0f  "
        "Frag=%.0f  purity=%.4f  cov=%.4f  [%.0f/%.0f GT dets matched, %.0f pred, %.0f frames]\n",
        r->oks ? "OKS >=" : "centroid distance <=", r->threshold, r->oks ? "" : " px",
        sleapc__pyobj_get(m, "global_identity")->i ? "global identities" : "per video",
        num(m, "id_switches"), num(m, "idf1"), num(m, "idp"), num(m, "idr"), num(m, "idf1_matched"),
        num(m, "mostly_tracked"), num(m, "partly_tracked"), num(m, "mostly_lost"),
        num(m, "fragmentations"), num(m, "mean_track_purity"), num(m, "mean_gt_coverage"),
        num(m, "n_matched"), num(m, "n_gt_dets"), num(m, "n_pred_dets"),
        num(m, "n_frames_compared"));
    const sleapc_pyobj *err = t ? sleapc__pyobj_get(t, "error") : NULL;
    if (err)
        snprintf(buf + n, sizeof buf - (size_t)n, "TrackEval-faithful MOT not computed: %s\n",
                 err->strs[0]);
    else if (t)
        snprintf(buf + n, sizeof buf - (size_t)n,
                 "TrackEval-faithful MOT (CLEAR-MOT / IDF1 / HOTA; HOTA averaged over alpha = "
                 "0.05..0.95):\n"
                 "  MOTA=%.4f MOTP=%.4f IDSW=%.0f Frag=%.0f MT/PT/ML=%.0f/%.0f/%.0f  "
                 "IDF1=%.4f (P=%.4f R=%.4f)  HOTA=%.4f (DetA=%.4f AssA=%.4f LocA=%.4f)  "
                 "[%.0f TP / %.0f FN / %.0f FP over %.0f GT dets, %.0f frames]\n",
                 num(t, "mota"), num(t, "motp"), num(t, "idsw"), num(t, "frag"), num(t, "mt"),
                 num(t, "pt"), num(t, "ml"), num(t, "idf1"), num(t, "idp"), num(t, "idr"),
                 num(t, "hota"), num(t, "det_a"), num(t, "ass_a"), num(t, "loc_a"),
                 num(t, "clr_tp"), num(t, "clr_fn"), num(t, "clr_fp"), num(t, "n_gt_dets"),
                 num(t, "n_frames"));
    if (!(*out = sleapc__strdup(buf)))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    return SLEAPC_OK;
}
