/* How far bf16 predictions are from float32 on whole videos, and how much
 * faster, measured in one run on the same frames:
 *
 *   bench_bf16_agreement [--frames N] [--precision bf16|bf16-emulated|fp32]
 *                        [--backend NAME] [--case NAME] [--verbose]
 *
 * Cases (data from SLEAPC_DATA_DIR, default ../shared/data):
 *   topdown    minimal_instance centroid + centered instance, centered_pair_small.mp4
 *   bottomup   minimal_instance bottom-up, centered_pair_small.mp4
 *   multiclass SLEAP 1.x min_tracks_2node multi-class bottom-up, tracks/clip.mp4
 *
 * Per case: the share of points within 0.1 / 0.5 / 1 px of float32 (instances
 * paired greedily by mean point distance; a point present in one precision
 * only counts as outside), frames with the same instance count, instances
 * whose class differs (multi-class), and the time of each precision; then
 * what each bf16 stage ran in (a model that fails the first-batch check runs
 * float32) and the share of each model's convolution FLOPs that the mixed-
 * precision split (SLEAPC_BF16_KEEP, bf16_policy.h) leaves in bf16. bf16
 * defaults to oneDNN's kernels where the CPU has them, else the exact
 * emulation (which gives the same figures at float32 speed or slower). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/bf16_policy.h"
#include "model/model_impl.h"
#include "sleapc/model.h"
#include "sleapc/predictor.h"
#include "sleapc/video.h"

#define MAX_INST 64
#define MAX_NODES 64
#define BATCH 4

typedef struct bench_case {
    const char *name;
    const char *models[2];
    int n_models;
    const char *video;
} bench_case;

static const bench_case cases[] = {
    {"topdown",
     {"sleap-nn-assets/model_ckpts/minimal_instance_centroid",
      "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"},
     2,
     "sleap-nn-assets/datasets/centered_pair_small.mp4"},
    {"bottomup", {"sleap-nn-assets/model_ckpts/minimal_instance_bottomup"}, 1,
     "sleap-nn-assets/datasets/centered_pair_small.mp4"},
    {"multiclass", {"sleap-nn-assets/legacy_models/min_tracks_2node.UNet.bottomup_multiclass"}, 1,
     "sleap-assets/tracks/clip.mp4"},
};

typedef struct tally {
    long points, within01, within05, within1;
    long frames, same_count, instances, class_differs;
    double s32, s16;
} tally;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One instance as read from sleapc_predictor_frame_results's arrays. */
typedef struct instance {
    const float *points, *point_scores;
    int track;
    bool has_centroid;
    float centroid[2];
} instance;

/* The first MAX_INST instances of frame f; returns how many. */
static int read_frame(const sleapc_predictor *p, int f, int n_nodes, float *points,
                      float *point_scores, float *centroids, instance *out)
{
    int n = 0, tracks[MAX_INST];
    sleapc_results r = {.max_instances = MAX_INST,
                        .points = points,
                        .point_scores = point_scores,
                        .tracks = tracks,
                        .centroids = centroids};
    if (sleapc_predictor_frame_results(p, f, &r, &n))
        return 0;
    n = n < MAX_INST ? n : MAX_INST;
    for (int i = 0; i < n; i++)
        out[i] = (instance){points + (size_t)i * (size_t)n_nodes * 2,
                            point_scores + (size_t)i * (size_t)n_nodes,
                            tracks[i],
                            !isnan(centroids[2 * i]),
                            {centroids[2 * i], centroids[2 * i + 1]}};
    return n;
}

/* Mean distance over nodes present in both; INFINITY when none is. */
static double inst_dist(const instance *a, const instance *b, int n_nodes)
{
    double sum = 0;
    int n = 0;
    for (int k = 0; k < n_nodes; k++) {
        float ax = a->points[2 * k], bx = b->points[2 * k];
        if (isnan(ax) || isnan(bx))
            continue;
        sum += hypot(ax - bx, a->points[2 * k + 1] - b->points[2 * k + 1]);
        n++;
    }
    return n ? sum / n : INFINITY;
}

/* --verbose: each point beyond 0.5 px, each frame whose count differs. */
static bool verbose;

static void compare_frame(const sleapc_predictor *p32, const sleapc_predictor *p16, int f,
                          int64_t frame, tally *t)
{
    sleapc_skeleton sk;
    if (sleapc_predictor_skeleton(p32, &sk) || sk.n_nodes > MAX_NODES)
        return;
    int n_nodes = sk.n_nodes;
    static float pts[2][MAX_INST * MAX_NODES * 2], scs[2][MAX_INST * MAX_NODES];
    static float cen[2][MAX_INST * 2];
    instance a[MAX_INST], b[MAX_INST];
    int na = read_frame(p32, f, n_nodes, pts[0], scs[0], cen[0], a);
    int nb = read_frame(p16, f, n_nodes, pts[1], scs[1], cen[1], b);
    t->frames++;
    t->same_count += na == nb;
    if (verbose && na != nb)
        printf("  frame %lld: %d instances in fp32, %d in bf16\n", (long long)frame, na, nb);
    bool used[MAX_INST] = {false};
    for (int i = 0; i < na; i++) {
        int best = -1;
        double bd = INFINITY;
        for (int j = 0; j < nb; j++) {
            double d = used[j] ? INFINITY : inst_dist(&a[i], &b[j], n_nodes);
            if (d < bd) {
                bd = d;
                best = j;
            }
        }
        t->instances++;
        for (int k = 0; k < n_nodes; k++) {
            if (isnan(a[i].points[2 * k]))
                continue;
            t->points++;
            if (best < 0 || isnan(b[best].points[2 * k]))
                continue;
            double d = hypot(a[i].points[2 * k] - b[best].points[2 * k],
                             a[i].points[2 * k + 1] - b[best].points[2 * k + 1]);
            t->within01 += d <= 0.1;
            t->within05 += d <= 0.5;
            t->within1 += d <= 1.0;
            if (verbose && d > 0.5)
                printf("  frame %lld: instance %d node %d: %.2f px (score fp32 %.3f, bf16 "
                       "%.3f; centroid moved %.3f px)\n",
                       (long long)frame, i, k, d, a[i].point_scores[k],
                       b[best].point_scores[k],
                       a[i].has_centroid ? hypot(a[i].centroid[0] - b[best].centroid[0],
                                                 a[i].centroid[1] - b[best].centroid[1])
                                         : 0.0);
        }
        if (best >= 0) {
            used[best] = true;
            t->class_differs += a[i].track != b[best].track;
        } else {
            t->class_differs += a[i].track >= 0;
        }
    }
}

/* The share of the model's convolution FLOPs in bf16 under the keep bits in
 * force: the same at every input size of a fully convolutional network. */
static double bf16_share(const char *model_dir)
{
    sleapc_model *m = NULL;
    sleapc_bf16_plan plan;
    double share = -1;
    if (sleapc_model_load(model_dir, &m) == SLEAPC_OK &&
        sleapc__bf16_plan_make(&m->graph, sleapc__bf16_keep_default(), &plan) == SLEAPC_OK) {
        int64_t side = 8 * (m->graph.max_stride > 1 ? m->graph.max_stride : 2);
        share = sleapc__bf16_plan_flop_share(&m->graph, &plan, side, side);
        sleapc__bf16_plan_free(&plan);
    }
    sleapc_model_destroy(m);
    return share;
}

static void print_stages(const sleapc_predictor *p)
{
    for (int i = 0; i < sleapc_predictor_n_stages(p); i++) {
        sleapc_stage_info s;
        if (sleapc_predictor_stage_info(p, i, &s))
            continue;
        const char *slash = strrchr(s.model, '/');
        printf("    %s: ran %s on %s; first batch: heads %.2f%% from fp32, %.2f%% of keypoints "
               "expected to move; %.1f%% of FLOPs in bf16 (keep %u)\n",
               slash ? slash + 1 : s.model, sleapc_precision_name(s.precision), s.backend,
               100 * s.bf16_error, 100 * s.bf16_moved,
               s.precision == SLEAPC_PRECISION_FP32 ? 0.0 : 100 * bf16_share(s.model),
               sleapc__bf16_keep_default());
    }
}

static int run_case(const bench_case *c, const char *data, long max_frames, const char *backend,
                    sleapc_precision precision)
{
    char paths[2][4096], video[4096];
    const char *mp[2];
    for (int i = 0; i < c->n_models; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", data, c->models[i]);
        mp[i] = paths[i];
    }
    snprintf(video, sizeof video, "%s/%s", data, c->video);
    sleapc_video *v = NULL;
    if (sleapc_video_open(video, &v) != SLEAPC_OK) {
        fprintf(stderr, "%s: %s\n", c->name, sleapc_last_error());
        return 1;
    }
    int64_t h, w, ch;
    sleapc_video_shape(v, &h, &w, &ch);
    int64_t n = sleapc_video_n_frames(v);
    if (max_frames > 0 && max_frames < n)
        n = max_frames;
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.batch_size = BATCH;
    sleapc_predictor *p32 = NULL, *p16 = NULL;
    o.precision = SLEAPC_PRECISION_FP32;
    o.backend = "auto";
    sleapc_status st = sleapc_predictor_create(mp, c->n_models, &o, &p32);
    o.precision = precision;
    o.backend = backend;
    if (!st)
        st = sleapc_predictor_create(mp, c->n_models, &o, &p16);
    uint8_t *buf = malloc((size_t)(BATCH * h * w * ch));
    if (st || !buf) {
        fprintf(stderr, "%s: %s\n", c->name, st ? sleapc_last_error() : "out of memory");
        sleapc_predictor_destroy(p32);
        sleapc_predictor_destroy(p16);
        sleapc_video_close(v);
        free(buf);
        return 1;
    }
    tally t = {0};
    for (int64_t f0 = 0; f0 < n && !st; f0 += BATCH) {
        int64_t b = n - f0 < BATCH ? n - f0 : BATCH;
        for (int64_t k = 0; k < b && !st; k++)
            st = sleapc_video_read(v, f0 + k, buf + (size_t)(k * h * w * ch));
        sleapc_frame x = {.data = buf,
                          .n_frames = b,
                          .height = h,
                          .width = w,
                          .format =
                              ch == 3 ? SLEAPC_PIXEL_FORMAT_RGB24 : SLEAPC_PIXEL_FORMAT_GRAY8};
        double t0 = now_s();
        if (!st)
            st = sleapc_predictor_run(p32, &x);
        double t1 = now_s();
        if (!st)
            st = sleapc_predictor_run(p16, &x);
        double t2 = now_s();
        t.s32 += t1 - t0;
        t.s16 += t2 - t1;
        for (int k = 0; k < b && !st; k++)
            compare_frame(p32, p16, k, f0 + k, &t);
    }
    if (st)
        fprintf(stderr, "%s: %s\n", c->name, sleapc_last_error());
    else
        printf("%-10s %6ld frames %7ld points | within 0.1 px %6.2f%%  0.5 px %6.2f%%  1 px "
               "%6.2f%% | same count %7.3f%% | class differs %ld/%ld | fp32 %.1f s, bf16 %.1f s "
               "(%.2fx)\n",
               c->name, t.frames, t.points, 100.0 * t.within01 / (double)t.points,
               100.0 * t.within05 / (double)t.points, 100.0 * t.within1 / (double)t.points,
               100.0 * t.same_count / (double)t.frames, t.class_differs, t.instances, t.s32,
               t.s16, t.s32 / t.s16);
    if (!st)
        print_stages(p16);
    fflush(stdout);
    sleapc_predictor_destroy(p32);
    sleapc_predictor_destroy(p16);
    sleapc_video_close(v);
    free(buf);
    return st ? 1 : 0;
}

int main(int argc, char **argv)
{
    long max_frames = 0;
    const char *prec = NULL, *backend = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
            max_frames = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc)
            prec = argv[++i];
        else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            backend = argv[++i];
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = true;
        else {
            fprintf(stderr, "usage: %s [--frames N] [--precision bf16|bf16-emulated|fp32] "
                            "[--backend NAME] [--case topdown|bottomup|multiclass] [--verbose]\n",
                    argv[0]);
            return 2;
        }
    }
    const char *data = getenv("SLEAPC_DATA_DIR");
    if (!data || !*data)
        data = "../shared/data";
    sleapc_precision precision = SLEAPC_PRECISION_BF16;
    if (prec && strcmp(prec, "bf16-emulated") == 0)
        precision = SLEAPC_PRECISION_BF16_EMULATED;
    /* fp32 on another backend: how far float32 itself moves when only the
     * order of its sums changes (the floor any bf16 figure is read against) */
    if (prec && strcmp(prec, "fp32") == 0)
        precision = SLEAPC_PRECISION_FP32;
    if (!prec) {
        /* The hardware where it is there, else the emulation. */
        sleapc_predictor_opts o = sleapc_predictor_opts_default();
        o.backend = "onednn";
        o.precision = SLEAPC_PRECISION_BF16;
        char model[4096];
        snprintf(model, sizeof model, "%s/%s", data, cases[1].models[0]);
        const char *mp[1] = {model};
        sleapc_predictor *p = NULL;
        if (sleapc_predictor_create(mp, 1, &o, &p) != SLEAPC_OK)
            precision = SLEAPC_PRECISION_BF16_EMULATED;
        sleapc_predictor_destroy(p);
    }
    if (!backend)
        backend = precision == SLEAPC_PRECISION_BF16_EMULATED ? "native" : "onednn";
    printf("%s on %s against fp32 (auto), batch %d\n", sleapc_precision_name(precision), backend,
           BATCH);
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!only || strcmp(only, cases[i].name) == 0)
            rc |= run_case(&cases[i], data, max_frames, backend, precision);
    return rc;
}
