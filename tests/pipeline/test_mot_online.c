/* The MOT trackers fed frame by frame (mot_online.h) give exactly the
 * tracks of the whole-run path (mot_run.h, itself checked against sleap-nn
 * 0.3.5 in test_mot_reference): every reference case under
 * sleapnn-0.3.5/tracking/ whose tracker sleapc runs, without identity
 * linking (which needs every tracklet), and the appearance trackers on the
 * cases with re-ID vectors (tests/goldens/sleapnn-0.3.5-appearance). Each frame's labels are taken
 * as soon as they are final; the window starts empty, so it grows and moves its pending frames down
 * along the way. Then the same input repeated as one long video: the window stays bounded by the
 * pending frames, not the video, and once warm a pass allocates nothing. Every allocation failure
 * of a short online run and of `sleapc track` is reported, leaking nothing. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/mot/mot_online.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/retrack.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

#include "mot_case.h"
#include "tracking_case.h"

#define APPEARANCE_REF SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-appearance"

typedef struct frame_ref {
    int64_t video, frame_idx, k;
} frame_ref;

static int cmp_ref(const void *a, const void *b)
{
    const frame_ref *x = a, *y = b;
    if (x->video != y->video)
        return x->video < y->video ? -1 : 1;
    return x->frame_idx < y->frame_idx ? -1 : (x->frame_idx > y->frame_idx);
}

/* pr's frames one by one through the online tracker, `repeat` times over
 * as one video (frame indices continued); labels / scores per instance of
 * the last pass. Returns the most frames ever pending. */
static int64_t run_online(const char *name, const sleapc_predictions *pr,
                          const sleapc_mot_params *p, int repeat, int *label, double *score,
                          int64_t *last_allocs)
{
    frame_ref *ref = malloc((size_t)(pr->n_frames > 0 ? pr->n_frames : 1) * sizeof *ref);
    for (int64_t k = 0; k < pr->n_frames; k++)
        ref[k] = (frame_ref){pr->frames[k].video, pr->frames[k].frame_idx, k};
    qsort(ref, (size_t)pr->n_frames, sizeof *ref, cmp_ref);
    const int K = pr->n_nodes;
    float *scores = malloc((size_t)(pr->n_insts > 0 ? pr->n_insts : 1) * sizeof *scores);
    for (int64_t i = 0; i < pr->n_insts; i++)
        scores[i] = pr->insts[i].score;
    int offset = 0;
    int64_t most_pending = 0;
    for (int64_t s = 0; s < pr->n_frames;) {
        int64_t e = s;
        while (e < pr->n_frames && ref[e].video == ref[s].video)
            e++;
        mot_calibration cal;
        CHECK_OK(sleapc__mot_run_calibrate(pr, ref[s].video, p, &cal));
        mot_online *o = NULL;
        const int E = pr->embeddings ? pr->emb_dim : 0;
        CHECK_OK(sleapc__mot_online_create(p, K, E, &cal, offset, &o));
        if (!o)
            break;
        const int64_t span = ref[e - 1].frame_idx + cal.frame_step;
        int64_t pushed = 0, taken = 0, next = s;
        for (int r = 0; r < repeat; r++) {
            const int64_t allocs0 = sleapc__alloc_count();
            for (int64_t q = s; q < e; q++) {
                const sleapc_pred_frame *f = &pr->frames[ref[q].k];
                CHECK_OK(sleapc__mot_online_push(
                    o, f->frame_idx + r * span, pr->points + f->first * K * 2,
                    pr->point_scores + f->first * K, scores + f->first,
                    E > 0 ? pr->embeddings + f->first * E : NULL, (int)f->n));
                pushed++;
                if (q + 1 == e && r + 1 == repeat)
                    sleapc__mot_online_finish(o);
                int64_t fi;
                int n;
                const int *lab;
                const double *ts;
                while (sleapc__mot_online_take(o, &fi, &n, &lab, &ts)) {
                    const int64_t pass = taken / (e - s);
                    const sleapc_pred_frame *g = &pr->frames[ref[next].k];
                    CHECK_MSG(fi == g->frame_idx + pass * span && n == g->n,
                              "%s: frame %lld handed out out of order", name, (long long)fi);
                    if (pass + 1 == repeat)
                        for (int i = 0; i < n && i < g->n; i++) {
                            label[g->first + i] = lab[i];
                            score[g->first + i] = ts[i];
                        }
                    taken++;
                    next = next + 1 == e ? s : next + 1;
                }
                most_pending = pushed - taken > most_pending ? pushed - taken : most_pending;
            }
            *last_allocs = sleapc__alloc_count() - allocs0;
        }
        CHECK_MSG(taken == pushed, "%s: %lld of %lld frames handed out", name, (long long)taken,
                  (long long)pushed);
        offset = sleapc__mot_online_next_name(o);
        sleapc__mot_online_destroy(o);
        s = e;
    }
    free(scores);
    free(ref);
    return most_pending;
}

/* `sleapc track` streams the file 7 frames a block through the online
 * tracker: the file it writes must hold the whole-run tracks, names and
 * scores (sleapc__predictions_track on the file read whole). */
static void check_file(const char *name, const char *in_path, const sleapc_tracking_opts *t,
                       const sleapc_tracker_opts *to, const sleapc_filter_opts *f)
{
    char out_path[1024];
    snprintf(out_path, sizeof out_path, "%s/%s.online.slp", test_tmp_dir(), name);
    const char *outs[1] = {out_path};
    CHECK_OK(sleapc__retrack_blocks(in_path, outs, 1, t, f, 7));
    sleapc_predictions whole, got;
    CHECK_OK(sleapc__predictions_read(in_path, &whole, NULL));
    if (f) {
        sleapc_filter_config fc;
        CHECK_OK(sleapc__filters_resolve(f, &fc));
        CHECK_OK(sleapc__predictions_filter(&whole, &fc));
    }
    CHECK_OK(sleapc__predictions_track(&whole, to, NULL));
    if (sleapc__predictions_read(out_path, &got, NULL) != SLEAPC_OK) {
        CHECK_MSG(false, "%s: %s unreadable", name, out_path);
        sleapc__predictions_free(&whole);
        return;
    }
    bool same = got.n_frames == whole.n_frames && got.n_insts == whole.n_insts &&
                got.n_tracks == whole.n_tracks;
    for (int i = 0; same && i < got.n_tracks; i++)
        same = !strcmp(got.track_names[i], whole.track_names[i]);
    for (int64_t k = 0; same && k < got.n_frames; k++)
        same = got.frames[k].video == whole.frames[k].video &&
               got.frames[k].frame_idx == whole.frames[k].frame_idx &&
               got.frames[k].n == whole.frames[k].n;
    int bad = 0;
    for (int64_t i = 0; same && i < got.n_insts; i++) {
        const sleapc_pred_instance *a = &got.insts[i], *b = &whole.insts[i];
        bad += a->track != b->track || (a->track >= 0 && a->tracking_score != b->tracking_score);
    }
    fprintf(stderr, "%s: sleapc track in 7-frame blocks: %d tracks, %d instances differ\n", name,
            got.n_tracks, bad);
    CHECK_MSG(same && bad == 0, "%s: the streamed file differs from the whole-run tracks", name);
    sleapc__predictions_free(&whole);
    sleapc__predictions_free(&got);
}

/* The input split into two videos (frame indices of the second from 0),
 * with a filter dropping some instances: names continue across videos and
 * both passes see the same filtered frames. */
static void two_videos(const char *name, const char *in_path, const sleapc_tracking_opts *t,
                       const sleapc_tracker_opts *to)
{
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(in_path, &pr, NULL));
    if (pr.n_videos != 1 || pr.n_frames < 2) {
        sleapc__predictions_free(&pr);
        return;
    }
    sleapc_pred_video *v = sleapc__realloc(pr.videos, 2 * sizeof *v);
    CHECK(v != NULL);
    if (!v) {
        sleapc__predictions_free(&pr);
        return;
    }
    pr.videos = v;
    v[1] = v[0];
    v[1].filename = sleapc__strdup("second.mp4");
    v[1].dataset = v[1].source_json = NULL;
    pr.n_videos = 2;
    const int64_t half = pr.n_frames / 2, base = pr.frames[half].frame_idx;
    for (int64_t k = half; k < pr.n_frames; k++) {
        pr.frames[k].video = 1;
        pr.frames[k].frame_idx -= base;
    }
    char path[1024], case_name[256];
    snprintf(path, sizeof path, "%s/%s.two.slp", test_tmp_dir(), name);
    CHECK_OK(sleapc__predictions_write_path(&pr, path));
    sleapc__predictions_free(&pr);
    sleapc_filter_opts f = sleapc_filter_opts_default();
    f.filter_min_instance_score = 0.6;
    snprintf(case_name, sizeof case_name, "%s, two videos, filtered", name);
    check_file(case_name, path, t, to, &f);
}

/* 40 frames online with a calibration: for the allocation failures. */
static sleapc_status online_short(const sleapc_predictions *pr, const sleapc_mot_params *p)
{
    mot_calibration cal;
    sleapc_status st = sleapc__mot_run_calibrate(pr, pr->frames[0].video, p, &cal);
    mot_online *o = NULL;
    const int E = pr->embeddings ? pr->emb_dim : 0;
    if (!st)
        st = sleapc__mot_online_create(p, pr->n_nodes, E, &cal, 0, &o);
    float sc[64];
    const int K = pr->n_nodes;
    for (int64_t k = 0; !st && k < pr->n_frames && k < 40; k++) {
        const sleapc_pred_frame *f = &pr->frames[k];
        for (int64_t i = 0; i < f->n && i < 64; i++)
            sc[i] = pr->insts[f->first + i].score;
        st = sleapc__mot_online_push(
            o, f->frame_idx, pr->points + f->first * K * 2, pr->point_scores + f->first * K, sc,
            E > 0 ? pr->embeddings + f->first * E : NULL, f->n < 64 ? (int)f->n : 64);
        int64_t fi;
        int n;
        const int *lab;
        const double *ts;
        while (!st && sleapc__mot_online_take(o, &fi, &n, &lab, &ts))
            ;
    }
    if (o)
        sleapc__mot_online_destroy(o);
    return st;
}

/* Fail allocation 1, 2, ... of a short online run and of `sleapc track` on
 * a short file: each is reported (or absorbed) and nothing leaks (the
 * sanitizer build checks that). */
static void failures(const char *name, const char *in_path, const sleapc_tracking_opts *t,
                     const sleapc_tracker_opts *to)
{
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(in_path, &pr, NULL));
    int64_t before = sleapc__alloc_count();
    CHECK_OK(online_short(&pr, &to->mot_params));
    int64_t total = sleapc__alloc_count() - before;
    int n_failed = 0;
    for (int64_t k = 1; k <= total; k++) {
        sleapc__alloc_fail_after(k);
        n_failed += online_short(&pr, &to->mot_params) != SLEAPC_OK;
        sleapc__alloc_fail_after(0);
    }
    fprintf(stderr, "%s: online, %lld allocations, %d failures reported\n", name, (long long)total,
            n_failed);
    CHECK_MSG(n_failed > 0, "%s: no failure seen", name);
    /* a 40-frame file */
    char path[1024], out[1024];
    snprintf(path, sizeof path, "%s/%s.short.slp", test_tmp_dir(), name);
    snprintf(out, sizeof out, "%s/%s.short.out.slp", test_tmp_dir(), name);
    int64_t n_insts = 0;
    for (int64_t k = 0; k < 40 && k < pr.n_frames; k++)
        n_insts = pr.frames[k].first + pr.frames[k].n > n_insts
                      ? pr.frames[k].first + pr.frames[k].n
                      : n_insts;
    const int64_t nf = pr.n_frames, ni = pr.n_insts;
    pr.n_frames = nf < 40 ? nf : 40;
    pr.n_insts = n_insts;
    CHECK_OK(sleapc__predictions_write_path(&pr, path));
    pr.n_frames = nf;
    pr.n_insts = ni;
    sleapc__predictions_free(&pr);
    const char *outs[1] = {out};
    before = sleapc__alloc_count();
    CHECK_OK(sleapc__retrack_blocks(path, outs, 1, t, NULL, 7));
    total = sleapc__alloc_count() - before;
    n_failed = 0;
    for (int64_t k = 1; k <= total; k++) {
        sleapc__alloc_fail_after(k);
        n_failed += sleapc__retrack_blocks(path, outs, 1, t, NULL, 7) != SLEAPC_OK;
        sleapc__alloc_fail_after(0);
    }
    fprintf(stderr, "%s: sleapc track, %lld allocations, %d failures reported\n", name,
            (long long)total, n_failed);
    CHECK_MSG(n_failed > 0, "%s: no failure seen", name);
}

/* passes: how many times the input runs as one video for the warm-up
 * check (the appearance trackers reach their largest frame later). */
static void run_case(const char *dir, const char *name, int passes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *options = tracking_case_load(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *expected = tracking_case_load(path);
    const char *kv[16];
    sleapc_tracking_opts t;
    const bool ok = options && expected && !cJSON_GetObjectItem(expected, "error") &&
                    mot_case_opts(options, &t, kv, 16) && t.tracker && strcmp(t.tracker, "classic");
    char in_path[1024];
    snprintf(in_path, sizeof in_path, "%s/../input.slp", dir);
    sleapc_predictions pr;
    sleapc_tracker_opts to;
    if (!ok || sleapc__predictions_read(in_path, &pr, NULL) != SLEAPC_OK) {
        cJSON_Delete(options);
        cJSON_Delete(expected);
        return;
    }
    if (sleapc__tracking_resolve(&t, pr.n_nodes, &to) != SLEAPC_OK || !to.mot) {
        sleapc__predictions_free(&pr); /* refused: test_mot_reference checks why */
        cJSON_Delete(options);
        cJSON_Delete(expected);
        return;
    }
    /* linking is a pass over the whole video after tracking: off here */
    to.mot_params.link_tracklets = false;
    to.mot_params.max_tracks = -1;
    const size_t n = (size_t)(pr.n_insts > 0 ? pr.n_insts : 1);
    double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    int *label = malloc(n * sizeof *label);
    for (int64_t i = 0; i < pr.n_insts; i++)
        label[i] = -2;
    int64_t allocs = 0;
    run_online(name, &pr, &to.mot_params, 1, label, got, &allocs);
    int n_ids = 0;
    CHECK_OK(sleapc__mot_track_predictions(&pr, &to.mot_params, &n_ids, want));
    int bad = 0, n_tracked = 0;
    for (int64_t i = 0; i < pr.n_insts; i++) {
        n_tracked += pr.insts[i].track >= 0;
        bad += label[i] != pr.insts[i].track || memcmp(&got[i], &want[i], sizeof got[i]);
    }
    fprintf(stderr, "%s: %lld instances (%d tracked), %d differ online\n", name,
            (long long)pr.n_insts, n_tracked, bad);
    CHECK_MSG(bad == 0, "%s: %d instances differ online", name, bad);

    /* passes as one video: the pending frames stay few, and after the
     * first passes (warm-up) a pass allocates nothing */
    const int64_t pending = run_online(name, &pr, &to.mot_params, passes, label, got, &allocs);
    fprintf(stderr,
            "%s: %lld frames x %d, at most %lld pending, %lld allocations in the last pass\n", name,
            (long long)pr.n_frames, passes, (long long)pending, (long long)allocs);
    CHECK_MSG(pending <= pr.n_frames, "%s: %lld frames pending", name, (long long)pending);
    CHECK_MSG(allocs == 0, "%s: %lld allocations in the last pass", name, (long long)allocs);
    free(want);
    free(got);
    free(label);
    sleapc__predictions_free(&pr);
    if (!t.link_tracklets) {
        check_file(name, in_path, &t, &to, NULL);
        two_videos(name, in_path, &t, &to);
        if (!strcmp(t.tracker, "ocsort") || !strcmp(t.tracker, "deepsort") ||
            !strcmp(t.tracker, "deepocsort"))
            failures(name, in_path, &t, &to);
    }
    cJSON_Delete(options);
    cJSON_Delete(expected);
}

/* Bad input is refused, not tracked. */
static void bad_input(void)
{
    sleapc_mot_params p;
    CHECK_OK(sleapc__mot_params_resolve(SLEAPC_MOT_SORT, NULL, NULL, 0, &p));
    const mot_calibration cal = {.frame_step = 1,
                                 .regular = true,
                                 .frames_time_base = true,
                                 .body_size = 20,
                                 .score_q95 = NAN,
                                 .normalizer = NAN,
                                 .step_p95 = NAN};
    mot_online *o = NULL;
    CHECK(sleapc__mot_online_create(&p, 0, 0, &cal, 0, &o) == SLEAPC_ERR_INVALID_ARG && !o);
    CHECK_OK(sleapc__mot_online_create(&p, 2, 0, &cal, 0, &o));
    CHECK(sleapc__mot_online_push(o, 0, NULL, NULL, NULL, NULL, -1) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__mot_online_push(o, 0, NULL, NULL, NULL, NULL, 1) == SLEAPC_ERR_INVALID_ARG);
    CHECK_OK(sleapc__mot_online_push(o, 0, NULL, NULL, NULL, NULL, 0));
    sleapc__mot_online_finish(o);
    CHECK(sleapc__mot_online_push(o, 1, NULL, NULL, NULL, NULL, 0) == SLEAPC_ERR_INVALID_ARG);
    sleapc__mot_online_destroy(o);
}

int main(void)
{
    bad_input();
    test_require_data();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", test_data_path("sleapnn-0.3.5/tracking"));
    char *names[64];
    const int n = test_list_dir(dir, names, 64);
    if (n <= 0) {
        fprintf(stderr, "no sleapnn-0.3.5/tracking cases; skipping\n");
        return 77;
    }
    for (int i = 0; i < n; i++) {
        char sub[1200];
        snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
        run_case(sub, names[i], 10);
        free(names[i]);
    }
    /* the appearance trackers, on detections with re-ID vectors */
    static const char *const appearance[] = {"clip_deepsort", "clip_strongsort", "clip_botsort",
                                             "clip_deepocsort"};
    for (size_t i = 0; i < sizeof appearance / sizeof *appearance; i++) {
        char sub[1200];
        snprintf(sub, sizeof sub, "%s/%s", APPEARANCE_REF, appearance[i]);
        run_case(sub, appearance[i], 25);
    }
    return test_finish();
}
