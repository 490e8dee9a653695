/* Tracking quality and cost. Quality: ID switches and IDF1 of each option
 * set against the true tracks of clip.mp4 (sleap-assets/tracks/clip.slp),
 * on the untracked predictions clip.predictions.slp, with the metric of
 * tracking/README.md (per frame, Hungarian on the mean head/thorax distance,
 * pairs over 50 px never match; IDF1 with the one-to-one track assignment
 * that maximises IDTP). Cost: the tracker's time per frame beside reading
 * and writing, for the same predictions.
 *
 * usage: bench_tracking [DATA_DIR]   ($SLEAPC_DATA_DIR, else the shared data
 * beside the source tree) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "io/predictions/predictions_format.h"
#include "io/slp/slp_read.h"
#include "layers/ops/hungarian.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"
#include "sleapc/tracking.h"

typedef struct option_set {
    const char *name;
    const char *flags;
    double snn_idf1;
    int snn_switches, snn_tracks; /* sleap-nn's figures (tracking/README.md); -1 = none */
} option_set;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Applies "--flag value" pairs (the few this bench uses) to t. */
static void apply_flags(const char *flags, sleapc_tracking_opts *t)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", flags);
    char *save = NULL;
    for (char *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
        if (!strcmp(a, "--use_flow")) {
            t->use_flow = true;
            continue;
        }
        if (!strcmp(a, "--post_connect_single_breaks")) {
            t->post_connect_single_breaks = true;
            continue;
        }
        char *v = strtok_r(NULL, " ", &save);
        static char keep[16][64];
        static int nk;
        char *s = keep[nk++ % 16];
        snprintf(s, 64, "%s", v ? v : "");
        if (!strcmp(a, "--candidates_method"))
            t->candidates_method = s;
        else if (!strcmp(a, "--features"))
            t->features = s;
        else if (!strcmp(a, "--scoring_method"))
            t->scoring_method = s;
        else if (!strcmp(a, "--scoring_reduction"))
            t->scoring_reduction = s;
        else if (!strcmp(a, "--track_matching_method"))
            t->track_matching_method = s;
        else if (!strcmp(a, "--max_tracks"))
            t->max_tracks = atoi(s);
        else if (!strcmp(a, "--tracking_window_size"))
            t->tracking_window_size = atoi(s);
        else if (!strcmp(a, "--tracking_target_instance_count"))
            t->tracking_target_instance_count = atoi(s);
        else if (!strcmp(a, "--tracking_pre_cull_to_target"))
            t->tracking_pre_cull_to_target = atoi(s);
        else if (!strcmp(a, "--robust_best_instance"))
            t->robust_best_instance = atof(s);
        else if (!strcmp(a, "--oks_stddev"))
            t->oks_stddev = atof(s);
        else if (!strcmp(a, "--min_new_track_points"))
            t->min_new_track_points = atoi(s);
    }
}

static int node_index(const sleapc_slp_skeleton *sk, const char *name)
{
    for (int i = 0; i < sk->n_nodes; i++)
        if (!strcmp(sk->node_names[i], name))
            return i;
    return -1;
}

/* Mean distance over the shared nodes visible in both; inf when none. */
static double pair_distance(const double *gt, const float *pr, int n)
{
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(gt[2 * i]) || isnan(pr[2 * i]) || isnan(gt[2 * i + 1]) || isnan(pr[2 * i + 1]))
            continue;
        sum += hypot(gt[2 * i] - pr[2 * i], gt[2 * i + 1] - pr[2 * i + 1]);
        k++;
    }
    return k ? sum / k : INFINITY;
}

typedef struct metrics {
    double idf1;
    int switches, tracks;
} metrics;

/* The metric of tracking/README.md. gt_xy: per GT instance the shared nodes. */
static metrics score(const sleapc_slp *gt, const int *gt_nodes, const sleapc_predictions *pr)
{
    metrics m = {0, 0, pr->n_tracks};
    const int T = gt->n_tracks, P = pr->n_tracks > 0 ? pr->n_tracks : 1;
    int64_t *idtp = calloc((size_t)T * P, sizeof *idtp);
    int *last = malloc(sizeof(int) * (size_t)T);
    for (int t = 0; t < T; t++)
        last[t] = -2;
    int64_t n_gt = 0, n_pr = 0;
    for (int64_t k = 0; k < pr->n_insts; k++)
        n_pr += pr->insts[k].track >= 0;
    sleapc_hungarian_ws ws = {0};
    for (int64_t f = 0; f < gt->n_frames; f++) {
        const sleapc_slp_frame *gf = &gt->frames[f];
        const sleapc_pred_frame *pf = NULL;
        for (int64_t q = 0; q < pr->n_frames && !pf; q++)
            if (pr->frames[(f + q) % pr->n_frames].frame_idx == gf->frame_idx)
                pf = &pr->frames[(f + q) % pr->n_frames];
        int ng = 0, gidx[16];
        double gxy[16][4];
        for (int64_t i = 0; i < gf->n_instances && ng < 16; i++) {
            const sleapc_slp_instance *in = &gt->instances[gf->first_instance + i];
            if (in->predicted || in->track < 0)
                continue;
            for (int j = 0; j < 2; j++) {
                const sleapc_slp_point *p = &gt->points[in->first_point + gt_nodes[j]];
                gxy[ng][2 * j] = p->visible ? p->x : NAN;
                gxy[ng][2 * j + 1] = p->visible ? p->y : NAN;
            }
            gidx[ng++] = in->track;
        }
        n_gt += ng;
        const int np = pf ? (int)pf->n : 0;
        if (!ng || !np)
            continue;
        double cost[16 * 16];
        int64_t rows[16], cols[16], n_pairs = 0;
        for (int i = 0; i < ng; i++)
            for (int j = 0; j < np && j < 16; j++) {
                const sleapc_pred_instance *pi = &pr->insts[pf->first + j];
                const double d = pi->track < 0 ? INFINITY
                                               : pair_distance(gxy[i], pr->points +
                                                                           (pf->first + j) * 2 * 2,
                                                               2);
                cost[i * (np < 16 ? np : 16) + j] = d <= 50 ? d : INFINITY;
            }
        sleapc__hungarian_solve_partial_ws(cost, ng, np < 16 ? np : 16, &ws, rows, cols, &n_pairs);
        for (int64_t k = 0; k < n_pairs; k++) {
            const int t = gidx[rows[k]], p = pr->insts[pf->first + cols[k]].track;
            idtp[t * P + p]++;
            if (last[t] != -2 && last[t] != p)
                m.switches++;
            last[t] = p;
        }
    }
    /* one-to-one assignment maximising IDTP */
    double *c = malloc(sizeof(double) * (size_t)T * P);
    for (int i = 0; i < T * P; i++)
        c[i] = -(double)idtp[i];
    int64_t rows[64], cols[64];
    sleapc__hungarian_solve_ws(c, T, P, &ws, rows, cols);
    int64_t tp = 0;
    for (int k = 0; k < (T < P ? T : P); k++)
        tp += idtp[rows[k] * P + cols[k]];
    m.idf1 = 2.0 * tp / (2.0 * tp + (double)(n_pr - tp) + (double)(n_gt - tp));
    sleapc__hungarian_ws_free(&ws);
    free(c);
    free(idtp);
    free(last);
    return m;
}

int main(int argc, char **argv)
{
    char data[1024];
    const char *env = getenv("SLEAPC_DATA_DIR");
    if (argc > 1 && argv[1][0]) {
        snprintf(data, sizeof data, "%s", argv[1]);
    } else if (env) {
        snprintf(data, sizeof data, "%s", env);
    } else { /* this file's folder (CMake compiles by full path) is bench/ */
        const char *slash = strrchr(__FILE__, '/');
        snprintf(data, sizeof data, "%.*s/../../shared/data", slash ? (int)(slash - __FILE__) : 1,
                 slash ? __FILE__ : ".");
    }
    char gt_path[1024], pr_path[1024], out_path[] = "/tmp/bench_tracking_out.json";
    snprintf(gt_path, sizeof gt_path, "%s/sleap-assets/tracks/clip.slp", data);
    snprintf(pr_path, sizeof pr_path, "%s/sleap-assets/tracks/clip.predictions.slp", data);
    sleapc_slp *gt = NULL;
    if (sleapc__slp_open(gt_path, &gt)) {
        fprintf(stderr, "bench_tracking: %s: %s\n", gt_path, sleapc_last_error());
        return 1;
    }
    const int gt_nodes[2] = {node_index(&gt->skeletons[0], "head"),
                             node_index(&gt->skeletons[0], "thorax")};
    if (gt_nodes[0] < 0 || gt_nodes[1] < 0) {
        fprintf(stderr, "bench_tracking: %s has no head/thorax nodes\n", gt_path);
        return 1;
    }
    const option_set sets[] = {
        {"SLEAP 1.4's own tracks (clip.predictions.slp)", NULL, 0.9116, 15, 2},
        {"clip_a_default", "", 0.7999, 17, 3},
        {"clip_b_centroid_euclid_greedy",
         "--candidates_method fixed_window --features centroids --scoring_method euclidean_dist "
         "--track_matching_method greedy",
         0.7034, 15, 3},
        {"clip_d_localq_oks_max2",
         "--candidates_method local_queues --features keypoints --scoring_method oks "
         "--track_matching_method hungarian --max_tracks 2",
         0.9116, 15, 2},
        {"clip_f_target2_precull_connect",
         "--tracking_target_instance_count 2 --tracking_pre_cull_to_target 1 "
         "--post_connect_single_breaks",
         0.9116, 15, 2},
        {"clip_h_flow", "--use_flow", 0.7999, 17, 3},
        {"max_tracks 2, window 10", "--max_tracks 2 --tracking_window_size 10", -1, -1, -1},
        {"max_tracks 2, window 20", "--max_tracks 2 --tracking_window_size 20", -1, -1, -1},
        {"max_tracks 2, centroids, euclidean", "--max_tracks 2 --features centroids "
                                               "--scoring_method euclidean_dist", -1, -1, -1},
        {"max_tracks 2, oks_stddev 0.1", "--max_tracks 2 --oks_stddev 0.1", -1, -1, -1},
        {"max_tracks 2, flow", "--max_tracks 2 --use_flow", -1, -1, -1},
    };
    printf("| option set | IDF1 | ID switches | tracks | sleap-nn IDF1 | sleap-nn switches | "
           "sleap-nn tracks | tracking ms/frame |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        sleapc_tracking_opts t = sleapc_tracking_opts_default();
        t.tracking = sets[s].flags != NULL;
        if (sets[s].flags)
            apply_flags(sets[s].flags, &t);
        const char *outs[1] = {out_path};
        if (sleapc_retrack(pr_path, outs, 1, &t, NULL)) {
            fprintf(stderr, "bench_tracking: %s: %s\n", sets[s].name, sleapc_last_error());
            return 1;
        }
        sleapc_predictions pr;
        memset(&pr, 0, sizeof pr);
        if (sleapc__predictions_read(out_path, &pr, NULL)) {
            fprintf(stderr, "bench_tracking: %s\n", sleapc_last_error());
            return 1;
        }
        const metrics m = score(gt, gt_nodes, &pr);
        sleapc__predictions_free(&pr);
        /* the tracker alone, on the loaded predictions (flow includes decoding) */
        double ms = NAN;
        if (sets[s].flags && !t.use_flow) {
            sleapc_predictions in;
            memset(&in, 0, sizeof in);
            sleapc_tracker_opts o;
            if (!sleapc__predictions_read(pr_path, &in, NULL) &&
                !sleapc__tracking_resolve(&t, in.n_nodes, &o)) {
                const double t0 = now_s();
                sleapc__predictions_track(&in, &o, NULL);
                ms = (now_s() - t0) * 1e3 / (double)(in.n_frames > 0 ? in.n_frames : 1);
            }
            sleapc__predictions_free(&in);
        }
        printf("| %s | %.4f | %d | %d |", sets[s].name, m.idf1, m.switches, m.tracks);
        if (sets[s].snn_switches >= 0)
            printf(" %.4f | %d | %d |", sets[s].snn_idf1, sets[s].snn_switches,
                   sets[s].snn_tracks);
        else
            printf(" | | |");
        if (isnan(ms))
            printf(" |\n");
        else
            printf(" %.4f |\n", ms);
        fflush(stdout);
    }
    remove(out_path);
    sleapc__slp_close(gt);
    return 0;
}
