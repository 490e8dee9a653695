/* The appearance part of sleap-nn 0.3.5's per-video calibration against
 * the calibration it recorded for each case of the appearance reference
 * (tests/goldens/sleapnn-0.3.5-appearance: options.json "tracking" ->
 * "videos" -> "calibration"): n_anchors and n_trials exactly, the
 * decisions (appearance for association / linking) exactly, every
 * statistic within 1e-12 relative. The statistics are quantiles and means
 * of float32 cosines that sleapc sums in numpy's order, so they agree to
 * the bit but for the float64 EMA cosines numpy takes from BLAS (a few
 * ulp). The long-gap trials are subsampled with numpy's generator, which
 * every case exercises (more split points than max_trials). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

#include "mot_case.h"
#include "tracking_case.h"

#define REF SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-appearance"
#define RTOL 1e-12

static double worst;

static void check_num(const char *name, const char *key, const cJSON *rec, double got)
{
    const cJSON *v = cJSON_GetObjectItem(rec, key);
    const double want = v && !cJSON_IsNull(v) ? tracking_case_number(v) : NAN;
    const bool both_nan = isnan(want) && isnan(got);
    const double err = both_nan ? 0.0 : fabs(got - want) / fmax(fabs(want), 1e-300);
    if (!both_nan && want != got && !(err <= RTOL)) {
        CHECK_MSG(false, "%s: %s = %.17g, sleap-nn %.17g", name, key, got, want);
        return;
    }
    worst = err > worst ? err : worst;
}

static void check_list(const char *name, const char *key, const cJSON *rec, const double *got,
                       int n)
{
    const cJSON *v = cJSON_GetObjectItem(rec, key);
    CHECK_MSG(cJSON_GetArraySize(v) == n, "%s: %s has %d entries, sleap-nn %d", name, key, n,
              cJSON_GetArraySize(v));
    for (int i = 0; i < n && i < cJSON_GetArraySize(v); i++) {
        char k[64];
        snprintf(k, sizeof k, "%s[%d]", key, i);
        cJSON *one = cJSON_CreateObject();
        cJSON_AddItemToObject(one, k, cJSON_Duplicate(cJSON_GetArrayItem(v, i), 1));
        check_num(name, k, one, got[i]);
        cJSON_Delete(one);
    }
}

static void run_case(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, REF "/%s/options.json", name);
    cJSON *options = tracking_case_load(path);
    CHECK_MSG(options != NULL, "%s: unreadable options.json", name);
    if (!options)
        return;
    const char *kv[16];
    sleapc_tracking_opts t;
    CHECK_MSG(mot_case_opts(options, &t, kv, 16), "%s: options not understood", name);
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(REF "/input.slp", &pr, NULL));
    sleapc_tracker_opts to;
    CHECK_OK(sleapc__tracking_resolve(&t, pr.n_nodes, &to));
    mot_calibration cal;
    CHECK_OK(sleapc__mot_run_calibrate(&pr, 0, &to.mot_params, &cal));
    const cJSON *rec = cJSON_GetObjectItem(
        cJSON_GetArrayItem(
            cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(options, "tracking_provenance_in_output"),
                                    "tracking"),
                "videos"),
            0),
        "calibration");
    CHECK_MSG(rec != NULL, "%s: no recorded calibration", name);
    const mot_appearance_calibration *a = &cal.app;
    static const char *const status[] = {"no_vectors", "ok", "insufficient", "skipped"};
    const cJSON *s = cJSON_GetObjectItem(rec, "status");
    CHECK_MSG(cJSON_IsString(s) && !strcmp(s->valuestring, status[a->status]), "%s: status %s",
              name, status[a->status]);
    CHECK_MSG(case_num(rec, "n_anchors", -1) == (double)a->n_anchors, "%s: %lld anchors", name,
              (long long)a->n_anchors);
    CHECK_MSG(case_num(rec, "n_trials", -1) == (double)a->n_trials, "%s: %lld trials", name,
              (long long)a->n_trials);
    check_num(name, "assoc_rank1", rec, a->assoc_rank1);
    check_num(name, "m_assoc", rec, a->m_assoc);
    check_num(name, "ema_cos_gate", rec, a->ema_cos_gate);
    check_num(name, "gallery_cos_gate", rec, a->gallery_cos_gate);
    check_num(name, "mu_pos", rec, a->mu_pos);
    check_num(name, "mu_neg", rec, a->mu_neg);
    check_num(name, "link_thresh", rec, a->link_thresh);
    check_num(name, "link_margin", rec, a->link_margin);
    check_num(name, "link_recall", rec, a->link_recall);
    check_num(name, "neg_collision_rate", rec, a->neg_collision_rate);
    check_list(name, "link_thresh_by_len", rec, a->link_thresh_by_len, a->n_by_len);
    check_list(name, "link_margin_by_len", rec, a->link_margin_by_len, a->n_by_len);
    CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(rec, "appearance_for_association")) ==
                  a->for_association,
              "%s: appearance_for_association", name);
    CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(rec, "appearance_for_linking")) == a->for_linking,
              "%s: appearance_for_linking", name);
    fprintf(stderr, "%s: %lld anchors, %lld trials, rank-1 %.6f\n", name, (long long)a->n_anchors,
            (long long)a->n_trials, a->assoc_rank1);
    sleapc__predictions_free(&pr);
    cJSON_Delete(options);
}

int main(void)
{
    static const char *const cases[] = {"clip_deepsort", "clip_strongsort", "clip_botsort",
                                        "clip_deepocsort", "clip_bytetrack_link_appearance"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(cases[i]);
    fprintf(stderr, "largest relative difference %.3g\n", worst);
    return test_finish();
}
