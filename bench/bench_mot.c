/* The MOT trackers' cost per frame (default "animal" preset) on the
 * detections of the sleap-nn reference cases (sleapnn-0.3.5/tracking/
 * input.slp: 1500 frames, 2 flies; SORT, ByteTrack, OC-SORT) or of another
 * file (INPUT; when its detections carry re-ID vectors, the appearance
 * trackers DeepSORT, StrongSORT, BoT-SORT, Deep OC-SORT too) repeated R
 * times as one long video, frame indices continued; bench/mot_sleapnn.py times
 * sleap-nn 0.3.5's trackers on the same detections, and the tracks and
 * tracked instances printed by both must agree. Two ways:
 *  - whole run: sleapc__mot_track_predictions (calibration, then tracking),
 *    as `sleapc track` runs it; sleap-nn's prepare() + track() loop;
 *  - online: the calibration once, then frame by frame (mot_online.h),
 *    each frame handed out once final; sleap-nn's track() loop. Its memory
 *    (RSS after the first tenth of the frames and at the end, allocations
 *    after that tenth) shows whether it stays flat.
 *
 * Times are CPU time of the process (both sides), steadier than wall time
 * on a shared machine.
 *
 * usage: bench_mot [DATA_DIR] [R] [INPUT] [TRACKERS]   ($SLEAPC_DATA_DIR,
 * else the shared data beside the source tree; R = 20; TRACKERS a comma
 * list, default as above) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rss.h"
#include "core/alloc.h"
#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/mot/mot_online.h"
#include "pipeline/tracking/mot/mot_run.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The input's frames in frame order (one video). */
static int64_t *frame_order(const sleapc_predictions *pr)
{
    int64_t *ord = malloc((size_t)(pr->n_frames > 0 ? pr->n_frames : 1) * sizeof *ord);
    for (int64_t k = 0; k < pr->n_frames; k++)
        ord[k] = k;
    /* insertion sort: the input is nearly in order already */
    for (int64_t i = 1; i < pr->n_frames; i++) {
        const int64_t k = ord[i];
        int64_t j = i;
        while (j > 0 && pr->frames[ord[j - 1]].frame_idx > pr->frames[k].frame_idx) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = k;
    }
    return ord;
}

/* in repeated R times as video 0, frames in frame order. */
static int build_long(const sleapc_predictions *in, int R, sleapc_predictions *out)
{
    memset(out, 0, sizeof *out);
    out->n_nodes = in->n_nodes;
    int64_t *ord = frame_order(in), *fidx = malloc((size_t)in->n_frames * sizeof *fidx);
    const int64_t span = in->frames[ord[in->n_frames - 1]].frame_idx + 1;
    /* one frame at a time, so the long run is in frame order */
    sleapc_predictions one = *in;
    sleapc_pred_frame fr;
    for (int r = 0; r < R; r++)
        for (int64_t q = 0; q < in->n_frames; q++) {
            const sleapc_pred_frame *f = &in->frames[ord[q]];
            fr = *f;
            fr.first = 0;
            one.frames = &fr;
            one.n_frames = 1;
            one.insts = in->insts + f->first;
            one.points = in->points + f->first * in->n_nodes * 2;
            one.point_scores = in->point_scores + f->first * in->n_nodes;
            if (in->emb_dim > 0 && in->embeddings)
                one.embeddings = in->embeddings + f->first * in->emb_dim;
            one.n_insts = f->n;
            fidx[0] = f->frame_idx + r * span;
            if (sleapc__results_append(out, &one, 0, fidx)) {
                free(ord);
                free(fidx);
                return 1;
            }
        }
    free(ord);
    free(fidx);
    return 0;
}

int main(int argc, char **argv)
{
    char data[1024], path[1200];
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
    const int R = argc > 2 ? atoi(argv[2]) : 20;
    if (argc > 3 && argv[3][0])
        snprintf(path, sizeof path, "%s", argv[3]);
    else
        snprintf(path, sizeof path, "%s/sleapnn-0.3.5/tracking/input.slp", data);
    sleapc_predictions in, run;
    if (R < 1 || sleapc__predictions_read(path, &in, NULL) || in.n_frames < 1) {
        fprintf(stderr, "bench_mot: %s: %s\n", path, R < 1 ? "R < 1" : sleapc_last_error());
        return 1;
    }
    if (build_long(&in, R, &run)) {
        fprintf(stderr, "bench_mot: %s\n", sleapc_last_error());
        return 1;
    }
    const int K = run.n_nodes;
    const int64_t nf = run.n_frames;
    printf("%lld frames (%d x %lld), %lld instances\n\n", (long long)nf, R, (long long)in.n_frames,
           (long long)run.n_insts);
    printf("| tracker | tracks | tracked | whole run ms/frame | calibration ms | online ms/frame "
           "| RSS at 10%% / 100%% (KiB) | allocations after 10%% | most pending frames |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    const int E = run.embeddings ? run.emb_dim : 0;
    sleapc_mot_tracker kinds[SLEAPC_MOT_N_TRACKERS];
    size_t n_kinds = 0;
    char list[256];
    snprintf(list, sizeof list, "%s",
             argc > 4 ? argv[4]
             : E > 0  ? "sort,bytetrack,ocsort,deepsort,strongsort,botsort,deepocsort"
                      : "sort,bytetrack,ocsort");
    for (char *tok = strtok(list, ","); tok && n_kinds < SLEAPC_MOT_N_TRACKERS;
         tok = strtok(NULL, ",")) {
        int t = sleapc__mot_tracker_from_name(tok);
        if (t < 0) {
            fprintf(stderr, "bench_mot: unknown tracker %s\n", tok);
            return 1;
        }
        kinds[n_kinds++] = (sleapc_mot_tracker)t;
    }
    for (size_t s = 0; s < n_kinds; s++) {
        sleapc_mot_params p;
        if (sleapc__mot_params_resolve(kinds[s], NULL, NULL, 0, &p))
            return 1;
        /* whole run */
        int n_ids = 0;
        double t0 = now_s();
        if (sleapc__mot_track_predictions(&run, &p, &n_ids, NULL)) {
            fprintf(stderr, "bench_mot: %s\n", sleapc_last_error());
            return 1;
        }
        const double whole = (now_s() - t0) * 1e3 / (double)nf;
        int64_t tracked = 0;
        for (int64_t i = 0; i < run.n_insts; i++)
            tracked += run.insts[i].track >= 0;
        /* online */
        t0 = now_s();
        mot_calibration cal;
        mot_online *o = NULL;
        if (sleapc__mot_run_calibrate(&run, 0, &p, &cal) ||
            sleapc__mot_online_create(&p, K, E, &cal, 0, &o)) {
            fprintf(stderr, "bench_mot: %s\n", sleapc_last_error());
            return 1;
        }
        const double t_cal = (now_s() - t0) * 1e3;
        float sc[64]; /* one frame's instance scores */
        long rss10 = 0;
        int64_t allocs10 = 0, pending = 0, taken = 0, online_tracked = 0;
        t0 = now_s();
        for (int64_t f = 0; f < nf; f++) {
            const sleapc_pred_frame *fr = &run.frames[f];
            for (int64_t i = 0; i < fr->n && i < 64; i++)
                sc[i] = run.insts[fr->first + i].score;
            if (fr->n > 64 || sleapc__mot_online_push(
                                  o, fr->frame_idx, run.points + fr->first * K * 2,
                                  run.point_scores + fr->first * K, sc,
                                  E > 0 ? run.embeddings + fr->first * E : NULL, (int)fr->n)) {
                fprintf(stderr, "bench_mot: frame %lld not tracked\n", (long long)f);
                return 1;
            }
            if (f + 1 == nf)
                sleapc__mot_online_finish(o);
            int64_t fi;
            int n;
            const int *lab;
            const double *ts;
            while (sleapc__mot_online_take(o, &fi, &n, &lab, &ts)) {
                for (int i = 0; i < n; i++)
                    online_tracked += lab[i] >= 0;
                taken++;
            }
            pending = f + 1 - taken > pending ? f + 1 - taken : pending;
            if (f + 1 == nf / 10) {
                rss10 = bench_rss_kib();
                allocs10 = sleapc__alloc_count();
            }
        }
        const double online = (now_s() - t0) * 1e3 / (double)nf;
        const int64_t allocs = sleapc__alloc_count() - allocs10;
        const long rss_end = bench_rss_kib();
        const int online_ids = sleapc__mot_online_next_name(o);
        sleapc__mot_online_destroy(o);
        if (online_tracked != tracked || online_ids != n_ids)
            fprintf(stderr, "bench_mot: %s: online %lld tracked / %d tracks, whole run %lld / %d\n",
                    sleapc__mot_tracker_name(kinds[s]), (long long)online_tracked, online_ids,
                    (long long)tracked, n_ids);
        printf("| %s | %d | %lld | %.4f | %.1f | %.4f | %ld / %ld | %lld | %lld |\n",
               sleapc__mot_tracker_name(kinds[s]), n_ids, (long long)tracked, whole, t_cal, online,
               rss10, rss_end, (long long)allocs, (long long)pending);
        fflush(stdout);
    }
    sleapc__predictions_free(&run);
    sleapc__predictions_free(&in);
    return 0;
}
