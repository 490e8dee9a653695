/* Does "auto" run as fast as the best backend? For each trained model of the
 * bench set, every backend that runs here and "auto" predict the same frames
 * in one run; the network FPS of each (sleapc_predictor_get_stats), the
 * backend auto chose, and auto / best:
 *
 *   bench_auto [--frames N] [--rounds R] [--threads T] [--case NAME]
 *
 * Each predictor is made once and first runs one batch (4 frames, the
 * default batch size) untimed, so auto measures on the steady shape and its
 * measurement and every backend's planning stay out of the timing (auto is
 * judged on what it chose, as a long video sees it). Then R rounds: in each,
 * every predictor runs the N frames in turns, in an order rotated by one
 * each round, so a burst of load elsewhere does not fall on one of them
 * only; each keeps its best round (a shared
 * machine only ever adds time). Cases (data from SLEAPC_DATA_DIR, default
 * ../shared/data):
 *   topdown   minimal_instance centroid + centered instance, centered_pair_small.mp4
 *   bottomup  minimal_instance bottom-up, centered_pair_small.mp4
 *   single    minimal_instance single instance, small_robot.mp4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sleapc/input.h"
#include "sleapc/predictor.h"
#include "sleapc/runner.h"

#define MAX_BE 8
#define WARM 4 /* frames of the untimed first batch */

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
    {"single", {"sleap-nn-assets/model_ckpts/minimal_instance_single_instance"}, 1,
     "sleap-nn-assets/datasets/small_robot.mp4"},
};

/* "native+onednn" for a top-down predictor whose stages run on different
 * backends. */
static void ran_on(const sleapc_predictor *p, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < sleapc_predictor_n_stages(p) && len < cap; i++) {
        sleapc_stage_info s;
        if (sleapc_predictor_stage_info(p, i, &s) || (i > 0 && strstr(out, s.backend)))
            continue;
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "+" : "", s.backend);
    }
}

static int run_case(const bench_case *c, const char *data, int64_t frames, int rounds,
                    int threads)
{
    char paths[2][4096], video[4096];
    const char *mp[2];
    for (int i = 0; i < c->n_models; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", data, c->models[i]);
        mp[i] = paths[i];
    }
    snprintf(video, sizeof video, "%s/%s", data, c->video);
    const char *names[MAX_BE];
    sleapc_predictor *p[MAX_BE] = {NULL};
    double best_fps[MAX_BE] = {0};
    int n = 0, rc = 0;
    for (int i = 0; i < sleapc_backend_count() && n < MAX_BE - 1; i++)
        if (sleapc_backend_available(i))
            names[n++] = sleapc_backend_name(i);
    names[n++] = "auto";
    sleapc_input *in = NULL;
    if (sleapc_input_open(video, 0, &in)) {
        fprintf(stderr, "%s: %s\n", c->name, sleapc_last_error());
        return 1;
    }
    int64_t total = sleapc_input_n_frames(in);
    if (frames > total)
        frames = total;
    int64_t *idx = malloc((size_t)frames * sizeof *idx);
    if (!idx) {
        sleapc_input_close(in);
        return 1;
    }
    /* The timed frames follow the untimed first batch. */
    int64_t first[WARM] = {0, 1, 2, 3};
    for (int64_t k = 0; k < frames; k++)
        idx[k] = (WARM + k) % total;
    for (int b = 0; b < n; b++) {
        sleapc_predictor_opts o = sleapc_predictor_opts_default();
        o.backend = names[b];
        o.n_threads = threads;
        if (sleapc_predictor_create(mp, c->n_models, &o, &p[b]) ||
            sleapc_predict_input(p[b], in, first, total < WARM ? total : WARM, NULL, NULL)) {
            printf("%-9s %-8s skipped: %s\n", c->name, names[b], sleapc_last_error());
            sleapc_predictor_destroy(p[b]);
            p[b] = NULL;
        }
    }
    /* Each round starts one predictor further on: none always runs right
     * after the same one (whose threads may still spin, e.g. XNNPACK's). */
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < n; j++) {
            int b = (j + r) % n;
            if (!p[b])
                continue;
            sleapc_predictor_reset_stats(p[b]);
            if (sleapc_predict_input(p[b], in, idx, frames, NULL, NULL)) {
                fprintf(stderr, "%s %s: %s\n", c->name, names[b], sleapc_last_error());
                rc = 1;
                continue;
            }
            sleapc_predictor_stats st = sleapc_predictor_get_stats(p[b]);
            double fps = st.network_s > 0 ? (double)st.frames / st.network_s : 0;
            if (fps > best_fps[b])
                best_fps[b] = fps;
        }
    int best = -1;
    for (int b = 0; b < n - 1; b++)
        if (p[b] && (best < 0 || best_fps[b] > best_fps[best]))
            best = b;
    printf("%-9s %lld frames x %d rounds, network FPS (best round):", c->name,
           (long long)frames, rounds);
    for (int b = 0; b < n; b++)
        if (p[b])
            printf(" %s %.2f", names[b], best_fps[b]);
    char chose[64] = "";
    if (p[n - 1])
        ran_on(p[n - 1], chose, sizeof chose);
    if (best >= 0 && p[n - 1] && best_fps[best] > 0)
        printf(" | auto chose %s, fastest %s, auto/best %.3f\n", chose, names[best],
               best_fps[n - 1] / best_fps[best]);
    else
        printf("\n");
    fflush(stdout);
    for (int b = 0; b < n; b++)
        sleapc_predictor_destroy(p[b]);
    free(idx);
    sleapc_input_close(in);
    return rc;
}

int main(int argc, char **argv)
{
    long frames = 40, rounds = 3, threads = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
            frames = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--frames N] [--rounds R] [--threads T] "
                            "[--case topdown|bottomup|single]\n",
                    argv[0]);
            return 2;
        }
    }
    if (frames < 1 || rounds < 1 || threads < 0) {
        fprintf(stderr, "%s: --frames and --rounds must be >= 1, --threads >= 0\n", argv[0]);
        return 2;
    }
    const char *data = getenv("SLEAPC_DATA_DIR");
    if (!data || !*data)
        data = "../shared/data";
    /* "auto" must measure here, whatever the environment pins it to, on
     * its first (short, untimed) batch, which alone could not repay it, and
     * under this run's conditions rather than from the cache. */
    if (sleapc_setting_set("backend", "auto") || sleapc_setting_set("auto_measure", "full") ||
        sleapc_setting_set("cache_dir", "")) {
        fprintf(stderr, "%s\n", sleapc_last_error());
        return 2;
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!only || strcmp(only, cases[i].name) == 0)
            rc |= run_case(&cases[i], data, frames, (int)rounds, (int)threads);
    return rc;
}
