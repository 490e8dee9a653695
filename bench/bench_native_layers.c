/* Where does the native backend spend its time, node by node?
 *
 * Builds the four sample networks of shared/data/bench_configs (random
 * weights, a 13-node skeleton, the input sizes of that folder's README),
 * runs them on the native backend with its per-node hook and prints, for
 * every node: output shape, GFLOP (2 per multiply-add), CPU ms and wall ms
 * (the fastest of the timed runs), GFLOP/s by CPU time and that as a
 * fraction of one core's FMA peak measured in the same run. CPU time is the
 * sum of the backend's threads' own clocks (the caller and the pool's
 * workers; idle workers sleep and cost none), so it stays meaningful on a
 * machine shared with other jobs, where wall time does not, and no worker's
 * time arrives late at a scheduler tick as the process's clock has it. A
 * summary per op kind follows each network.
 * Usage: bench_native_layers [configs_dir ("": default)] [n_threads (2)] [runs (5)] [filter]
 *                            [conv (direct)] [precision (fp32)]
 *   filter: only configs whose file name contains it, or FILE@HxW: that config (a path
 *   relative to configs_dir, or absolute) at that input size; conv: direct, winograd or auto, the
 *   3x3 convs' method (GFLOP counts the direct method's FLOPs whichever runs); precision:
 *   fp32, bf16 or bf16-emulated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "backends/native/native_backend.h"
#include "core/cpu_peak.h"
#include "bench_networks.h"



static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Per-node times of the current run, filled by the hook. */
typedef struct profile {
    int n;
    const sleapc_backend *be;
    double last_wall, last_cpu;
    double *wall, *cpu;         /* this run */
    double *best_wall, *best_cpu;
} profile;

static void on_node(void *ctx, int node)
{
    profile *p = ctx;
    double w = clock_s(CLOCK_MONOTONIC), c = sleapc__native_backend_cpu_s(p->be);
    if (node > 0 && node < p->n) {
        p->wall[node] = w - p->last_wall;
        p->cpu[node] = c - p->last_cpu;
    }
    p->last_wall = w;
    p->last_cpu = c;
}

static double node_flops(const sleapc_node *n, const int64_t *d)
{
    if (n->op == SLEAPC_OP_CONV2D)
        return 2.0 * (double)(d[0] * d[1] * d[2] * d[3]) * n->c_in * n->kernel * n->kernel;
    if (n->op == SLEAPC_OP_CONV_TRANSPOSE2D)
        return 2.0 * (double)(d[0] * n->c_in * (d[2] / 2) * (d[3] / 2)) * n->c_out * 9;
    if (n->op == SLEAPC_OP_LINEAR)
        return 2.0 * (double)d[0] * n->c_in * n->c_out;
    return 0.0;
}

/* The op kind a node is summarised under: convs by kernel and input width. */
static void node_kind(const sleapc_node *n, char *buf, size_t cap)
{
    if (n->op == SLEAPC_OP_CONV2D)
        snprintf(buf, cap, "conv%dx%d%s", n->kernel, n->kernel, n->c_in <= 4 ? " c_in<=4" : "");
    else
        snprintf(buf, cap, "%s", sleapc__op_name(n->op));
}

static void report(const sleapc_graph *g, const int64_t (*shapes)[4], const profile *p,
                   double peak1)
{
    printf("  %-3s %-34s %-16s %-15s %8s %8s %8s %8s %6s\n", "#", "node", "op", "out CxHxW",
           "GFLOP", "cpu ms", "wall ms", "GFLOP/s", "%peak");
    double tot_cpu = 0, tot_wall = 0, tot_flop = 0;
    for (int i = 1; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        const int64_t *d = shapes[i];
        double f = node_flops(n, d);
        char kind[32], shape[32];
        node_kind(n, kind, sizeof kind);
        snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)d[1], (long long)d[2],
                 (long long)d[3]);
        printf("  %-3d %-34.34s %-16s %-15s %8.3f %8.2f %8.2f", i, n->name, kind, shape, f * 1e-9,
               1e3 * p->best_cpu[i], 1e3 * p->best_wall[i]);
        if (f > 0 && p->best_cpu[i] > 0)
            printf(" %8.1f %5.0f%%", f * 1e-9 / p->best_cpu[i],
                   100 * f * 1e-9 / p->best_cpu[i] / peak1);
        printf("\n");
        tot_cpu += p->best_cpu[i];
        tot_wall += p->best_wall[i];
        tot_flop += f;
    }

    /* Summary per kind, in order of first appearance. */
    char kinds[16][32];
    double k_cpu[16] = {0}, k_flop[16] = {0};
    int n_kinds = 0;
    for (int i = 1; i < g->n_nodes; i++) {
        char kind[32];
        node_kind(&g->nodes[i], kind, sizeof kind);
        int k = 0;
        while (k < n_kinds && strcmp(kinds[k], kind) != 0)
            k++;
        if (k == n_kinds) {
            if (n_kinds == 16)
                continue;
            snprintf(kinds[n_kinds++], sizeof kinds[0], "%s", kind);
        }
        k_cpu[k] += p->best_cpu[i];
        k_flop[k] += node_flops(&g->nodes[i], shapes[i]);
    }
    printf("  by kind (cpu ms, share of cpu, GFLOP/s by cpu, %% of one core's peak):\n");
    for (int k = 0; k < n_kinds; k++) {
        printf("    %-16s %9.1f ms %5.1f%%", kinds[k], 1e3 * k_cpu[k], 100 * k_cpu[k] / tot_cpu);
        if (k_flop[k] > 0)
            printf(" %8.1f GFLOP/s %5.0f%%", k_flop[k] * 1e-9 / k_cpu[k],
                   100 * k_flop[k] * 1e-9 / k_cpu[k] / peak1);
        printf("\n");
    }
    printf("  total (sum of per-node bests): %.2f GFLOP, cpu %.1f ms (%.1f GFLOP/s, %.0f%% of "
           "one core), wall %.1f ms (%.1f GFLOP/s)\n",
           tot_flop * 1e-9, 1e3 * tot_cpu, tot_flop * 1e-9 / tot_cpu,
           100 * tot_flop * 1e-9 / tot_cpu / peak1, 1e3 * tot_wall, tot_flop * 1e-9 / tot_wall);
}

static void bench_one(const char *dir, const bench_case *c, int n_threads, int runs, double peak1,
                      sleapc_conv_method conv, sleapc_precision precision)
{
    sleapc_model_config cfg;
    sleapc_weights w = {0};
    sleapc_graph g = {0};
    sleapc_backend *be = NULL;
    float *img = NULL;
    int64_t(*shapes)[4] = NULL;
    profile p = {0};
    if (bench_build(dir, c, &cfg, &w, &g))
        goto done;

    img = bench_input(g.in_channels, c->h, c->w);
    shapes = malloc((size_t)g.n_nodes * sizeof *shapes);
    p.n = g.n_nodes;
    p.wall = calloc((size_t)g.n_nodes, sizeof(double));
    p.cpu = calloc((size_t)g.n_nodes, sizeof(double));
    p.best_wall = calloc((size_t)g.n_nodes, sizeof(double));
    p.best_cpu = calloc((size_t)g.n_nodes, sizeof(double));
    if (!img || !shapes || !p.wall || !p.cpu || !p.best_wall || !p.best_cpu) {
        printf("%s: out of memory\n", c->file);
        goto done;
    }
    sleapc_status st = sleapc__graph_infer_shapes(&g, 1, c->h, c->w, shapes);
    if (st)
        goto fail;
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4,
                       .shape = {1, g.in_channels, c->h, c->w}, .data = img};
    sleapc_backend_opts opts = {.n_threads = n_threads, .conv = conv, .precision = precision};
    sleapc_tensor_map out = {0};
    st = sleapc__backend_create_from(&sleapc__native_factory, &g, &opts, &be);
    if (!st)
        st = sleapc__backend_warmup(be, x.shape);
    if (!st)
        st = sleapc__backend_forward(be, &x, &out); /* untimed: first touch of the buffers */
    if (st)
        goto fail;

    p.be = be;
    sleapc__native_backend_set_node_hook(be, on_node, &p);
    double best_total = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = clock_s(CLOCK_MONOTONIC);
        st = sleapc__backend_forward(be, &x, &out);
        double t = clock_s(CLOCK_MONOTONIC) - t0;
        if (st)
            goto fail;
        best_total = t < best_total ? t : best_total;
        for (int i = 1; i < g.n_nodes; i++) {
            if (r == 0 || p.cpu[i] < p.best_cpu[i])
                p.best_cpu[i] = p.cpu[i];
            if (r == 0 || p.wall[i] < p.best_wall[i])
                p.best_wall[i] = p.wall[i];
        }
    }
    double gflop = sleapc__graph_flops(&g, 1, c->h, c->w) * 1e-9;
    printf("%s: %dx%dx%d, %.2f GFLOP, %d threads, conv %s, best of %d runs: %.1f ms wall "
           "(%.1f GFLOP/s)\n",
           c->file, g.in_channels, c->h, c->w, gflop, n_threads,
           conv == SLEAPC_CONV_DIRECT     ? "direct"
           : conv == SLEAPC_CONV_WINOGRAD ? "winograd"
                                          : "auto",
           runs, 1e3 * best_total, gflop / best_total);
    report(&g, (const int64_t(*)[4])shapes, &p, peak1);
    goto done;
fail:
    printf("%s: %s\n", c->file, sleapc_last_error());
done:
    sleapc__backend_destroy(be);
    free(p.wall);
    free(p.cpu);
    free(p.best_wall);
    free(p.best_cpu);
    free(shapes);
    free(img);
    sleapc__graph_clear(&g);
    sleapc__weights_clear(&w);
    sleapc__model_config_clear(&cfg);
}

int main(int argc, char **argv)
{
    char dir[4096];
    bench_configs_dir(argc, argv, dir, sizeof dir);
    int n_threads = argc > 2 ? atoi(argv[2]) : 2;
    int runs = argc > 3 ? atoi(argv[3]) : 5;
    const char *filter = argc > 4 ? argv[4] : "";
    const char *conv_arg = argc > 5 ? argv[5] : "direct";
    sleapc_conv_method conv = strcmp(conv_arg, "auto") == 0       ? SLEAPC_CONV_AUTO
                              : strcmp(conv_arg, "winograd") == 0 ? SLEAPC_CONV_WINOGRAD
                                                                  : SLEAPC_CONV_DIRECT;
    const char *prec_arg = argc > 6 ? argv[6] : "fp32";
    sleapc_precision precision = strcmp(prec_arg, "bf16") == 0 ? SLEAPC_PRECISION_BF16
                                 : strcmp(prec_arg, "bf16-emulated") == 0
                                     ? SLEAPC_PRECISION_BF16_EMULATED
                                     : SLEAPC_PRECISION_FP32;
    n_threads = n_threads < 1 ? 1 : n_threads;
    runs = runs < 1 ? 1 : runs;
    double peak1 = sleapc__cpu_peak_gflops(1, false, 0.3);
    printf("one core's fp32 FMA peak (%s), measured now: %.1f GFLOP/s\n", sleapc__cpu_simd_name(),
           peak1);
    const char *at = strrchr(filter, '@');
    if (at) {
        /* Any training config, e.g. a trained model's, at the size it serves. */
        char file[4096];
        int h = 0, w = 0;
        snprintf(file, sizeof file, "%.*s", (int)(at - filter), filter);
        if (sscanf(at + 1, "%dx%d", &h, &w) != 2 || h < 1 || w < 1) {
            fprintf(stderr, "bench_native_layers: '%s': expected FILE@HxW\n", filter);
            return 2;
        }
        if (file[0] == '/')
            dir[0] = '\0';
        bench_case c = {file, h, w};
        bench_one(dir, &c, n_threads, runs, peak1, conv, precision);
        return 0;
    }
    for (int i = 0; i < BENCH_N_CASES; i++)
        if (strstr(bench_cases[i].file, filter))
            bench_one(dir, &bench_cases[i], n_threads, runs, peak1, conv, precision);
    return 0;
}
