/* SLEAP 1.x mode end to end: the legacy multi-class bottom-up model
 * min_tracks_2node on tracks/clip.mp4 through the public API (what `sleapc
 * predict` does), against SLEAP 1.4.1's own predictions of that clip,
 * clip.predictions.slp, run with the options its provenance records.
 *
 * Criteria, from the issue: on every frame the same instance count, the same
 * tracks and the same missing points; at least 99.9% of the points within
 * 0.1 px (TensorFlow sums in another order, and integral refinement divides by
 * patch sums that can be near 0, which amplifies ulp differences); point and
 * instance scores within 1e-4 (float32 network outputs, summation order).
 * The sanitizer build, and SLEAPC_TEST_QUICK=1 (`make check`), check the
 * first 150 frames only, to stay quick.
 *
 * Every backend compiled in and usable here runs the clip and must meet the
 * same criteria: class maps end in a sigmoid, several peaks of one node often
 * sit where it saturates, and which one gets a class depends on ties at
 * exactly 1, so a backend whose sigmoid rounded otherwise than native (an ulp
 * below 1) would assign other peaks. To stay quick, the other backends run
 * the first EXTRA_FRAMES frames, the sanitizer build's budget. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/slp/slp_read.h"
#include "sleapc/input.h"
#include "sleapc/runner.h"
#include "test_util.h"

#define PX_TOL 0.1
#define SCORE_TOL 1e-4
#define MIN_CLOSE_FRACTION 0.999

#define QUICK_FRAMES 150
#ifdef SLEAPC_SANITIZED
#define N_FRAMES QUICK_FRAMES
#else
#define N_FRAMES 1500
#endif
/* The other backends, in every build (their libraries are not instrumented,
 * so this costs about as much under the sanitizers). The first 150 frames
 * hold enough saturated ties: oneDNN's and XNNPACK's own logistic moved a
 * quarter of their points. Run once on all 1500 frames, both backends met
 * the same criteria as native. */
#define EXTRA_FRAMES 150

typedef struct inst {
    int64_t frame;
    char track[64];
    float score, tracking_score;
    float *xy;      /* (n_nodes, 2), NaN = missing */
    float *pscore;  /* (n_nodes) */
} inst;

typedef struct collected {
    sleapc_predictor *p;
    const int64_t *frames;
    int64_t next;
    int n_nodes;
    int64_t n, cap;
    inst *insts;
} collected;

static void push(collected *c, int64_t frame, const char *track, float score, float tscore,
                 const float *xy, const float *pscore)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->insts = realloc(c->insts, (size_t)c->cap * sizeof *c->insts);
    }
    inst *in = &c->insts[c->n++];
    in->frame = frame;
    snprintf(in->track, sizeof in->track, "%s", track ? track : "");
    in->score = score;
    in->tracking_score = tscore;
    in->xy = malloc((size_t)c->n_nodes * 2 * sizeof(float));
    in->pscore = malloc((size_t)c->n_nodes * sizeof(float));
    memcpy(in->xy, xy, (size_t)c->n_nodes * 2 * sizeof(float));
    memcpy(in->pscore, pscore, (size_t)c->n_nodes * sizeof(float));
}

static void collect(const sleapc_progress *pr, void *user)
{
    collected *c = user;
    (void)pr;
    for (int k = 0; k < sleapc_predictor_n_frames(c->p); k++, c->next++) {
        for (int i = 0; i < test_n_instances(c->p, k); i++) {
            test_instance in;
            if (test_read_instance(c->p, k, i, &in) != SLEAPC_OK)
                continue;
            const char *track = in.track >= 0 ? test_class_name(c->p, in.track) : "";
            push(c, c->frames[c->next], track, in.score, in.tracking_score, in.points,
                 in.point_scores);
        }
    }
}

static void collected_free(collected *c)
{
    for (int64_t i = 0; i < c->n; i++) {
        free(c->insts[i].xy);
        free(c->insts[i].pscore);
    }
    free(c->insts);
}

/* The reference's instances of the first n_frames frames, in the same form. */
static void read_reference(const sleapc_slp *r, int64_t n_frames, collected *ref)
{
    for (int64_t f = 0; f < r->n_frames; f++) {
        const sleapc_slp_frame *fr = &r->frames[f];
        if (fr->frame_idx >= n_frames)
            continue;
        for (int64_t i = 0; i < fr->n_instances; i++) {
            const sleapc_slp_instance *in = &r->instances[fr->first_instance + i];
            if (!in->predicted || in->n_points != ref->n_nodes)
                continue;
            float xy[64], ps[32];
            for (int n = 0; n < ref->n_nodes && n < 32; n++) {
                const sleapc_slp_point *pt = &r->points[in->first_point + n];
                bool miss = !pt->visible || isnan(pt->x) || isnan(pt->y);
                xy[2 * n] = miss ? NAN : (float)pt->x;
                xy[2 * n + 1] = miss ? NAN : (float)pt->y;
                ps[n] = miss ? NAN : (float)pt->score;
            }
            const char *track = in->track >= 0 && in->track < r->n_tracks
                                    ? r->track_names[in->track]
                                    : "";
            push(ref, fr->frame_idx, track, in->score, in->tracking_score, xy, ps);
        }
    }
}

/* The provenance's sleap-track arguments. */
static double provenance_num(const sleapc_slp *r, const char *key, double fallback)
{
    cJSON *prov = cJSON_Parse(r->provenance);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(prov, "args");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
    double out = cJSON_IsNumber(v) ? v->valuedouble : fallback;
    cJSON_Delete(prov);
    return out;
}

typedef struct tally {
    int64_t frames_bad_count, tracks_bad, missing_bad;
    int64_t points, points_close;
    double worst_px, worst_score, worst_inst_score;
} tally;

static const inst *find_track(const collected *c, int64_t lo, int64_t hi, const char *track)
{
    for (int64_t i = lo; i < hi; i++)
        if (strcmp(c->insts[i].track, track) == 0)
            return &c->insts[i];
    return NULL;
}

static void compare(const collected *got, const collected *want, int64_t n_frames, tally *t)
{
    int64_t g = 0, w = 0;
    int n_nodes = got->n_nodes;
    for (int64_t f = 0; f < n_frames; f++) {
        int64_t g_end = g, w_end = w;
        while (g_end < got->n && got->insts[g_end].frame == f)
            g_end++;
        while (w_end < want->n && want->insts[w_end].frame == f)
            w_end++;
        if (g_end - g != w_end - w)
            t->frames_bad_count++;
        for (int64_t i = w; i < w_end; i++) {
            const inst *b = &want->insts[i];
            const inst *a = find_track(got, g, g_end, b->track);
            if (!a) {
                t->tracks_bad++;
                continue;
            }
            t->worst_inst_score = fmax(t->worst_inst_score, fabs((double)a->score - b->score));
            t->worst_inst_score =
                fmax(t->worst_inst_score, fabs((double)a->tracking_score - b->tracking_score));
            for (int n = 0; n < n_nodes; n++) {
                bool ma = isnan(a->xy[2 * n]), mb = isnan(b->xy[2 * n]);
                if (ma != mb) {
                    t->missing_bad++;
                    continue;
                }
                if (mb)
                    continue;
                double d = hypot((double)a->xy[2 * n] - b->xy[2 * n],
                                 (double)a->xy[2 * n + 1] - b->xy[2 * n + 1]);
                t->points++;
                t->points_close += d <= PX_TOL;
                t->worst_px = fmax(t->worst_px, d);
                t->worst_score = fmax(t->worst_score, fabs((double)a->pscore[n] - b->pscore[n]));
            }
        }
        g = g_end;
        w = w_end;
    }
}

/* Predict the first n_frames frames of the clip on one backend, with
 * sleap-track's options as recorded (integral refinement is its default), and
 * check them against the reference. */
static void check_backend(const char *backend, int64_t n_frames, const char *model,
                          const char *video, const sleapc_slp *r)
{
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = backend;
    o.n_threads = 2;
    o.peak_threshold = provenance_num(r, "peak_threshold", 0.2);
    o.batch_size = (int)provenance_num(r, "batch_size", 4);
    o.max_instances = (int)provenance_num(r, "max_instances", 0);
    const char *paths[1] = {model};
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    sleapc_input *in = NULL;
    CHECK_OK(sleapc_input_open_compat(video, 0, SLEAPC_COMPAT_SLEAP_NN_0_3_3, &in));
    int64_t *frames = malloc((size_t)n_frames * sizeof *frames);
    CHECK(frames != NULL);
    if (!p || !in || !frames) {
        free(frames);
        sleapc_input_close(in);
        sleapc_predictor_destroy(p);
        return;
    }
    CHECK(sleapc_input_n_frames(in) >= n_frames);

    for (int64_t k = 0; k < n_frames; k++)
        frames[k] = k;
    collected got = {.p = p, .frames = frames, .n_nodes = test_n_nodes(p)};
    collected want = {.n_nodes = got.n_nodes};
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = collect;
    ro.user = &got;
    CHECK_OK(sleapc_predict_input(p, in, frames, n_frames, NULL, &ro));
    CHECK(got.next == n_frames);
    read_reference(r, n_frames, &want);
    CHECK(want.n > 0);

    tally t = {0};
    compare(&got, &want, n_frames, &t);
    double close = t.points ? (double)t.points_close / (double)t.points : 0.0;
    printf("sleap1x clip [%s]: %lld frames, %lld/%lld instances (sleapc/SLEAP), %lld points, "
           "%.4f%% within %.1f px, worst %.3g px, worst point score %.2g, worst instance "
           "score %.2g, %lld frames with another instance count, %lld instances without their "
           "track\n",
           backend, (long long)n_frames, (long long)got.n, (long long)want.n, (long long)t.points,
           100.0 * close, PX_TOL, t.worst_px, t.worst_score, t.worst_inst_score,
           (long long)t.frames_bad_count, (long long)t.tracks_bad);
    CHECK_MSG(t.frames_bad_count == 0, "%s: %lld frames with another instance count", backend,
              (long long)t.frames_bad_count);
    CHECK_MSG(t.tracks_bad == 0, "%s: %lld reference instances without a same-track instance",
              backend, (long long)t.tracks_bad);
    CHECK_MSG(t.missing_bad == 0, "%s: %lld points missing in one and not the other", backend,
              (long long)t.missing_bad);
    CHECK_MSG(close >= MIN_CLOSE_FRACTION, "%s: only %.4f%% of points within %.1f px", backend,
              100.0 * close, PX_TOL);
    CHECK_MSG(t.worst_score <= SCORE_TOL, "%s: point scores differ by %.3g", backend,
              t.worst_score);
    CHECK_MSG(t.worst_inst_score <= SCORE_TOL, "%s: instance scores differ by %.3g", backend,
              t.worst_inst_score);

    collected_free(&got);
    collected_free(&want);
    free(frames);
    sleapc_input_close(in);
    sleapc_predictor_destroy(p);
}

int main(void)
{
    test_require_data();
    const char *model_dir =
        "sleap-nn-assets/legacy_models/min_tracks_2node.UNet.bottomup_multiclass";
    char model[4096], video[4096], ref_path[4096];
    snprintf(model, sizeof model, "%s", test_data_path(model_dir));
    snprintf(video, sizeof video, "%s", test_data_path("sleap-assets/tracks/clip.mp4"));
    snprintf(ref_path, sizeof ref_path, "%s",
             test_data_path("sleap-assets/tracks/clip.predictions.slp"));

    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(ref_path, &r));
    if (!r)
        return test_finish();

    check_backend("native", test_quick() ? QUICK_FRAMES : N_FRAMES, model, video, r);
    for (int i = 0; i < sleapc_backend_count(); i++) {
        const char *name = sleapc_backend_name(i);
        if (strcmp(name, "native") != 0 && sleapc_backend_available(i) &&
            !test_backend_software_only(name))
            check_backend(name, EXTRA_FRAMES, model, video, r);
    }
    sleapc__slp_close(r);
    return test_finish();
}
