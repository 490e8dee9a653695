/* sleap-nn run_evaluation: load both files, skip when nothing was
 * predicted, resolve auto mode, the anchor node and centroid mode's 50 px
 * default, pair videos and frames, match, and compute the metrics. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/evaluation.h"

sleapc_ev_opts sleapc__ev_opts_default(void)
{
    return (sleapc_ev_opts){.oks_stddev = 0.025,
                            .oks_scale = NAN,
                            .match_threshold = 0,
                            .user_labels_only = true,
                            .method = SLEAPC_EV_AUTO,
                            .anchor_part = NULL,
                            .centroid_method = SLEAPC_EV_C_INFER,
                            .centroid_fallback = SLEAPC_EV_C_INFER,
                            .degenerate_fallback = true,
                            .bbox_source = SLEAPC_EV_BOXES_AUTO,
                            .bbox_padding = 0.0};
}

void sleapc__ev_result_free(sleapc_ev_result *r)
{
    if (!r)
        return;
    sleapc__ev_labels_free(r->gt);
    sleapc__ev_labels_free(r->pr);
    sleapc__free(r->video_map);
    sleapc__free(r->video_rule);
    sleapc__free(r->frame_pairs);
    sleapc__free(r->pairs);
    sleapc__free(r->fn);
    sleapc__free(r->fp);
    sleapc__free(r->dists);
    sleapc__pyobj_free(r->metrics);
    sleapc__free(r);
}

/* "Empty Frame Pairs", with what did not match. */
static sleapc_status no_frame_pairs(const sleapc_ev_result *r, bool user_labels_only)
{
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    if (r->n_videos_matched == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: Empty Frame Pairs. No match found for the video frames: no "
                            "video of %s (first: %s) matches a video of %s (first: %s)",
                            pr->path, pr->n_videos ? pr->videos[0].filename : "none", gt->path,
                            gt->n_videos ? gt->videos[0].filename : "none");
    int64_t n_user = 0;
    for (int64_t i = 0; i < gt->n_insts; i++)
        n_user += !gt->insts[i].predicted;
    if (user_labels_only && n_user == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: Empty Frame Pairs. No match found for the video frames: %s "
                            "holds no user-labeled instances (use --no-user_labels_only to "
                            "evaluate against its predicted ones)",
                            gt->path);
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                        "eval: Empty Frame Pairs. No match found for the video frames: no "
                        "labeled frame of %s is also a frame of %s",
                        gt->path, pr->path);
}

sleapc_status sleapc__ev_run(const char *gt_path, const char *pr_path, const sleapc_ev_opts *o,
                             sleapc_ev_result **out)
{
    *out = NULL;
    if (!(o->oks_stddev > 0) || !isfinite(o->oks_stddev))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: --oks_stddev must be > 0");
    if (!isnan(o->oks_scale) && !isfinite(o->oks_scale))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: --oks_scale must be finite");
    if (isnan(o->match_threshold))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: --match_threshold must be a number");
    sleapc_ev_result *r = sleapc__calloc(1, sizeof *r);
    if (!r)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    r->anchor_ind = -1;
    sleapc_status st = sleapc__ev_labels_load(gt_path, &r->gt);
    if (st)
        st = sleapc__wrap(st, "eval: ground truth");
    if (!st && (st = sleapc__ev_labels_load(pr_path, &r->pr)))
        st = sleapc__wrap(st, "eval: predictions");
    if (st)
        goto fail;
    /* auto: box-only predictions are scored as boxes */
    bool boxes = false;
    for (int64_t b = 0; b < r->pr->n_boxes && !boxes; b++)
        boxes = r->pr->boxes[b].predicted;
    if (o->method == SLEAPC_EV_BBOX || (o->method == SLEAPC_EV_AUTO && boxes && !r->pr->n_insts)) {
        if ((st = sleapc__ev_bbox(r, o)))
            goto fail;
        *out = r;
        return SLEAPC_OK;
    }
    /* No frames, or frames without instances: sleap-nn skips the metrics. */
    if (r->pr->n_insts == 0) {
        *out = r;
        return SLEAPC_OK;
    }
    r->method = o->method;
    if (r->method == SLEAPC_EV_AUTO)
        r->method =
            r->pr->n_skeletons > 0 && r->pr->n_nodes == 1 ? SLEAPC_EV_CENTROID : SLEAPC_EV_OKS;
    if (o->anchor_part && r->gt->n_skeletons > 0)
        for (int k = 0; k < r->gt->n_nodes; k++)
            if (!strcmp(r->gt->node_names[k], o->anchor_part)) {
                r->anchor_ind = k;
                break;
            }
    if (o->anchor_part && r->anchor_ind < 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "eval: anchor part \"%s\" is not a node of the ground-truth skeleton: "
                    "centroids are the mean of the visible nodes",
                    o->anchor_part);
    if (r->method == SLEAPC_EV_CENTROID && o->centroid_method == SLEAPC_EV_C_ANCHOR &&
        r->anchor_ind < 0) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "eval: centroid method anchor needs --anchor_part, a node of the "
                          "ground-truth skeleton");
        goto fail;
    }
    r->match_threshold = o->match_threshold;
    if (r->method == SLEAPC_EV_CENTROID && o->match_threshold == 0)
        r->match_threshold = 50.0;
    if (r->method == SLEAPC_EV_OKS && r->gt->n_nodes != r->pr->n_nodes) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "eval: the skeletons differ: %s has %d nodes, %s has %d; OKS compares "
                          "node by node (use --match_method centroid to compare centroids)",
                          r->gt->path, r->gt->n_nodes, r->pr->path, r->pr->n_nodes);
        goto fail;
    }
    if (r->method == SLEAPC_EV_OKS)
        for (int k = 0; k < r->gt->n_nodes; k++)
            if (strcmp(r->gt->node_names[k], r->pr->node_names[k])) {
                sleapc__log(SLEAPC_LOG_WARN,
                            "eval: node %d is \"%s\" in the ground truth but \"%s\" in the "
                            "predictions: nodes are compared by position, as sleap-nn does",
                            k, r->gt->node_names[k], r->pr->node_names[k]);
                break;
            }
    if ((st = sleapc__ev_match_videos(r)) || (st = sleapc__ev_frame_pairs(r, o->user_labels_only)))
        goto fail;
    if (r->n_frame_pairs == 0) {
        st = no_frame_pairs(r, o->user_labels_only);
        goto fail;
    }
    st = r->method == SLEAPC_EV_CENTROID ? sleapc__ev_match_centroids(r, o)
                                         : sleapc__ev_match_oks(r, o);
    if (!st)
        st = sleapc__ev_metrics(r);
    if (st)
        goto fail;
    r->has_metrics = true;
    *out = r;
    return SLEAPC_OK;
fail:
    sleapc__ev_result_free(r);
    return st;
}
