/* The real-time library calls around a predictor, on a top-down pipeline
 * (centroid + centered instance) over real frames of centered_pair_small.mp4:
 * - one load of the two models shared by two predictors running on two
 *   threads at once gives, bit for bit, what predictors that load their own
 *   copies give (native backend, one thread each: same arithmetic);
 * - sleapc_predictor_warmup leaves the results alone and makes the first
 *   real frame allocate no more than a steady frame does;
 * - an abort callback stops sleapc_predict_array and sleapc_predictor_run
 *   between batches with SLEAPC_ERR_INTERRUPTED, and the writer then holds
 *   exactly the frames done, in a file that reads back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/thread.h"
#include "io/slp/slp_read.h"
#include "sleapc/pipeline.h"
#include "sleapc/stream.h"
#include "sleapc/video.h"
#include "test_util.h"

#define N_FRAMES 4
#define MAX_INST 8
#define MAX_NODES 32

typedef struct poses {
    int n[N_FRAMES];
    float points[N_FRAMES][MAX_INST * MAX_NODES * 2];
    float scores[N_FRAMES][MAX_INST];
} poses;

static uint8_t *frames;
static int64_t fh, fw, fc;

static sleapc_predictor_opts opts(void)
{
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = "native";
    o.n_threads = 1;
    o.batch_size = 2;
    return o;
}

static bool load_frames(void)
{
    sleapc_video *v = NULL;
    if (sleapc_video_open(test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"), &v))
        return false;
    sleapc_video_shape(v, &fh, &fw, &fc);
    frames = malloc((size_t)(N_FRAMES * fh * fw * fc));
    bool ok = frames != NULL;
    for (int k = 0; ok && k < N_FRAMES; k++)
        ok = sleapc_video_read(v, 100 * k, frames + (size_t)k * (size_t)(fh * fw * fc)) == 0;
    sleapc_video_close(v);
    return ok;
}

static sleapc_frame frames_of(int64_t n)
{
    return test_frames(&(sleapc_tensor){SLEAPC_DTYPE_U8, 4, {n, fh, fw, fc}, frames});
}

static sleapc_status predict_all(sleapc_predictor *p, poses *out)
{
    memset(out, 0, sizeof *out);
    sleapc_frame t = frames_of(N_FRAMES);
    sleapc_status st = sleapc_predictor_run(p, &t);
    for (int k = 0; !st && k < N_FRAMES; k++)
        st = sleapc_predictor_frame_results(p, k,
                                            &(sleapc_results){.max_instances = MAX_INST,
                                                              .points = out->points[k],
                                                              .scores = out->scores[k]},
                                            &out->n[k]);
    return st;
}

static bool same(const poses *a, const poses *b, int n_nodes)
{
    for (int k = 0; k < N_FRAMES; k++) {
        if (a->n[k] != b->n[k])
            return false;
        for (int i = 0; i < a->n[k] && i < MAX_INST; i++) {
            if (memcmp(&a->scores[k][i], &b->scores[k][i], sizeof(float)) != 0)
                return false;
            for (int j = 0; j < n_nodes * 2; j++) {
                float x = a->points[k][i * n_nodes * 2 + j], y = b->points[k][i * n_nodes * 2 + j];
                if (!(memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y))))
                    return false;
            }
        }
    }
    return true;
}

typedef struct job {
    sleapc_predictor *p;
    poses result;
    sleapc_status st;
} job;

static void run_job(void *arg)
{
    job *j = arg;
    /* Twice: the second pass runs on plans the first one built. */
    j->st = predict_all(j->p, &j->result);
    if (!j->st)
        j->st = predict_all(j->p, &j->result);
}

static void check_shared(const char *const *paths, const poses *want, int n_nodes)
{
    sleapc_model *models[2] = {NULL, NULL};
    CHECK_OK(sleapc_model_load(paths[0], &models[0]));
    CHECK_OK(sleapc_model_load(paths[1], &models[1]));
    if (!models[0] || !models[1])
        goto done;
    sleapc_predictor_opts o = opts();
    job jobs[2] = {{0}, {0}};
    for (int i = 0; i < 2; i++)
        CHECK_OK(sleapc_predictor_create_from_models(models, 2, &o, &jobs[i].p));
    if (jobs[0].p && jobs[1].p) {
        CHECK(strcmp(sleapc_predictor_layer_name(jobs[0].p), "TopDownLayer") == 0);
        sleapc_thread *t[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++)
            CHECK_OK(sleapc__thread_start(run_job, &jobs[i], &t[i]));
        for (int i = 0; i < 2; i++) {
            sleapc__thread_join(t[i]);
            CHECK_OK(jobs[i].st);
            CHECK_MSG(same(&jobs[i].result, want, n_nodes),
                      "predictor %d on a shared model differs from its own load", i);
        }
    }
    for (int i = 0; i < 2; i++)
        sleapc_predictor_destroy(jobs[i].p);
    /* The models outlive their predictors and still work alone. */
    sleapc_skeleton sk = {0};
    CHECK_OK(sleapc_model_skeleton(models[1], &sk));
    CHECK(sk.n_nodes == n_nodes);
    sleapc_model *none[1] = {NULL};
    sleapc_predictor *bad = NULL;
    CHECK(sleapc_predictor_create_from_models(none, 1, &o, &bad) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_predictor_create_from_models(models, 3, &o, &bad) == SLEAPC_ERR_INVALID_ARG);
    CHECK(bad == NULL);
done:
    sleapc_model_destroy(models[0]);
    sleapc_model_destroy(models[1]);
}

/* Allocations of one stream call on frame k. */
static int64_t stream_call(sleapc_stream *s, int k, int *n)
{
    sleapc_frame f = {frames + (size_t)k * (size_t)(fh * fw * fc),
                      1,
                      fh,
                      fw,
                      fw * fc,
                      fc == 1 ? SLEAPC_PIXEL_FORMAT_GRAY8 : SLEAPC_PIXEL_FORMAT_RGB24};
    int64_t before = sleapc__alloc_count();
    CHECK_OK(sleapc_stream_predict(s, &f, n));
    return sleapc__alloc_count() - before;
}

static void check_warmup(const char *const *paths)
{
    sleapc_predictor_opts o = opts();
    o.batch_size = 1;
    sleapc_predictor *cold = NULL, *warm = NULL;
    sleapc_stream *sc = NULL, *sw = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &cold));
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &warm));
    if (!cold || !warm)
        goto done;
    CHECK(sleapc_predictor_warmup(warm, 1, fh, fw, 2) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_predictor_warmup(warm, 1, 0, fw, fc) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_predictor_warmup(NULL, 1, fh, fw, fc) == SLEAPC_ERR_INVALID_ARG);
    CHECK_OK(sleapc_predictor_warmup(warm, 0, fh, fw, fc));
    CHECK(sleapc_predictor_n_frames(warm) == 0);
    CHECK(sleapc_predictor_get_stats(warm).frames == 0);
    CHECK_OK(sleapc_stream_create(cold, &sc));
    CHECK_OK(sleapc_stream_create(warm, &sw));
    if (!sc || !sw)
        goto done;
    int n_cold = -1, n_warm = -1;
    int64_t cold_first = stream_call(sc, 1, &n_cold);
    int64_t warm_first = stream_call(sw, 1, &n_warm);
    CHECK(n_cold == n_warm && n_cold >= 1);
    float pc[MAX_INST * MAX_NODES * 2], pw[MAX_INST * MAX_NODES * 2];
    int kc = 0, kw = 0;
    CHECK_OK(sleapc_predictor_frame_results(
        cold, 0, &(sleapc_results){.max_instances = MAX_INST, .points = pc}, &kc));
    CHECK_OK(sleapc_predictor_frame_results(
        warm, 0, &(sleapc_results){.max_instances = MAX_INST, .points = pw}, &kw));
    sleapc_skeleton sk;
    CHECK_OK(sleapc_predictor_skeleton(warm, &sk));
    int n_nodes = sk.n_nodes;
    CHECK(kc == kw && memcmp(pc, pw, sizeof(float) * (size_t)(kc < MAX_INST ? kc : MAX_INST) *
                                         (size_t)n_nodes * 2) == 0);
    /* The frame again on each: what a steady call allocates. */
    int64_t steady = stream_call(sw, 1, &n_warm);
    printf("first frame: %lld allocations cold, %lld after warm-up; steady: %lld\n",
           (long long)cold_first, (long long)warm_first, (long long)steady);
    CHECK_MSG(warm_first <= steady, "first call after warm-up: %lld allocations, steady: %lld",
              (long long)warm_first, (long long)steady);
    CHECK_MSG(cold_first > warm_first, "the cold first call allocated %lld, the warm one %lld",
              (long long)cold_first, (long long)warm_first);
done:
    sleapc_stream_destroy(sc);
    sleapc_stream_destroy(sw);
    sleapc_predictor_destroy(cold);
    sleapc_predictor_destroy(warm);
}

typedef struct abort_after {
    int polls, stop_at;
} abort_after;

static bool abort_cb(void *user)
{
    abort_after *a = user;
    return ++a->polls >= a->stop_at;
}

static void check_abort(const char *const *paths)
{
    sleapc_predictor_opts o = opts();
    o.batch_size = 1;
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &p));
    if (!p)
        return;
    /* sleapc_predictor_run: polled before batches 2, 3, ...: stop before the 3rd. */
    abort_after a = {0, 2};
    sleapc_abort_set(abort_cb, &a);
    sleapc_frame t = frames_of(N_FRAMES);
    CHECK(sleapc_predictor_run(p, &t) == SLEAPC_ERR_INTERRUPTED);
    CHECK_MSG(sleapc_predictor_n_frames(p) == 2, "%d frames kept", sleapc_predictor_n_frames(p));

    /* sleapc_predict_array with a writer: polled after each batch. */
    char out[1024];
    snprintf(out, sizeof out, "%s/aborted.slp", test_tmp_dir());
    sleapc_video_info vi = {"centered_pair_small.mp4", N_FRAMES, fh, fw, fc, NULL, NULL};
    sleapc_writer *w = NULL;
    CHECK_OK(sleapc_writer_open(out, p, &vi, 1, &w));
    a = (abort_after){0, 3};
    CHECK(sleapc_predict_array(p, &t, NULL, 0, w, NULL) == SLEAPC_ERR_INTERRUPTED);
    CHECK(strstr(sleapc_last_error(), "interrupted") != NULL);
    CHECK_OK(sleapc_writer_close(w, NULL));
    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(out, &r));
    if (r) {
        CHECK_MSG(r->n_frames == 3, "%lld frames written", (long long)r->n_frames);
        for (int64_t k = 0; k < r->n_frames; k++)
            CHECK(r->frames[k].frame_idx == k);
        sleapc__slp_close(r);
    }
    /* Without the callback the same calls run to the end. */
    sleapc_abort_set(NULL, NULL);
    CHECK_OK(sleapc_predictor_run(p, &t));
    CHECK(sleapc_predictor_n_frames(p) == N_FRAMES);
    sleapc_predictor_destroy(p);
}

int main(void)
{
    test_require_data();
    char centroid[2048], instance[2048];
    snprintf(centroid, sizeof centroid, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(instance, sizeof instance, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    const char *paths[2] = {centroid, instance};
    CHECK(load_frames());
    if (!frames)
        return test_finish();

    /* What separately loaded predictors give. */
    sleapc_predictor_opts o = opts();
    sleapc_predictor *own = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &own));
    static poses want;
    sleapc_skeleton own_sk = {0};
    if (own)
        CHECK_OK(sleapc_predictor_skeleton(own, &own_sk));
    int n_nodes = own_sk.n_nodes;
    CHECK(n_nodes > 0 && n_nodes <= MAX_NODES);
    if (own)
        CHECK_OK(predict_all(own, &want));
    int found = 0;
    for (int k = 0; k < N_FRAMES; k++)
        found += want.n[k];
    CHECK_MSG(found >= N_FRAMES, "only %d instances: nothing to compare", found);
    sleapc_predictor_destroy(own);

    check_shared(paths, &want, n_nodes);
    check_warmup(paths);
    check_abort(paths);
    free(frames);
    return test_finish();
}
