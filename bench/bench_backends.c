/* How fast is each compiled-in backend on realistic networks?
 *
 * Builds the four sample networks of shared/data/bench_configs (random
 * weights, a 13-node skeleton with 12 edges, the input sizes of that folder's
 * README), then for every backend that can run here prints ms per forward
 * (median of the timed runs after a warm-up; the backends take turns run by
 * run), GFLOP/s (2 per multiply-add) and the speedup over the native backend
 * measured in the same run.
 * Usage: bench_backends [configs_dir ("": default)] [n_threads (2)] [runs (10)] [fp32|bf16] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "bench_networks.h"

#define MAX_BACKENDS 8
#define MAX_RUNS 101


static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One backend under test: its timings of every run. */
typedef struct contender {
    const struct sleapc_backend_factory *f;
    sleapc_backend *be;
    double ms[MAX_RUNS];
    double median_ms;  /* negative: could not run */
} contender;

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Create, warm up and run once untimed every backend that can run here;
 * then time them in turns, run by run, so that a change in the machine's
 * load during the measurement hits every backend alike. */
static void time_backends(contender *c, int n, const sleapc_graph *g,
                          const sleapc_backend_opts *opts, const sleapc_tensor *x, int runs)
{
    int64_t shape[4] = {x->shape[0], x->shape[1], x->shape[2], x->shape[3]};
    sleapc_tensor_map out = {0};
    for (int i = 0; i < n; i++) {
        c[i].median_ms = -1.0;
        if (c[i].f->score() <= 0)
            continue;
        /* native is fp32 only: it is the baseline in fp32 whatever is asked. */
        sleapc_backend_opts o = *opts;
        if (strcmp(c[i].f->name, "native") == 0)
            o.precision = SLEAPC_PRECISION_FP32;
        sleapc_status st = sleapc__backend_create_from(c[i].f, g, &o, &c[i].be);
        if (!st)
            st = sleapc__backend_warmup(c[i].be, shape);
        if (!st)
            st = sleapc__backend_forward(c[i].be, x, &out);
        if (st) {
            printf("  %-8s skipped: %s\n", c[i].f->name, sleapc_last_error());
            sleapc__backend_destroy(c[i].be);
            c[i].be = NULL;
        }
    }
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < n; i++) {
            if (!c[i].be)
                continue;
            double t0 = now_s();
            sleapc_status st = sleapc__backend_forward(c[i].be, x, &out);
            c[i].ms[r] = 1e3 * (now_s() - t0);
            if (st) {
                printf("  %-8s failed: %s\n", c[i].f->name, sleapc_last_error());
                sleapc__backend_destroy(c[i].be);
                c[i].be = NULL;
            }
        }
    for (int i = 0; i < n; i++) {
        if (c[i].be)
            c[i].median_ms = median(c[i].ms, runs);
        sleapc__backend_destroy(c[i].be);
        c[i].be = NULL;
    }
}

static void bench_one(const char *dir, const bench_case *c, const sleapc_backend_opts *opts,
                      int runs)
{
    sleapc_model_config cfg;
    sleapc_weights w = {0};
    sleapc_graph g = {0};
    float *img = NULL;
    if (bench_build(dir, c, &cfg, &w, &g))
        goto done;
    img = bench_input(g.in_channels, c->h, c->w);
    if (!img)
        goto done;
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4,
                       .shape = {1, g.in_channels, c->h, c->w}, .data = img};
    double gflop = sleapc__graph_flops(&g, 1, c->h, c->w) * 1e-9;
    printf("%s: %dx%dx%d, %.2f GFLOP, %.2f M parameters\n", c->file, g.in_channels, c->h, c->w,
           gflop, (double)sleapc__weights_param_count(&w) * 1e-6);

    contender be[MAX_BACKENDS];
    int n_be = sleapc__backend_count() < MAX_BACKENDS ? sleapc__backend_count() : MAX_BACKENDS;
    for (int i = 0; i < n_be; i++)
        be[i].f = sleapc__backend_factory(i);
    time_backends(be, n_be, &g, opts, &x, runs);
    double native_ms = -1.0;
    for (int i = 0; i < n_be; i++)
        if (strcmp(be[i].f->name, "native") == 0)
            native_ms = be[i].median_ms;
    for (int i = 0; i < n_be; i++) {
        if (be[i].median_ms <= 0)
            continue;
        printf("  %-8s %9.1f ms  %7.1f GFLOP/s", be[i].f->name, be[i].median_ms,
               gflop / (be[i].median_ms * 1e-3));
        if (native_ms > 0)
            printf("  x%.2f vs native", native_ms / be[i].median_ms);
        printf("\n");
    }
done:
    free(img);
    sleapc__graph_clear(&g);
    sleapc__weights_clear(&w);
    sleapc__model_config_clear(&cfg);
}

int main(int argc, char **argv)
{
    char dir[4096];
    bench_configs_dir(argc, argv, dir, sizeof dir);
    sleapc_backend_opts opts = {.n_threads = argc > 2 ? atoi(argv[2]) : 2};
    int runs = argc > 3 ? atoi(argv[3]) : 10;
    runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    if (argc > 4 && strcmp(argv[4], "bf16") == 0)
        opts.precision = SLEAPC_PRECISION_BF16;
    /* OpenMP threads (oneDNN) that spin while waiting slow everything else
     * down on a busy machine; OMP_WAIT_POLICY=passive stops that. */
    const char *wait = getenv("OMP_WAIT_POLICY");
    printf("threads %d, batch 1, median of %d runs after warm-up, %s, OMP_WAIT_POLICY %s\n",
           opts.n_threads, runs,
           opts.precision == SLEAPC_PRECISION_BF16 ? "bf16 (native: fp32)" : "fp32",
           wait ? wait : "unset");
    for (int i = 0; i < BENCH_N_CASES; i++)
        bench_one(dir, &bench_cases[i], &opts, runs);
    return 0;
}
