/* The oneDNN backend against the native backend on hand-built graphs that
 * use every op: convolutions (kernels 1, 2, 3, 5; ReLU, sigmoid, none), both
 * transposed-convolution placements, max and global max pooling, x2
 * upsampling, RESIZE_LIKE up and down on odd sizes, 2- and 3-way concat,
 * linear layers with ReLU, sigmoid and softmax. Batches 1 and 3, re-planning
 * on shape changes, no allocation in a warmed-up forward, allocation
 * failures while planning, thread-count changes, bf16 (or its refusal) and
 * nodes it cannot lower. Exits 77 when the backend is not built.
 *
 * Tolerance against native: relative L2 <= 1e-5 per output. Both compute in
 * float32 and differ only in summation order; with weights scaled to unit
 * variance per layer the rounding error stays near 1e-6, while a wrong tap,
 * border, placement or resampling weight is off by more than 1e-2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "test_util.h"

#define REL_L2_TOL 1e-5
/* bf16 keeps 8 significant bits (relative rounding 2^-9 ~ 2e-3 per value);
 * fp32 accumulation keeps the error of a dozen layers near 5e-3. */
#define BF16_REL_L2_TOL 1e-2

static const struct sleapc_backend_factory *onednn, *native;
static unsigned rng = 2024;

static float rand_unit(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffffff) / 8388608.0f - 1.0f; /* [-1, 1) */
}

/* Weights and biases of the test graphs, owned here. */
typedef struct params {
    float *bufs[64];
    int n;
} params;

static float *param(params *p, size_t n, float scale)
{
    float *w = sleapc__aligned_alloc(n * sizeof *w);
    CHECK(w != NULL && p->n < 64);
    if (!w || p->n >= 64)
        exit(1);
    for (size_t i = 0; i < n; i++)
        w[i] = scale * rand_unit();
    p->bufs[p->n++] = w;
    return w;
}

static void params_free(params *p)
{
    for (int i = 0; i < p->n; i++)
        sleapc__aligned_free(p->bufs[i]);
    p->n = 0;
}

static int add(sleapc_graph *g, sleapc_node n)
{
    int idx = -1;
    CHECK_OK(sleapc__graph_add(g, &n, &idx));
    return idx;
}

static int conv(sleapc_graph *g, params *p, const char *name, sleapc_op op, int src, int c_in,
                int c_out, int k, sleapc_act act, bool keras)
{
    /* Uniform in +-sqrt(3 / fan_in): unit variance through each layer. */
    float scale = sqrtf(3.0f / (float)(c_in * k * k));
    sleapc_node n = {.op = op, .n_inputs = 1, .inputs = {src}, .c_in = c_in, .c_out = c_out,
                     .kernel = k, .act = act, .keras_placement = keras,
                     .weight = param(p, (size_t)c_in * c_out * k * k, scale),
                     .bias = param(p, (size_t)c_out, 0.1f)};
    snprintf(n.name, sizeof n.name, "%s", name);
    return add(g, n);
}

static int linear(sleapc_graph *g, params *p, const char *name, int src, int c_in, int c_out,
                  sleapc_act act)
{
    sleapc_node n = {.op = SLEAPC_OP_LINEAR, .n_inputs = 1, .inputs = {src}, .c_in = c_in,
                     .c_out = c_out, .act = act,
                     .weight = param(p, (size_t)c_in * c_out, sqrtf(3.0f / (float)c_in)),
                     .bias = param(p, (size_t)c_out, 0.1f)};
    snprintf(n.name, sizeof n.name, "%s", name);
    return add(g, n);
}

static int simple(sleapc_graph *g, const char *name, sleapc_op op, int n_in, int a, int b, int c)
{
    sleapc_node n = {.op = op, .n_inputs = n_in, .inputs = {a, b, c}};
    snprintf(n.name, sizeof n.name, "%s", name);
    return add(g, n);
}

/* Every op, on a 3-channel input; see the file comment. */
static void build_all_ops(sleapc_graph *g, params *p)
{
    memset(g, 0, sizeof *g);
    g->in_channels = 3;
    g->max_stride = 4;
    const sleapc_op C = SLEAPC_OP_CONV2D, T = SLEAPC_OP_CONV_TRANSPOSE2D;
    const sleapc_act R = SLEAPC_ACT_RELU, N = SLEAPC_ACT_NONE;
    int in = simple(g, "input", SLEAPC_OP_INPUT, 0, 0, 0, 0);
    int c0 = conv(g, p, "c0", C, in, 3, 8, 3, R, false);
    int c1 = conv(g, p, "c1", C, c0, 8, 12, 5, N, false);
    int p1 = simple(g, "p1", SLEAPC_OP_MAXPOOL2D, 1, c1, 0, 0);
    int c2 = conv(g, p, "c2", C, p1, 12, 16, 3, R, false);
    int p2 = simple(g, "p2", SLEAPC_OP_MAXPOOL2D, 1, c2, 0, 0);
    int c3 = conv(g, p, "c3", C, p2, 16, 16, 2, R, false);
    int t1 = conv(g, p, "t1_torch", T, c3, 16, 10, 3, R, false);
    int r1 = simple(g, "r1", SLEAPC_OP_RESIZE_LIKE, 2, t1, c2, 0);
    int cat1 = simple(g, "cat1", SLEAPC_OP_CONCAT, 2, c2, r1, 0);
    int c4 = conv(g, p, "c4", C, cat1, 26, 12, 3, R, false);
    int t2 = conv(g, p, "t2_keras", T, c4, 12, 9, 3, N, true);
    int r2 = simple(g, "r2", SLEAPC_OP_RESIZE_LIKE, 2, t2, c1, 0);
    int u1 = simple(g, "u1", SLEAPC_OP_UPSAMPLE2X, 1, p1, 0, 0);
    int r3 = simple(g, "r3", SLEAPC_OP_RESIZE_LIKE, 2, u1, c0, 0);
    int cat2 = simple(g, "cat2", SLEAPC_OP_CONCAT, 3, c0, r2, r3);
    int h1 = conv(g, p, "MapHead", C, cat2, 29, 5, 1, N, false);
    int h2 = conv(g, p, "SigmoidHead", C, cat1, 26, 3, 1, SLEAPC_ACT_SIGMOID, false);
    int r4 = simple(g, "r4_down", SLEAPC_OP_RESIZE_LIKE, 2, c1, p2, 0);
    int h3 = conv(g, p, "DownHead", C, r4, 12, 2, 3, N, false);
    int gp = simple(g, "gp", SLEAPC_OP_GLOBAL_MAXPOOL, 1, c3, 0, 0);
    int l1 = linear(g, p, "fc0", gp, 16, 7, R);
    int l2 = linear(g, p, "VecHead", l1, 7, 4, SLEAPC_ACT_SOFTMAX);
    int l3 = linear(g, p, "SigVecHead", gp, 16, 3, SLEAPC_ACT_SIGMOID);
    CHECK_OK(sleapc__graph_add_output(g, "MapHead", h1, 1));
    CHECK_OK(sleapc__graph_add_output(g, "SigmoidHead", h2, 2));
    CHECK_OK(sleapc__graph_add_output(g, "DownHead", h3, 4));
    CHECK_OK(sleapc__graph_add_output(g, "VecHead", l2, 0));
    CHECK_OK(sleapc__graph_add_output(g, "SigVecHead", l3, 0));
}

/* Random float32 image in [0, 1]. Caller frees data. */
static sleapc_tensor make_input(int64_t b, int64_t c, int64_t h, int64_t w)
{
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {b, c, h, w}};
    size_t n = (size_t)(b * c * h * w);
    float *d = sleapc__malloc(n * sizeof *d);
    for (size_t i = 0; d && i < n; i++)
        d[i] = 0.5f + 0.5f * rand_unit();
    x.data = d;
    return x;
}

/* Every output of `got` equals the one of `ref` within tol (same names and
 * shapes, relative L2). */
static void compare_maps(const sleapc_graph *g, const sleapc_tensor_map *got,
                         const sleapc_tensor_map *ref, double tol, const char *what)
{
    CHECK_MSG(got->n == g->n_outputs && ref->n == g->n_outputs, "%s: %d and %d outputs", what,
              got->n, ref->n);
    for (int o = 0; o < g->n_outputs; o++) {
        const char *name = g->outputs[o].name;
        const sleapc_tensor *a = sleapc__tensor_map_get(got, name);
        const sleapc_tensor *b = sleapc__tensor_map_get(ref, name);
        CHECK_MSG(a && b, "%s: %s missing", what, name);
        if (!a || !b)
            continue;
        bool same = a->dtype == SLEAPC_DTYPE_F32 && a->ndim == b->ndim;
        for (int d = 0; same && d < a->ndim; d++)
            same = a->shape[d] == b->shape[d];
        CHECK_MSG(same, "%s: %s: shapes differ", what, name);
        if (!same)
            continue;
        double err = test_rel_l2(a->data, b->data, sleapc_tensor_numel(b));
        CHECK_MSG(err <= tol, "%s: %s: relative L2 %.3g > %.0e", what, name, err, tol);
    }
}

static sleapc_backend *create(const struct sleapc_backend_factory *f, const sleapc_graph *g,
                              int n_threads, sleapc_precision prec)
{
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = n_threads, .precision = prec};
    CHECK_OK(sleapc__backend_create_from(f, g, &opts, &be));
    return be;
}

/* onednn vs native at each shape in turn, on one backend pair (so shape
 * changes re-plan), plus no allocation once a shape is warmed up. */
static void check_against_native(const sleapc_graph *g)
{
    sleapc_backend *be = create(onednn, g, 2, SLEAPC_PRECISION_FP32);
    sleapc_backend *nb = create(native, g, 2, SLEAPC_PRECISION_FP32);
    if (!be || !nb)
        goto done;
    const int64_t shapes[][4] = {{1, 3, 13, 11}, {3, 3, 13, 11}, {3, 3, 16, 20},
                                 {1, 1, 9, 14},  {1, 3, 13, 11}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const int64_t *s = shapes[k];
        char what[64];
        snprintf(what, sizeof what, "batch %lld %lldx%lld", (long long)s[0], (long long)s[2],
                 (long long)s[3]);
        sleapc_tensor x = make_input(s[0], s[1], s[2], s[3]);
        sleapc_tensor_map got = {0}, ref = {0};
        CHECK_OK(sleapc__backend_forward(nb, &x, &ref));
        if (k == 2) {
            /* Warm up explicitly; the forward after it must not allocate. */
            CHECK_OK(sleapc__backend_warmup(be, s));
            int64_t before = sleapc__alloc_count();
            CHECK_OK(sleapc__backend_forward(be, &x, &got));
            CHECK_MSG(sleapc__alloc_count() == before, "%s: warmed-up forward allocated %lld times",
                      what, (long long)(sleapc__alloc_count() - before));
        } else {
            CHECK_OK(sleapc__backend_forward(be, &x, &got));
            /* The second forward of a shape reuses the plan: no allocation. */
            int64_t before = sleapc__alloc_count();
            CHECK_OK(sleapc__backend_forward(be, &x, &got));
            CHECK_MSG(sleapc__alloc_count() == before, "%s: second forward allocated", what);
        }
        compare_maps(g, &got, &ref, REL_L2_TOL, what);
        sleapc__free(x.data);
    }
done:
    sleapc__backend_destroy(be);
    sleapc__backend_destroy(nb);
}

/* Each allocation of create + first forward fails in turn: the call reports
 * SLEAPC_ERR_NOMEM (never a crash or a leak, which ASan would catch), and a
 * backend whose forward failed plans and runs normally on the next one. */
static void check_alloc_failures(const sleapc_graph *g)
{
    sleapc_tensor x = make_input(1, 3, 13, 11);
    sleapc_tensor_map out = {0};
    sleapc_backend_opts opts = {.n_threads = 1};
    int n_failed = 0;
    for (int64_t k = 1; k < 10000; k++) {
        sleapc_backend *be = NULL;
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__backend_create_from(onednn, g, &opts, &be);
        if (st == SLEAPC_OK)
            st = sleapc__backend_forward(be, &x, &out);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            sleapc__backend_destroy(be);
            break;
        }
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "allocation %lld failing: %s", (long long)k,
                  sleapc_last_error());
        n_failed++;
        if (be)
            CHECK_OK(sleapc__backend_forward(be, &x, &out));
        sleapc__backend_destroy(be);
    }
    CHECK(n_failed > 10);
    sleapc__free(x.data);
}

/* A warmup shape too large to plan is refused, and the backend stays usable. */
static void check_huge_shape(const sleapc_graph *g)
{
    sleapc_backend *be = create(onednn, g, 1, SLEAPC_PRECISION_FP32);
    if (!be)
        return;
    const int64_t huge[4] = {1 << 20, 3, 1 << 20, 1 << 20};
    CHECK(sleapc__backend_warmup(be, huge) == SLEAPC_ERR_INVALID_ARG);
    const int64_t ok[4] = {1, 3, 8, 8};
    CHECK_OK(sleapc__backend_warmup(be, ok));
    sleapc__backend_destroy(be);
}

/* Changing the thread count re-plans; results stay within the tolerance. */
static void check_threads(const sleapc_graph *g)
{
    sleapc_backend *be = create(onednn, g, 2, SLEAPC_PRECISION_FP32);
    sleapc_backend *nb = create(native, g, 2, SLEAPC_PRECISION_FP32);
    sleapc_tensor x = make_input(3, 3, 13, 11);
    sleapc_tensor_map got = {0}, ref = {0};
    if (be && nb) {
        CHECK_OK(sleapc__backend_forward(nb, &x, &ref));
        CHECK_OK(sleapc__backend_forward(be, &x, &got));
        CHECK_OK(sleapc__backend_set_n_threads(be, 1));
        CHECK_OK(sleapc__backend_forward(be, &x, &got));
        compare_maps(g, &got, &ref, REL_L2_TOL, "1 thread");
        CHECK_OK(sleapc__backend_set_n_threads(be, 3));
        CHECK_OK(sleapc__backend_forward(be, &x, &got));
        compare_maps(g, &got, &ref, REL_L2_TOL, "3 threads");
    }
    sleapc__backend_destroy(be);
    sleapc__backend_destroy(nb);
    sleapc__free(x.data);
}

/* bf16 runs within BF16_REL_L2_TOL of fp32 where the CPU has it; elsewhere
 * create refuses it cleanly. fp16 is always refused. */
static void check_precisions(const sleapc_graph *g)
{
    sleapc_backend *be = (sleapc_backend *)1;
    sleapc_backend_opts opts = {.n_threads = 2, .precision = SLEAPC_PRECISION_FP16};
    CHECK(sleapc__backend_create_from(onednn, g, &opts, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(be == NULL);
    CHECK(strstr(sleapc_last_error(), "fp16") != NULL);

    opts.precision = SLEAPC_PRECISION_BF16;
    be = (sleapc_backend *)1;
    sleapc_status st = sleapc__backend_create_from(onednn, g, &opts, &be);
    if (st != SLEAPC_OK) {
        CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED, "bf16: %s", sleapc_last_error());
        CHECK(be == NULL);
        CHECK_MSG(strstr(sleapc_last_error(), "bf16 needs a CPU with AVX512-BF16 or AMX") != NULL,
                  "bf16 refusal: %s", sleapc_last_error());
        printf("bf16 refused: %s\n", sleapc_last_error());
        return;
    }
    printf("bf16 supported: comparing with fp32\n");
    sleapc_backend *fb = create(onednn, g, 2, SLEAPC_PRECISION_FP32);
    const int64_t shapes[][4] = {{1, 3, 13, 11}, {3, 3, 16, 20}};
    for (int k = 0; fb && k < 2; k++) {
        sleapc_tensor x = make_input(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3]);
        sleapc_tensor_map got = {0}, ref = {0};
        CHECK_OK(sleapc__backend_forward(fb, &x, &ref));
        CHECK_OK(sleapc__backend_forward(be, &x, &got));
        compare_maps(g, &got, &ref, BF16_REL_L2_TOL, "bf16");
        sleapc__free(x.data);
    }
    sleapc__backend_destroy(fb);
    sleapc__backend_destroy(be);
}

/* The transposed convolution's two placements against the definition:
 * ConvTranspose2d(3, stride 2) fills full rows/cols 0..2H; PyTorch keeps
 * 1..2H, Keras "same" keeps 0..2H-1. */
static void check_convt_placement(bool keras)
{
    enum { CI = 2, CO = 3, H = 3, W = 4 };
    params p = {0};
    sleapc_graph g = {0};
    g.in_channels = CI;
    g.max_stride = 1;
    int in = simple(&g, "input", SLEAPC_OP_INPUT, 0, 0, 0, 0);
    int t = conv(&g, &p, "t", SLEAPC_OP_CONV_TRANSPOSE2D, in, CI, CO, 3, SLEAPC_ACT_NONE, keras);
    CHECK_OK(sleapc__graph_add_output(&g, "Out", t, 1));
    const float *wt = g.nodes[t].weight, *bias = g.nodes[t].bias;

    sleapc_tensor x = make_input(1, CI, H, W);
    const float *src = x.data;
    static double full[CO][2 * H + 1][2 * W + 1];
    for (int co = 0; co < CO; co++)
        for (int y = 0; y <= 2 * H; y++)
            for (int xx = 0; xx <= 2 * W; xx++)
                full[co][y][xx] = bias[co];
    for (int ci = 0; ci < CI; ci++)
        for (int co = 0; co < CO; co++)
            for (int i = 0; i < H; i++)
                for (int j = 0; j < W; j++)
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++)
                            full[co][2 * i + a][2 * j + b] +=
                                (double)src[(ci * H + i) * W + j] *
                                wt[((ci * CO + co) * 3 + a) * 3 + b];
    sleapc_backend *be = create(onednn, &g, 1, SLEAPC_PRECISION_FP32);
    sleapc_tensor_map out = {0};
    if (be) {
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        const sleapc_tensor *o = sleapc__tensor_map_get(&out, "Out");
        CHECK(o && o->shape[2] == 2 * H && o->shape[3] == 2 * W);
        int off = keras ? 0 : 1;
        double worst = 0;
        for (int co = 0; o && co < CO; co++)
            for (int y = 0; y < 2 * H; y++)
                for (int xx = 0; xx < 2 * W; xx++) {
                    double d = fabs(((const float *)o->data)[(co * 2 * H + y) * 2 * W + xx] -
                                    full[co][y + off][xx + off]);
                    worst = d > worst ? d : worst;
                }
        /* Sums of 2 * 4 products of O(1) values: float32 rounding ~1e-6. */
        CHECK_MSG(worst < 1e-5, "%s placement: off by %.3g", keras ? "Keras" : "PyTorch", worst);
    }
    sleapc__backend_destroy(be);
    sleapc__free(x.data);
    sleapc__graph_clear(&g);
    params_free(&p);
}

/* A node it cannot lower is refused with its name, and "auto" then falls
 * back to the next backend. */
static void check_unsupported(void)
{
    params p = {0};
    sleapc_graph g = {0};
    g.in_channels = 1;
    g.max_stride = 1;
    int in = simple(&g, "input", SLEAPC_OP_INPUT, 0, 0, 0, 0);
    int c = conv(&g, &p, "odd_softmax_conv", SLEAPC_OP_CONV2D, in, 1, 2, 3, SLEAPC_ACT_SOFTMAX,
                 false);
    CHECK_OK(sleapc__graph_add_output(&g, "Out", c, 1));
    sleapc_backend *be = (sleapc_backend *)1;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK(sleapc__backend_create_from(onednn, &g, &opts, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(be == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), "odd_softmax_conv") != NULL, "message: %s",
              sleapc_last_error());
    CHECK_OK(sleapc__backend_create("auto", &g, &opts, &be));
    CHECK(be && strcmp(sleapc__backend_name(be), "onednn") != 0);
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
    params_free(&p);
}

int main(void)
{
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (strcmp(f->name, "onednn") == 0)
            onednn = f;
        else if (strcmp(f->name, "native") == 0)
            native = f;
    }
    if (!onednn) {
        printf("the onednn backend is not built\n");
        return 77;
    }
    CHECK(native != NULL && onednn->score() > 0);

    /* "auto" serves shapes too small to measure with the best-scoring
     * backend: oneDNN on AVX-512 machines, native on AVX2-only ones (see
     * onednn_score). */
    params p = {0};
    sleapc_graph g;
    build_all_ops(&g, &p);
    sleapc_backend *be = NULL;
    test_setenv("SLEAPC_BACKEND", NULL);  /* the suite pins auto; this is about auto itself */
    CHECK_OK(sleapc__backend_create("auto", &g, NULL, &be));
    const char *want = onednn->score() > native->score() ? "onednn" : "native";
    CHECK(be && strcmp(sleapc__backend_name(be), want) == 0);
    sleapc__backend_destroy(be);

    check_against_native(&g);
    check_threads(&g);
    check_huge_shape(&g);
    check_alloc_failures(&g);
    check_precisions(&g);
    check_convt_placement(false);
    check_convt_placement(true);
    check_unsupported();
    sleapc__graph_clear(&g);
    params_free(&p);
    return test_finish();
}
