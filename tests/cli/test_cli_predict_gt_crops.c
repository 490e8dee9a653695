/* `sleapc predict --data_path LABELS -m CENTERED_INSTANCE` (and -i LABELS):
 * a centered-instance model alone on a labels file crops around the labels'
 * user instances, as sleap-nn 0.3.5 does (use_gt_centroids). Each case of
 * tests/goldens/sleapnn-0.3.5-gt-crops is run with its command and its JSON
 * output compared with sleap-nn's expected.json: the same frames, the same
 * instances in the same order, points within 0.02 px, point and instance
 * scores within 1e-5 (instance scores are 1). Then a lone centered-instance
 * model on a video (no labels) is refused. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define GOLDENS SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-gt-crops"
#define MODEL "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"
#define PX_TOL 0.02
#define SCORE_TOL 1e-5

static const struct {
    const char *name, *labels, *flag, *extra;
} cases[] = {
    {"centered_instance__minimal_instance_pkg_slp__gt_crops",
     "sleap-nn-assets/datasets/minimal_instance.pkg.slp", "--data_path", ""},
    {"centered_instance__small_robot_minimal_slp__gt_crops",
     "sleap-nn-assets/datasets/small_robot_minimal.slp", "--data_path", ""},
    {"centered_instance__small_robot_minimal_slp__gt_crops",
     "sleap-nn-assets/datasets/small_robot_minimal.slp", "-i", ""},
    {"centered_instance__minimal_instance_pkg_slp__gt_crops_anchor_B",
     "sleap-nn-assets/datasets/minimal_instance.pkg.slp", "--data_path", "--anchor_part B"},
};

static cJSON *load(const char *path)
{
    size_t n = 0;
    unsigned char *text = test_read_file(path, &n);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, n) : NULL;
    free(text);
    CHECK_MSG(j != NULL, "%s: not read", path);
    return j;
}

/* A JSON number, or NaN for null. */
static double num(const cJSON *v)
{
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Worst difference of two lists of numbers or [x, y] pairs (null: NaN); a
 * NaN on one side only is infinite. skip (optional, a list as long): entry
 * k is not compared where skip's is null (a missing node's score: sleap-nn
 * stores 0 in the .slp, as sleapc's .slp does, and sleapc's JSON null). */
static double worst_diff(const cJSON *want, const cJSON *got, const cJSON *skip)
{
    if (cJSON_GetArraySize(want) != cJSON_GetArraySize(got))
        return INFINITY;
    double worst = 0;
    for (int k = 0; k < cJSON_GetArraySize(want); k++) {
        if (skip && cJSON_IsNull(cJSON_GetArrayItem(skip, k)))
            continue;
        const cJSON *w = cJSON_GetArrayItem(want, k), *g = cJSON_GetArrayItem(got, k);
        for (int a = 0; a < 2; a++) {
            double dw = cJSON_IsArray(w) ? num(cJSON_GetArrayItem(w, a)) : num(w);
            double dg = cJSON_IsArray(g) ? num(cJSON_GetArrayItem(g, a)) : num(g);
            double d = isnan(dw) && isnan(dg) ? 0 : fabs(dw - dg);
            worst = isnan(d) ? INFINITY : (d > worst ? d : worst);
            if (!cJSON_IsArray(w) && !cJSON_IsArray(g))
                break;
        }
    }
    return worst;
}

static void compare(const char *name, const cJSON *want, const cJSON *got)
{
    const cJSON *wf = cJSON_GetObjectItem(want, "frames"), *gf = cJSON_GetObjectItem(got, "frames");
    CHECK_MSG(cJSON_GetArraySize(wf) == cJSON_GetArraySize(gf), "%s: %d frames, sleap-nn's %d",
              name, cJSON_GetArraySize(gf), cJSON_GetArraySize(wf));
    double pts = 0, scores = 0;
    int n_inst = 0;
    for (int k = 0; k < cJSON_GetArraySize(wf) && k < cJSON_GetArraySize(gf); k++) {
        const cJSON *w = cJSON_GetArrayItem(wf, k), *g = cJSON_GetArrayItem(gf, k);
        CHECK_MSG(num(cJSON_GetObjectItem(w, "frame_idx")) ==
                      num(cJSON_GetObjectItem(g, "frame_idx")),
                  "%s: frame %d's index", name, k);
        const cJSON *wi = cJSON_GetObjectItem(w, "instances"), *gi = cJSON_GetObjectItem(g, "instances");
        CHECK_MSG(cJSON_GetArraySize(wi) == cJSON_GetArraySize(gi),
                  "%s: frame %d has %d instances, sleap-nn's %d", name, k, cJSON_GetArraySize(gi),
                  cJSON_GetArraySize(wi));
        for (int i = 0; i < cJSON_GetArraySize(wi) && i < cJSON_GetArraySize(gi); i++) {
            const cJSON *a = cJSON_GetArrayItem(wi, i), *b = cJSON_GetArrayItem(gi, i);
            const cJSON *ap = cJSON_GetObjectItem(a, "points");
            double dp = worst_diff(ap, cJSON_GetObjectItem(b, "points"), NULL);
            double ds = worst_diff(cJSON_GetObjectItem(a, "point_scores"),
                                   cJSON_GetObjectItem(b, "point_scores"), ap);
            double di = fabs(num(cJSON_GetObjectItem(a, "score")) - num(cJSON_GetObjectItem(b, "score")));
            pts = dp > pts ? dp : pts;
            scores = ds > scores ? ds : scores;
            scores = !(di <= scores) ? di : scores;
            CHECK_MSG(num(cJSON_GetObjectItem(b, "score")) == 1.0, "%s: frame %d instance %d's "
                      "score is not 1", name, k, i);
            n_inst++;
        }
    }
    CHECK_MSG(n_inst > 0, "%s: no instances", name);
    CHECK_MSG(pts <= PX_TOL, "%s: points differ by %.3g px (tolerance %.3g)", name, pts, PX_TOL);
    CHECK_MSG(scores <= SCORE_TOL, "%s: scores differ by %.3g (tolerance %.3g)", name, scores,
              SCORE_TOL);
    printf("%s: %d instances, points within %.3g px, scores within %.3g\n", name, n_inst, pts,
           scores);
}

static void check_case(int k)
{
    char out[1024], args[4096], path[1024], model[1024];
    snprintf(out, sizeof out, "%s/gt_crops_%d.json", test_tmp_dir(), k);
    snprintf(model, sizeof model, "%s", test_data_path(MODEL)); /* one buffer a call */
    snprintf(args, sizeof args, "predict %s '%s' -m '%s' %s -o '%s' -q", cases[k].flag,
             test_data_path(cases[k].labels), model, cases[k].extra, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: %s", cases[k].name, test_cli_output());
    if (rc)
        return;
    snprintf(path, sizeof path, "%s/%s/expected.json", GOLDENS, cases[k].name);
    cJSON *want = load(path), *got = load(out);
    if (want && got)
        compare(cases[k].name, want, got);
    cJSON_Delete(want);
    cJSON_Delete(got);
}

/* No labels, no instances to crop around: frames larger than the crop are
 * refused, naming the way out. */
static void check_video_refused(void)
{
    char args[4096], model[1024];
    snprintf(model, sizeof model, "%s", test_data_path(MODEL));
    snprintf(args, sizeof args, "predict -i '%s' --frames 0-1 -m '%s' -o '%s' -q",
             test_data_path("sleap-nn-assets/datasets/small_robot.mp4"), model,
             test_tmp_path("gt_crops_video.slp"));
    CHECK(test_run_cli(args) != 0);
    const char *msg = test_cli_output();
    CHECK_MSG(strstr(msg, "centered-instance model alone") && strstr(msg, "labels file") &&
                  strstr(msg, "Give the centroid model too"),
              "refusal: %s", msg);
}

int main(void)
{
    test_require_data();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_case((int)k);
    check_video_refused();
    return test_finish();
}
