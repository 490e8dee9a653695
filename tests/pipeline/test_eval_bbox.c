/* sleapc eval --match_method bbox against sleap-nn 0.3.5's own `eval` runs
 * (tests/goldens/sleapnn-0.3.5-families/eval/<case>/: options.json with the
 * command, metrics.json as sleap-nn wrote it beside metrics.npz; GT boxes
 * derived from user instances, padded or not, and user boxes of two named
 * classes), the AP /
 * greedy matching pieces on hand-made boxes (values from sleap-nn's
 * compute_bbox_metrics and _ap_from_pr on the same arrays), and refusals.
 *
 * Tolerance: |a - b| <= 1e-9 for floats. Both sides compute in float64 on
 * the same boxes (the .slp stores the corners as float64, the scores as
 * float32 that both widen exactly); only numpy's pairwise summation in its
 * means differs from sleapc's running sums, in the last bits (measured: at
 * most 6e-16). Counts, key order and category names exact; sleap-nn's JSON
 * null is sleapc's "nan". */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/pyobj/pyobj.h"
#include "pipeline/eval/eval_bbox.h"
#include "pipeline/eval/evaluation.h"
#include "test_util.h"

#define FAM SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"

static void compare(const cJSON *got, const cJSON *want, const char *where, const char *name)
{
    char sub[256];
    if (cJSON_IsObject(want)) {
        CHECK_MSG(cJSON_IsObject(got), "%s: %s: not a dict", name, where);
        CHECK_MSG(cJSON_GetArraySize(got) == cJSON_GetArraySize(want), "%s: %s: keys", name, where);
        const cJSON *g = got ? got->child : NULL;
        for (const cJSON *w = want->child; w; w = w->next, g = g ? g->next : NULL) {
            CHECK_MSG(g && !strcmp(g->string, w->string), "%s: %s: key %s out of order", name,
                      where, w->string);
            snprintf(sub, sizeof sub, "%s.%s", where, w->string);
            compare(cJSON_GetObjectItemCaseSensitive(got, w->string), w, sub, name);
        }
    } else if (cJSON_IsArray(want)) {
        CHECK_MSG(cJSON_IsArray(got) && cJSON_GetArraySize(got) == cJSON_GetArraySize(want),
                  "%s: %s: length", name, where);
        for (int i = 0; i < cJSON_GetArraySize(want) && i < cJSON_GetArraySize(got); i++) {
            snprintf(sub, sizeof sub, "%s[%d]", where, i);
            compare(cJSON_GetArrayItem(got, i), cJSON_GetArrayItem(want, i), sub, name);
        }
    } else if (cJSON_IsNull(want)) {
        CHECK_MSG(cJSON_IsString(got) && !strcmp(got->valuestring, "nan"), "%s: %s: not nan", name,
                  where);
    } else if (cJSON_IsString(want)) {
        CHECK_MSG(cJSON_IsString(got) && !strcmp(got->valuestring, want->valuestring), "%s: %s: %s",
                  name, where, want->valuestring);
    } else if (cJSON_IsNumber(want)) {
        const double a = cJSON_IsNumber(got) ? got->valuedouble : NAN;
        CHECK_MSG(fabs(a - want->valuedouble) <= 1e-9, "%s: %s: %.17g vs sleap-nn %.17g", name,
                  where, a, want->valuedouble);
    }
}

typedef struct bcase {
    const char *name, *boxes; /* eval case, box case (NULL: the user-box case) */
    double padding;
    sleapc_ev_method method;
} bcase;

static void run_case(const bcase *c)
{
    char dir[512], path[640], gt[640], pred[640];
    snprintf(dir, sizeof dir, "%s/eval/%s", FAM, c->name);
    if (c->boxes) {
        snprintf(gt, sizeof gt, "%s/eval/gt.slp", FAM);
        snprintf(pred, sizeof pred, "%s/cases/%s/pred.slp", FAM, c->boxes);
    } else {
        snprintf(gt, sizeof gt, "%s/eval/gt_boxes.slp", FAM);
        snprintf(pred, sizeof pred, "%s/eval/pred_classes.slp", FAM);
    }
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *opts = test_load_json(path);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(opts, "command");
    /* the recorded command is what this case runs */
    CHECK_MSG(cJSON_IsString(cmd) && strstr(cmd->valuestring, "--match_method bbox") &&
                  (c->padding == 0) == !strstr(cmd->valuestring, "--bbox_padding 8"),
              "%s: options.json", c->name);
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    cJSON *want = test_load_json(path);
    CHECK_MSG(want != NULL, "%s: metrics.json", c->name);
    sleapc_ev_opts o = sleapc__ev_opts_default();
    o.method = c->method;
    o.bbox_padding = c->padding;
    sleapc_ev_result *r = NULL;
    CHECK_OK(sleapc__ev_run(gt, pred, &o, &r));
    if (r && want) {
        CHECK(r->has_metrics && r->method == SLEAPC_EV_BBOX &&
              !strcmp(r->bbox_source, c->boxes ? "instances" : "bboxes"));
        char *json = NULL;
        CHECK_OK(sleapc__pyobj_to_json(r->metrics, &json));
        cJSON *got = json ? cJSON_Parse(json) : NULL;
        compare(got, want, "metrics", c->name);
        cJSON_Delete(got);
        sleapc__free(json);
        /* sleap-nn's Python types: ints for counts, floats for the rest */
        const sleapc_pyobj *n_gt = sleapc__pyobj_get(r->metrics, "n_gt");
        const sleapc_pyobj *map = sleapc__pyobj_get(r->metrics, "bbox_mAP");
        const sleapc_pyobj *ap = sleapc__pyobj_get(r->metrics, "ap_per_class");
        CHECK(n_gt && n_gt->kind == SLEAPC_PYOBJ_INT && map && map->kind == SLEAPC_PYOBJ_FLOAT);
        CHECK(ap && ap->kind == SLEAPC_PYOBJ_ARRAY_F64 && ap->ndim == 2);
    }
    sleapc__ev_result_free(r);
    cJSON_Delete(want);
    cJSON_Delete(opts);
}

static void test_reference_cases(void)
{
    static const bcase cases[] = {
        {"bbox_centernet__video", "bbox_centernet__video", 0, SLEAPC_EV_BBOX},
        {"bbox_centernet__video_max2", "bbox_centernet__video_max2", 0, SLEAPC_EV_BBOX},
        {"bbox_ssd__video", "bbox_ssd__video", 0, SLEAPC_EV_BBOX},
        {"bbox_ssd__video_nms0.2_thr0.1", "bbox_ssd__video_nms0.2_thr0.1", 0, SLEAPC_EV_BBOX},
        {"bbox_centernet__video_pad8", "bbox_centernet__video", 8, SLEAPC_EV_BBOX},
        /* user boxes named "mouse" / "fly" (from /categories): scored per class */
        {"userboxes_2class", NULL, 0, SLEAPC_EV_BBOX},
        /* auto: box-only predictions pick bbox mode */
        {"bbox_ssd__video", "bbox_ssd__video", 0, SLEAPC_EV_AUTO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(&cases[i]);
}

static void test_pieces(void)
{
    const double a[4] = {0, 0, 10, 10}, b[8] = {5, 0, 15, 10, 20, 20, 30, 30};
    double iou[2];
    sleapc__ev_bbox_iou(a, 1, b, 2, iou);
    CHECK(fabs(iou[0] - 1.0 / 3.0) < 1e-15 && iou[1] == 0);
    /* det 0 takes its best GT; det 1 the other, or none above 0.75 */
    const double m[4] = {0.6, 0.8, 0.7, 0.9};
    int64_t gi[2];
    double mi[2];
    uint8_t taken[2];
    sleapc__ev_bbox_greedy(m, 2, 2, 0.5, gi, mi, taken);
    CHECK(gi[0] == 1 && gi[1] == 0 && mi[0] == 0.8 && mi[1] == 0.7);
    sleapc__ev_bbox_greedy(m, 2, 2, 0.75, gi, mi, taken);
    CHECK(gi[0] == 1 && gi[1] == -1 && mi[1] == 0);
    /* _ap_from_pr([.9, .8, .7], [T, F, T], 2): 0.8349834983498351, recall 1 */
    const double s[3] = {0.8, 0.9, 0.7};
    const uint8_t tp[3] = {0, 1, 1};
    int64_t order[6];
    double work[6], rec = 0;
    CHECK(fabs(sleapc__ev_bbox_ap(s, tp, 3, 2, &rec, order, work) - 0.8349834983498351) < 1e-15);
    CHECK(rec == 1.0);
    CHECK(isnan(sleapc__ev_bbox_ap(s, tp, 3, 0, &rec, order, work)) && isnan(rec));
    CHECK(sleapc__ev_bbox_ap(s, tp, 0, 2, &rec, order, work) == 0 && rec == 0);
    /* stable: equal scores keep their order */
    const double k[4] = {0.5, 0.9, 0.5, 0.9};
    int64_t ix[4], tmp[4];
    sleapc__ev_bbox_argsort_desc(k, 4, ix, tmp);
    CHECK(ix[0] == 1 && ix[1] == 3 && ix[2] == 0 && ix[3] == 2);
}

/* compute_bbox_metrics on two hand-made frames, two classes, a NaN box */
static void test_metrics(void)
{
    const double g0[8] = {0, 0, 10, 10, 20, 20, 30, 30}, g1[4] = {0, 0, 4, 4};
    const int gc0[2] = {0, 1}, gc1[1] = {0};
    const double p0[16] = {1, 1, 10, 10, 20, 20, 31, 30, 50, 50, 60, 60, 0, 0, 10, 9};
    const double s0[4] = {0.9, 0.8, 0.95, 0.5}, p1[8] = {0, 0, 4, 5, NAN, 0, 1, 1};
    const double s1[2] = {0.6, 0.99};
    const int pc0[4] = {0, 1, 0, 0}, pc1[2] = {0, 0};
    const sleapc_ev_bbox_frame f[2] = {{2, 4, g0, gc0, p0, s0, pc0}, {1, 2, g1, gc1, p1, s1, pc1}};
    const char *const cats[2] = {"a", "b"};
    sleapc_pyobj *m = NULL;
    CHECK_OK(sleapc__ev_bbox_metrics(f, 2, 2, cats, &m));
    if (!m)
        return;
    static const struct {
        const char *k;
        double v;
    } want[] = {{"bbox_mAP", 0.6959570957095711},
                {"bbox_AP50", 0.8333333333333335},
                {"bbox_AP75", 0.8333333333333335},
                {"bbox_AR", 0.85},
                {"bbox_precision", 0.75},
                {"bbox_recall", 1.0},
                {"bbox_f1", 0.8571428571428571},
                {"bbox_f1_threshold", 0.6},
                {"bbox_mean_iou", 0.8396969696969698}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const sleapc_pyobj *v = sleapc__pyobj_get(m, want[i].k);
        CHECK_MSG(v && fabs(v->f - want[i].v) <= 1e-15, "%s", want[i].k);
    }
    const sleapc_pyobj *n_pred = sleapc__pyobj_get(m, "n_pred"),
                       *fp = sleapc__pyobj_get(m, "bbox_n_fp");
    CHECK(n_pred && n_pred->i == 5 && fp && fp->i == 1);
    const sleapc_pyobj *ap = sleapc__pyobj_get(m, "ap_per_class");
    CHECK(ap && ap->shape[0] == 2 && ap->shape[1] == 10 &&
          fabs(ap->f64[7] - 0.12623762376237624) < 1e-15 && ap->f64[10] == 1.0 && ap->f64[19] == 0);
    const sleapc_pyobj *curve = sleapc__pyobj_get(m, "pr_curve");
    const sleapc_pyobj *prec = sleapc__pyobj_get(curve, "precision");
    CHECK(prec && prec->n == 5 && prec->f64[0] == 0 && prec->f64[3] == 0.75 && prec->f64[4] == 0.6);
    sleapc__pyobj_free(m);
}

static void test_refusals(void)
{
    sleapc_ev_opts o = sleapc__ev_opts_default();
    o.method = SLEAPC_EV_BBOX;
    sleapc_ev_result *r = NULL;
    /* pose predictions, no boxes: no metrics, as sleap-nn returns None */
    CHECK_OK(
        sleapc__ev_run(FAM "/eval/gt.slp", FAM "/cases/embedding__topdown_slp/pred.slp", &o, &r));
    CHECK(r && !r->has_metrics && !r->metrics);
    sleapc__ev_result_free(r);
    r = NULL;
    /* a GT of predicted boxes only: nothing to score against */
    const char *boxes = FAM "/cases/bbox_ssd__video/pred.slp";
    CHECK(sleapc__ev_run(boxes, boxes, &o, &r) == SLEAPC_ERR_INVALID_ARG && !r);
    CHECK(strstr(sleapc_last_error(), "bbox_ssd__video/pred.slp") &&
          strstr(sleapc_last_error(), "no user boxes"));
    /* masks: sleapc reads none */
    o.bbox_source = SLEAPC_EV_BOXES_MASKS;
    CHECK(sleapc__ev_run(FAM "/eval/gt.slp", boxes, &o, &r) == SLEAPC_ERR_INVALID_ARG && !r);
}

int main(void)
{
    test_pieces();
    test_metrics();
    test_reference_cases();
    test_refusals();
    return test_finish();
}
