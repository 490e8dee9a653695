/* Every allocation of an evaluation failing in turn (eval, its JSON and
 * .npz, its report; bbox mode; eval-tracking): each run ends with an error status or
 * succeeds, never crashes, and frees what it took (ASan checks the leaks). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "pipeline/eval/eval_report.h"
#include "test_util.h"

static sleapc_status run_eval(const char *gt, const char *pr, bool centroid, const char *dir)
{
    sleapc_ev_opts o = sleapc__ev_opts_default();
    o.method = centroid ? SLEAPC_EV_CENTROID : SLEAPC_EV_AUTO;
    sleapc_ev_result *r = NULL;
    sleapc_status st = sleapc__ev_run(gt, pr, &o, &r);
    char path[1024], *json = NULL;
    if (!st)
        st = sleapc__pyobj_to_json(r->metrics, &json);
    snprintf(path, sizeof path, "%s/m.npz", dir);
    if (!st)
        st = sleapc__pyobj_write_npz(r->metrics, "metrics", path);
    snprintf(path, sizeof path, "%s/r.html", dir);
    if (!st)
        st = sleapc__ev_report(r, path);
    sleapc__free(json);
    sleapc__ev_result_free(r);
    return st;
}

/* bbox mode: the metrics and their files (it has no report page) */
static sleapc_status run_bbox(const char *gt, const char *pr, bool c, const char *dir)
{
    (void)c;
    sleapc_ev_opts o = sleapc__ev_opts_default();
    o.method = SLEAPC_EV_BBOX;
    sleapc_ev_result *r = NULL;
    sleapc_status st = sleapc__ev_run(gt, pr, &o, &r);
    char path[1024], *json = NULL;
    if (!st)
        st = sleapc__pyobj_to_json(r->metrics, &json);
    snprintf(path, sizeof path, "%s/b.npz", dir);
    if (!st)
        st = sleapc__pyobj_write_npz(r->metrics, "metrics", path);
    sleapc__free(json);
    sleapc__ev_result_free(r);
    return st;
}

static sleapc_status run_tracking(const char *gt, const char *pr, const char *dir)
{
    sleapc_et_opts o = sleapc__et_opts_default();
    sleapc_et_result *r = NULL;
    sleapc_status st = sleapc__et_run(gt, pr, &o, &r);
    char path[1024];
    snprintf(path, sizeof path, "%s/t.html", dir);
    if (!st)
        st = sleapc__et_report(r, path);
    sleapc__et_result_free(r);
    return st;
}

/* Fail allocation 1, 2, ... until a run makes no more than it is allowed. */
static void each_failure(const char *name,
                         sleapc_status (*run)(const char *, const char *, bool, const char *),
                         const char *gt, const char *pr, bool centroid)
{
    const int64_t before = sleapc__alloc_count();
    CHECK_MSG(run(gt, pr, centroid, test_tmp_dir()) == SLEAPC_OK, "%s: %s", name,
              sleapc_last_error());
    const int64_t total = sleapc__alloc_count() - before;
    int n_failed = 0;
    for (int64_t k = 1; k <= total; k++) {
        sleapc__alloc_fail_after(k);
        n_failed += run(gt, pr, centroid, test_tmp_dir()) != SLEAPC_OK;
        sleapc__alloc_fail_after(0);
    }
    printf("%s: %lld allocations, %d runs reported the failure\n", name, (long long)total,
           n_failed);
    CHECK_MSG(n_failed > 0, "%s: no failure seen", name);
}

static sleapc_status tracking_adapter(const char *gt, const char *pr, bool c, const char *dir)
{
    (void)c;
    return run_tracking(gt, pr, dir);
}

int main(void)
{
    test_require_data();
    char gt[1024], pr[1024];
    const char *base = "sleap-nn-assets/legacy_models/minimal_instance.UNet.centered_instance";
    snprintf(gt, sizeof gt, "%s/labels_gt.val.slp", test_data_path(base));
    snprintf(pr, sizeof pr, "%s/labels_pr.val.slp", test_data_path(base));
    each_failure("oks", run_eval, gt, pr, false);
    each_failure("centroid", run_eval, gt, pr, true);
    /* bbox: boxes derived from instances; user boxes with /categories links */
#define FAM SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
    each_failure("bbox", run_bbox, FAM "/eval/gt.slp", FAM "/cases/bbox_ssd__video/pred.slp",
                 false);
    each_failure("bbox classes", run_bbox, FAM "/eval/gt_boxes.slp", FAM "/eval/pred_classes.slp",
                 false);
    /* tracking: the first 20 frames of clip's labels would do, but the file is
     * what it is; its allocations are few (the frames are in a few arrays) */
    snprintf(gt, sizeof gt, "%s", test_data_path("sleap-assets/tracks/clip.slp"));
    snprintf(pr, sizeof pr, "%s", test_data_path("sleap-assets/tracks/clip.predictions.slp"));
    each_failure("tracking", tracking_adapter, gt, pr, false);
    return test_finish();
}
