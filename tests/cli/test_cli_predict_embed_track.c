/* `sleapc predict -m EMBEDDING --tracking` (embed and track in one command)
 * against sleap-nn 0.3.5 on tests/goldens/sleapnn-0.3.5-families cases
 * embed_track__* (run from the data root, as there):
 *   lone  - the detections of 0.3.5's top-down pred.slp embedded, then
 *           tracked (deepsort; deepsort keeping the vectors; bytetrack with
 *           identity linking; botsort; the classic tracker by appearance,
 *           and on keypoints with the vectors kept);
 *   fused - the centroid and centered-instance fixture models detect on the
 *           video (--frames 0-19), the detections are embedded, then tracked
 *           (deepsort, without and with the vectors kept).
 * Every frame and instance in sleap-nn's saved order: track names exact,
 * points within 0.02 px, vectors within 1e-5 per element where kept (the
 * embedding case's tolerance: float32 convolutions summed in another order)
 * and absent otherwise. Tracking scores (as the .slp stores them, float32)
 * within 1e-9 relative on the lone route, whose points are sleap-nn's own;
 * on the fused route sleapc's detections differ from sleap-nn's by up to
 * 3.1e-5 px, and the geometric scores by what that moves them: 1e-5 relative.
 * Then the default output name, the refusals (nothing written), and no
 * temporary detections left behind. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/predictions/predictions_format.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define MODEL FAMILIES "/models/embedding"
#define CASES FAMILIES "/cases/"
#define DETECTIONS "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"
#define VIDEO "sleap-nn-assets/datasets/centered_pair_small.mp4"
#define CENTROID "sleap-nn-assets/model_ckpts/minimal_instance_centroid"
#define CENTERED "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"
#define POINT_TOL 0.02
#define VECTOR_TOL 1e-5
#define LONE_SCORE_RTOL 1e-9
#define FUSED_SCORE_RTOL 1e-5

typedef struct worst {
    double points, scores, vectors;
} worst;

static bool has_vector(const sleapc_predictions *pr, int64_t i)
{
    return pr->emb_dim > 0 && pr->embeddings && !isnan(pr->embeddings[i * pr->emb_dim]);
}

/* One instance against its expected.json entry; the number of mismatches. */
static int compare_instance(const sleapc_predictions *pr, int64_t i, const cJSON *e,
                            double score_rtol, worst *w)
{
    int bad = 0;
    const sleapc_pred_instance *in = &pr->insts[i];
    const cJSON *track = cJSON_GetObjectItem(e, "track");
    const char *got = in->track >= 0 ? pr->track_names[in->track] : NULL;
    if (cJSON_IsNull(track) ? got != NULL : !got || strcmp(got, track->valuestring))
        bad++;
    const cJSON *ts = cJSON_GetObjectItem(e, "tracking_score");
    if (cJSON_IsNumber(ts)) {
        const double want = (float)ts->valuedouble;
        const double rel = fabs(in->tracking_score - want) / fmax(fabs(want), 1e-12);
        w->scores = fmax(w->scores, rel);
        bad += !(rel <= score_rtol);
    }
    const cJSON *pts = cJSON_GetObjectItem(e, "points");
    for (int n = 0; n < pr->n_nodes; n++)
        for (int k = 0; k < 2; k++) {
            const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(pts, n), k);
            const float g = pr->points[(i * pr->n_nodes + n) * 2 + k];
            if (cJSON_IsNull(v) || !v) {
                bad += !isnan(g);
                continue;
            }
            w->points = fmax(w->points, fabs(g - v->valuedouble));
            bad += !(fabs(g - v->valuedouble) <= POINT_TOL);
        }
    const cJSON *vec = cJSON_GetObjectItem(e, "vector");
    if (cJSON_IsNull(vec) || !vec)
        return bad + has_vector(pr, i);
    if (!has_vector(pr, i) || cJSON_GetArraySize(vec) != pr->emb_dim)
        return bad + 1;
    for (int k = 0; k < pr->emb_dim; k++) {
        const double d =
            fabs(pr->embeddings[i * pr->emb_dim + k] - cJSON_GetArrayItem(vec, k)->valuedouble);
        w->vectors = fmax(w->vectors, d);
        bad += !(d <= VECTOR_TOL);
    }
    return bad;
}

static void compare_case(const char *name, const char *out, double score_rtol)
{
    char path[1024];
    snprintf(path, sizeof path, CASES "%s/expected.json", name);
    cJSON *exp = test_load_json(path);
    sleapc_predictions pr;
    CHECK_MSG(exp != NULL, "%s unreadable", path);
    if (!exp || sleapc__predictions_read(out, &pr, NULL) != SLEAPC_OK) {
        CHECK_MSG(false, "%s: %s unreadable", name, out);
        cJSON_Delete(exp);
        return;
    }
    const cJSON *frames = cJSON_GetObjectItem(exp, "frames");
    CHECK_MSG(pr.n_frames == cJSON_GetArraySize(frames), "%s: %lld frames, sleap-nn %d", name,
              (long long)pr.n_frames, cJSON_GetArraySize(frames));
    const cJSON *listed = cJSON_GetObjectItem(exp, "tracks_in_output");
    bool tracks_ok = cJSON_GetArraySize(listed) == pr.n_tracks;
    for (int t = 0; tracks_ok && t < pr.n_tracks; t++)
        tracks_ok = !strcmp(cJSON_GetArrayItem(listed, t)->valuestring, pr.track_names[t]);
    CHECK_MSG(tracks_ok, "%s: the output's track list differs", name);
    int bad = 0;
    worst w = {0};
    for (int64_t f = 0; f < pr.n_frames && f < cJSON_GetArraySize(frames); f++) {
        const cJSON *ef = cJSON_GetArrayItem(frames, (int)f);
        const cJSON *insts = cJSON_GetObjectItem(ef, "instances");
        const sleapc_pred_frame *fr = &pr.frames[f];
        if (fr->frame_idx != (int64_t)cJSON_GetObjectItem(ef, "frame_idx")->valuedouble ||
            fr->n != cJSON_GetArraySize(insts)) {
            bad++;
            continue;
        }
        for (int64_t k = 0; k < fr->n; k++)
            bad += compare_instance(&pr, fr->first + k, cJSON_GetArrayItem(insts, (int)k),
                                    score_rtol, &w);
    }
    printf("%s: %lld instances; worst point %.3g px, tracking score %.3g relative, vector "
           "%.3g\n",
           name, (long long)pr.n_insts, w.points, w.scores, w.vectors);
    CHECK_MSG(bad == 0, "%s: %d mismatches", name, bad);
    sleapc__predictions_free(&pr);
    cJSON_Delete(exp);
}

static void run_case(const char *name, const char *source, const char *opts, double score_rtol)
{
    char out[1024], args[4096];
    snprintf(out, sizeof out, "%s/%s.slp", test_tmp_dir(), name);
    snprintf(args, sizeof args, "predict --quiet %s -m '%s' %s -o '%s'", source, MODEL, opts, out);
    const int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: rc %d: %s", name, rc, test_cli_output());
    if (rc == 0)
        compare_case(name, out, score_rtol);
}

static void refused(const char *opts, const char *words)
{
    char out[1024], args[4096];
    snprintf(out, sizeof out, "%s/refused.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict %s -o '%s'", opts, out);
    const int rc = test_run_cli(args);
    CHECK_MSG(rc != 0 && strstr(test_cli_output(), words), "%s: rc %d: %s", opts, rc,
              test_cli_output());
    CHECK_MSG(access(out, F_OK) != 0, "%s: %s was written", opts, out);
}

/* Nothing but the outputs named: no temporary detections left. */
static void check_no_leftovers(void)
{
    DIR *d = opendir(test_tmp_dir());
    struct dirent *e;
    while (d && (e = readdir(d)))
        CHECK_MSG(!strstr(e->d_name, ".detect-") && !strstr(e->d_name, ".tmp"), "left behind: %s",
                  e->d_name);
    if (d)
        closedir(d);
}

int main(void)
{
    test_require_data();
    CHECK(chdir(test_data_dir()) == 0);
    const char *lone = "--data_path " DETECTIONS;
    run_case("embed_track__deepsort", lone, "--tracking --tracker deepsort", LONE_SCORE_RTOL);
    run_case("embed_track__deepsort_keep", lone,
             "--tracking --tracker deepsort --save_embeddings slp", LONE_SCORE_RTOL);
    run_case("embed_track__bytetrack_link", lone, "--tracking --tracker bytetrack --link_tracklets",
             LONE_SCORE_RTOL);
    run_case("embed_track__botsort", lone, "--tracking --tracker botsort", LONE_SCORE_RTOL);
    /* the classic tracker, sleap-nn's default: by appearance alone (features
     * embeddings, cosine_sim, local queues) */
    run_case("embed_track__classic", lone, "--tracking", LONE_SCORE_RTOL);
    /* the classic tracker by geometry: cosine_sim, sleap-nn's default with an
     * embedding model, on the raveled keypoints */
    run_case("embed_track__classic_keypoints_keep", lone,
             "--tracking --features keypoints --save_embeddings slp", LONE_SCORE_RTOL);
    const char *fused = "--data_path " VIDEO " --frames 0-19 -m " CENTROID " -m " CENTERED;
    run_case("embed_track__fused_deepsort", fused, "--tracking --tracker deepsort",
             FUSED_SCORE_RTOL);
    run_case("embed_track__fused_deepsort_keep", fused,
             "--tracking --tracker deepsort --save_embeddings slp", FUSED_SCORE_RTOL);

    /* The default output: "<input>.tracked.slp", as sleap-nn names it. */
    char copy[1024], args[4096], tracked[1100];
    snprintf(copy, sizeof copy, "%s/detections.slp", test_tmp_dir());
    snprintf(args, sizeof args, "cp '%s' '%s'", DETECTIONS, copy);
    CHECK(system(args) == 0);
    snprintf(args, sizeof args,
             "predict --quiet --data_path '%s' -m '%s' --tracking --tracker "
             "deepsort",
             copy, MODEL);
    CHECK_MSG(test_run_cli(args) == 0, "default output: %s", test_cli_output());
    snprintf(tracked, sizeof tracked, "%s.tracked.slp", copy);
    CHECK_MSG(access(tracked, F_OK) == 0, "%s not written", tracked);

    /* sleap-nn's refusals. */
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --tracker bytetrack",
            "--tracker bytetrack tracks by geometry only");
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --tracker ocsort",
            "--save_embeddings slp to keep the vectors");
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --features centroids",
            "--features centroids tracks by geometry only");
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --scoring_method oks",
            "--features embeddings needs --scoring_method cosine_sim");
    refused("--data_path " DETECTIONS " -m '" MODEL "'", "--save_embeddings slp to persist the "
                                                         "vectors or --tracking");
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --tracker deepsort --frames "
            "0-3",
            "does not support --frames");
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --tracker deepsort "
            "--filter_min_instance_score 0.5",
            "does not support --filter_");
    refused("--data_path " VIDEO " -m " CENTROID " -m " CENTERED " -m '" MODEL "' --tracking "
            "--tracker deepsort --output_format analysis_h5",
            "fused detect->embed route does not support --output_format analysis_h5");
    refused("--data_path " VIDEO " -m '" MODEL "' --tracking --tracker deepsort",
            "must be a .slp of detections");
    refused("--data_path " DETECTIONS " -m '" MODEL "' -m '" MODEL "' --tracking --tracker "
            "deepsort",
            "pass exactly one");
    refused("--data_path " DETECTIONS " -m '" MODEL "' --tracking --tracker deepsort "
            "--appearance_threshold 2",
            "appearance_threshold must be 'auto' or a cosine in [-1, 1]");
    check_no_leftovers();
    return test_finish();
}
