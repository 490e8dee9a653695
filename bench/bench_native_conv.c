/* How fast is the native 3x3 convolution at SLEAP UNet shapes?
 *
 * Times sleapc__native_conv_run (best microkernel set, then the generic one)
 * with 1 and 2 threads against a naive direct convolution measured in the
 * same run, and prints ms, GFLOP/s (2 * MACs) and the speedup over the naive
 * loop. Also times a 1x1 head conv and the 3x3 stride-2 transposed conv.
 * "cpu" is the process CPU time of the fastest run: far below threads x wall
 * time means the threads were not all running (a busy machine).
 * Usage: bench_native_conv [max_threads]  (default 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"
#include "core/alloc.h"
#include "core/threadpool.h"

typedef struct shape {
    int c_in, h, w, c_out, k;
} shape;

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill_random(float *p, size_t n, unsigned *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        p[i] = (float)((*seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
}

/* The baseline: the definition, loop by loop, with the border test inside. */
static void naive_conv(const shape *s, const float *src, const float *wt, const float *bias,
                       float *dst)
{
    int pad = (s->k - 1) / 2;
    for (int co = 0; co < s->c_out; co++)
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++) {
                float acc = bias[co];
                for (int ci = 0; ci < s->c_in; ci++)
                    for (int ky = 0; ky < s->k; ky++)
                        for (int kx = 0; kx < s->k; kx++) {
                            int iy = y + ky - pad, ix = x + kx - pad;
                            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                continue;
                            acc += src[((size_t)ci * s->h + iy) * s->w + ix] *
                                   wt[(((size_t)co * s->c_in + ci) * s->k + ky) * s->k + kx];
                        }
                dst[((size_t)co * s->h + y) * s->w + x] = acc > 0 ? acc : 0;
            }
}

/* Best (lowest) wall time of repeated runs, at least min_s seconds in all;
 * *cpu_s: the process CPU time of that run. */
typedef void (*bench_fn)(void *ctx);

static double best_time(bench_fn fn, void *ctx, double min_s, double *cpu_s)
{
    fn(ctx); /* warm caches and threads */
    double best = 1e30, total = 0;
    int reps = 0;
    while (total < min_s || reps < 3) {
        double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        fn(ctx);
        double t = clock_s(CLOCK_MONOTONIC) - t0;
        if (t < best) {
            best = t;
            *cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        }
        total += t;
        reps++;
    }
    return best;
}

typedef struct conv_ctx {
    const shape *s;
    native_conv *conv;
    native_convt *convt;
    sleapc_threadpool *tp;
    const float *src, *wt, *bias;
    float *dst;
    void *scratch;
} conv_ctx;

static void run_naive(void *p)
{
    conv_ctx *c = p;
    naive_conv(c->s, c->src, c->wt, c->bias, c->dst);
}

static void run_native(void *p)
{
    conv_ctx *c = p;
    sleapc__native_conv_run(c->conv, c->tp, c->src, 1, c->s->h, c->s->w, c->dst, c->scratch);
}

static void run_convt(void *p)
{
    conv_ctx *c = p;
    sleapc__native_convt_run(c->convt, c->tp, c->src, 1, c->s->h, c->s->w, c->dst, c->scratch);
}

static double flops(const shape *s)
{
    return 2.0 * s->c_in * s->c_out * s->k * s->k * (double)s->h * s->w;
}

static void bench_shape(const shape *s, int max_threads, bool with_naive)
{
    size_t n_src = (size_t)s->c_in * s->h * s->w, n_dst = (size_t)s->c_out * s->h * s->w;
    size_t n_w = (size_t)s->c_out * s->c_in * s->k * s->k;
    float *src = sleapc__malloc(n_src * sizeof *src);
    float *dst = sleapc__malloc(n_dst * sizeof *dst);
    float *wt = sleapc__malloc(n_w * sizeof *wt);
    float *bias = sleapc__malloc((size_t)s->c_out * sizeof *bias);
    if (!src || !dst || !wt || !bias) {
        printf("out of memory\n");
        exit(1);
    }
    unsigned seed = 1;
    fill_random(src, n_src, &seed);
    fill_random(wt, n_w, &seed);
    fill_random(bias, (size_t)s->c_out, &seed);
    conv_ctx c = {.s = s, .src = src, .wt = wt, .bias = bias, .dst = dst};

    printf("%dx%d conv 1x%dx%dx%d -> %d\n", s->k, s->k, s->c_in, s->h, s->w, s->c_out);
    double t_naive = 0;
    if (with_naive) {
        double cpu = 0;
        t_naive = best_time(run_naive, &c, 0.0, &cpu);
        printf("  %-22s %9.2f ms %7.1f GFLOP/s  cpu %8.2f ms\n", "naive (baseline)",
               1e3 * t_naive, flops(s) / t_naive * 1e-9, 1e3 * cpu);
    }
    for (int isa = NATIVE_ISA_COUNT - 1; isa >= 0; isa--) {
        const native_ukernels *uk = sleapc__native_ukernels_get((native_isa)isa);
        if (!uk)
            continue;
        if (sleapc__native_conv_create_uk(uk, s->c_in, s->c_out, s->k, s->k, wt, bias, true,
                                          &c.conv) != SLEAPC_OK) {
            printf("  create failed\n");
            continue;
        }
        for (int nt = 1; nt <= max_threads; nt++) {
            if (sleapc__threadpool_create(nt, &c.tp) != SLEAPC_OK)
                break;
            c.scratch = sleapc__aligned_alloc(
                sleapc__native_conv_scratch_size(c.conv, s->h, s->w, nt));
            double cpu = 0;
            double t = best_time(run_native, &c, 0.5, &cpu);
            char label[64];
            snprintf(label, sizeof label, "%s, %d thread%s", uk->name, nt, nt > 1 ? "s" : "");
            printf("  %-22s %9.2f ms %7.1f GFLOP/s  cpu %8.2f ms", label, 1e3 * t,
                   flops(s) / t * 1e-9, 1e3 * cpu);
            if (with_naive)
                printf("  x%.1f vs naive", t_naive / t);
            printf("\n");
            sleapc__aligned_free(c.scratch);
            sleapc__threadpool_destroy(c.tp);
        }
        sleapc__native_conv_destroy(c.conv);
    }
    sleapc__free(src);
    sleapc__free(dst);
    sleapc__free(wt);
    sleapc__free(bias);
}

static void bench_convt(const shape *s, int max_threads)
{
    size_t n_src = (size_t)s->c_in * s->h * s->w, n_dst = (size_t)s->c_out * 4 * s->h * s->w;
    size_t n_w = (size_t)s->c_out * s->c_in * 9;
    float *src = sleapc__malloc(n_src * sizeof *src);
    float *dst = sleapc__malloc(n_dst * sizeof *dst);
    float *wt = sleapc__malloc(n_w * sizeof *wt);
    float *bias = sleapc__malloc((size_t)s->c_out * sizeof *bias);
    if (!src || !dst || !wt || !bias) {
        printf("out of memory\n");
        exit(1);
    }
    unsigned seed = 2;
    fill_random(src, n_src, &seed);
    fill_random(wt, n_w, &seed);
    fill_random(bias, (size_t)s->c_out, &seed);
    conv_ctx c = {.s = s, .src = src, .wt = wt, .bias = bias, .dst = dst};
    printf("3x3 stride-2 transposed conv 1x%dx%dx%d -> %d\n", s->c_in, s->h, s->w, s->c_out);
    if (sleapc__native_convt_create(s->c_in, s->c_out, wt, bias, true, false, &c.convt) ==
        SLEAPC_OK) {
        for (int nt = 1; nt <= max_threads; nt++) {
            if (sleapc__threadpool_create(nt, &c.tp) != SLEAPC_OK)
                break;
            c.scratch = sleapc__aligned_alloc(
                sleapc__native_convt_scratch_size(c.convt, s->h, s->w, nt));
            double cpu = 0;
            double t = best_time(run_convt, &c, 0.5, &cpu);
            char label[64];
            snprintf(label, sizeof label, "%s, %d thread%s", sleapc__native_ukernels_best()->name,
                     nt, nt > 1 ? "s" : "");
            printf("  %-22s %9.2f ms %7.1f GFLOP/s  cpu %8.2f ms\n", label, 1e3 * t,
                   flops(s) / t * 1e-9, 1e3 * cpu);
            sleapc__aligned_free(c.scratch);
            sleapc__threadpool_destroy(c.tp);
        }
        sleapc__native_convt_destroy(c.convt);
    }
    sleapc__free(src);
    sleapc__free(dst);
    sleapc__free(wt);
    sleapc__free(bias);
}

int main(int argc, char **argv)
{
    int max_threads = argc > 1 ? atoi(argv[1]) : 2;
    if (max_threads < 1)
        max_threads = 1;
    const native_ukernels *best = sleapc__native_ukernels_best();
    printf("microkernels: %s (block of %d output channels, %d columns per step)\n", best->name,
           best->cb, best->strip);

    static const shape conv3[] = {
        {16, 384, 384, 16, 3},
        {32, 192, 192, 64, 3},
        {64, 96, 96, 128, 3},
        {128, 48, 48, 128, 3},
    };
    for (size_t i = 0; i < sizeof conv3 / sizeof conv3[0]; i++)
        bench_shape(&conv3[i], max_threads, true);

    static const shape head = {32, 192, 192, 13, 1};
    bench_shape(&head, max_threads, true);

    static const shape up = {128, 48, 48, 64, 3};
    bench_convt(&up, max_threads);
    return 0;
}
