/* How much faster is Winograd F(2), F(4), F(6) than the direct method, per
 * 3x3 conv shape of the SLEAP UNets?
 *
 * For each shape, the four methods run in turns (rounds), each timed by the
 * process CPU time of one run, and the fastest round of each counts: on a
 * machine shared with other jobs CPU time is what the method cost, and
 * turns put any cache pressure from elsewhere on every method alike. Prints
 * ms, effective GFLOP/s (the direct method's FLOPs / time) and each
 * method's speed-up over direct.
 * Usage: bench_winograd [threads (1)] [rounds (5)] [shape: c_in x h x w, e.g. 16x384x384:
 * that table shape only, for a profiler; c_in x h x w -> c_out, e.g. 16x1024x1024->16: any
 * shape; "all": every table shape] [batch (1)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/native/native_kernels.h"
#include "core/alloc.h"
#include "core/threadpool.h"

typedef struct shape {
    int c_in, h, w, c_out;
} shape;

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int batch = argc > 4 ? atoi(argv[4]) : 1;
    if (batch < 1)
        batch = 1;
    if (threads < 1)
        threads = 1;
    if (rounds < 1)
        rounds = 1;
    /* Encoder and decoder convs of the bench_configs UNets (filters 16..256,
     * rate 2), a decoder conv over a concat, and the narrow deep maps. */
    static const shape shapes[] = {
        {1, 384, 384, 16},   {16, 384, 384, 16}, {16, 192, 192, 32},  {32, 192, 192, 32},
        {64, 96, 96, 64},    {128, 48, 48, 128}, {256, 24, 24, 256},  {512, 12, 12, 512},
        {384, 24, 24, 128},  {96, 96, 96, 32},   {256, 12, 12, 256},
        /* the centered-instance UNet's (filters 24, rate 2) */
        {24, 192, 192, 24},  {48, 96, 96, 48},   {384, 12, 12, 384},
    };
    shape any[1];
    const shape *list = shapes;
    size_t n_shapes = sizeof shapes / sizeof shapes[0];
    if (argc > 3 && sscanf(argv[3], "%dx%dx%d->%d", &any[0].c_in, &any[0].h, &any[0].w,
                           &any[0].c_out) == 4) {
        if (any[0].c_in < 1 || any[0].h < 1 || any[0].w < 1 || any[0].c_out < 1)
            return 1;
        list = any;
        n_shapes = 1;
    }
    sleapc_threadpool *tp = NULL;
    if (sleapc__threadpool_create(threads, &tp) != SLEAPC_OK)
        return 1;
    printf("%d thread(s), batch %d, fastest of %d rounds by process CPU time\n", threads, batch,
           rounds);
    printf("%-22s %10s %10s %10s %10s   %s\n", "c_in x h x w -> c_out", "direct ms", "F(2) ms",
           "F(4) ms", "F(6) ms", "speed-up F(2) F(4) F(6); direct GFLOP/s");
    for (size_t i = 0; i < n_shapes; i++) {
        const shape *s = &list[i];
        char only[64];
        snprintf(only, sizeof only, "%dx%dx%d", s->c_in, s->h, s->w);
        if (argc > 3 && list == shapes && strcmp(argv[3], "all") != 0 && strcmp(argv[3], only) != 0)
            continue;
        size_t n_src = (size_t)batch * s->c_in * s->h * s->w;
        size_t n_dst = (size_t)batch * s->c_out * s->h * s->w;
        size_t n_w = (size_t)s->c_out * s->c_in * 9;
        float *src = sleapc__aligned_alloc(n_src * sizeof *src);
        float *dst = sleapc__aligned_alloc(n_dst * sizeof *dst);
        float *wt = sleapc__aligned_alloc(n_w * sizeof *wt);
        unsigned seed = 1;
        for (size_t k = 0; k < n_src; k++)
            src[k] = (float)((seed = seed * 1664525u + 1013904223u) >> 16) / 65536.0f;
        for (size_t k = 0; k < n_w; k++)
            wt[k] = (float)((seed = seed * 1664525u + 1013904223u) >> 16) / 65536.0f - 0.5f;
        native_conv *conv = NULL;
        if (sleapc__native_conv_create(s->c_in, s->c_out, 3, 3, wt, NULL, true, &conv))
            return 1;
        size_t scratch_bytes = 0;
        for (int m = 0; m <= 6; m += 2) {
            sleapc__native_conv_set_winograd(conv, m);
            size_t b = sleapc__native_conv_scratch_size(conv, s->h, s->w, threads);
            scratch_bytes = b > scratch_bytes ? b : scratch_bytes;
        }
        void *scratch = sleapc__aligned_alloc(scratch_bytes);
        double best[4] = {1e30, 1e30, 1e30, 1e30};
        for (int r = 0; r <= rounds; r++)
            for (int k = 0; k < 4; k++) {
                sleapc__native_conv_set_winograd(conv, 2 * k);
                double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
                sleapc__native_conv_run(conv, tp, src, batch, s->h, s->w, dst, scratch);
                double t = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
                if (r > 0 && t < best[k]) /* round 0 warms up */
                    best[k] = t;
            }
        double flop = 2.0 * 9 * s->c_in * s->c_out * (double)s->h * s->w * batch;
        char label[64];
        snprintf(label, sizeof label, "%dx%dx%d -> %d", s->c_in, s->h, s->w, s->c_out);
        printf("%-22s %10.2f %10.2f %10.2f %10.2f   %5.2f %5.2f %5.2f; %.1f\n", label,
               1e3 * best[0], 1e3 * best[1], 1e3 * best[2], 1e3 * best[3], best[0] / best[1],
               best[0] / best[2], best[0] / best[3], flop / best[0] * 1e-9);
        sleapc__native_conv_destroy(conv);
        sleapc__aligned_free(scratch);
        sleapc__aligned_free(src);
        sleapc__aligned_free(dst);
        sleapc__aligned_free(wt);
    }
    sleapc__threadpool_destroy(tp);
    return 0;
}
