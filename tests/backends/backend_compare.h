/* What the backend tests share (test_vulkan.c, test_xnnpack.c): random
 * graphs built node by node, random inputs, and the comparison of a backend
 * against the native one on every output. Static functions: each test is
 * one program. */
#ifndef SLEAPC_TESTS_BACKEND_COMPARE_H
#define SLEAPC_TESTS_BACKEND_COMPARE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "test_util.h"

/* A graph and the random arrays its nodes borrow. */
typedef struct test_graph {
    sleapc_graph g;
    float *arrays[64];
    int n_arrays;
    unsigned seed;
} test_graph;

static float *rand_array(test_graph *t, size_t n, float scale)
{
    float *p = malloc(n * sizeof *p);
    if (!p || t->n_arrays == 64)
        abort(); /* the test's own setup, not the code under test */
    for (size_t i = 0; i < n; i++) {
        t->seed = t->seed * 1664525u + 1013904223u;
        p[i] = scale * ((float)((t->seed >> 8) & 0xffffff) / 8388608.0f - 1.0f);
    }
    t->arrays[t->n_arrays++] = p;
    return p;
}

static void graph_free(test_graph *t)
{
    for (int i = 0; i < t->n_arrays; i++)
        free(t->arrays[i]);
    sleapc__graph_clear(&t->g);
}

typedef struct node_spec {
    sleapc_op op;
    const char *name;
    int n_inputs;
    int inputs[SLEAPC_NODE_MAX_INPUTS];
    int c_in, c_out, kernel;
    sleapc_act act;
    bool keras;
    bool no_bias;
} node_spec;

static int add(test_graph *t, node_spec s)
{
    sleapc_node n = {.op = s.op,
                     .n_inputs = s.n_inputs,
                     .c_in = s.c_in,
                     .c_out = s.c_out,
                     .kernel = s.kernel,
                     .act = s.act,
                     .keras_placement = s.keras};
    strncpy(n.name, s.name, sizeof n.name - 1);
    memcpy(n.inputs, s.inputs, sizeof n.inputs);
    size_t taps = s.op == SLEAPC_OP_LINEAR ? 1 : (size_t)s.kernel * (size_t)s.kernel;
    if (s.op == SLEAPC_OP_CONV2D || s.op == SLEAPC_OP_CONV_TRANSPOSE2D ||
        s.op == SLEAPC_OP_LINEAR) {
        size_t fan_in = (size_t)s.c_in * taps;
        n.weight = rand_array(t, (size_t)s.c_out * fan_in, 1.0f / sqrtf((float)fan_in));
        n.bias = s.no_bias ? NULL : rand_array(t, (size_t)s.c_out, 0.2f);
    }
    int idx = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &n, &idx));
    return idx;
}

#define NODE(...) add(t, (node_spec){__VA_ARGS__})

/* Every op with PyTorch's transposed-conv placement; 3 input channels. */
static void build_all_ops(test_graph *t)
{
    memset(t, 0, sizeof *t);
    t->seed = 1;
    t->g.in_channels = 3;
    t->g.max_stride = 2;
    int x = NODE(.op = SLEAPC_OP_INPUT, .name = "input");
    int c0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c0", .n_inputs = 1, .inputs = {x}, .c_in = 3,
                  .c_out = 8, .kernel = 3, .act = SLEAPC_ACT_RELU);
    int c1 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c1", .n_inputs = 1, .inputs = {c0}, .c_in = 8,
                  .c_out = 8, .kernel = 5, .act = SLEAPC_ACT_RELU, .no_bias = true);
    int p0 = NODE(.op = SLEAPC_OP_MAXPOOL2D, .name = "p0", .n_inputs = 1, .inputs = {c1});
    int c2 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c2", .n_inputs = 1, .inputs = {p0}, .c_in = 8,
                  .c_out = 12, .kernel = 3, .act = SLEAPC_ACT_RELU);
    int t0 = NODE(.op = SLEAPC_OP_CONV_TRANSPOSE2D, .name = "t0", .n_inputs = 1, .inputs = {c2},
                  .c_in = 12, .c_out = 8, .kernel = 3, .act = SLEAPC_ACT_RELU);
    int u0 = NODE(.op = SLEAPC_OP_UPSAMPLE2X, .name = "u0", .n_inputs = 1, .inputs = {c2});
    int r0 = NODE(.op = SLEAPC_OP_RESIZE_LIKE, .name = "r0", .n_inputs = 2, .inputs = {t0, c1});
    int r1 = NODE(.op = SLEAPC_OP_RESIZE_LIKE, .name = "r1", .n_inputs = 2, .inputs = {u0, c1});
    int cat = NODE(.op = SLEAPC_OP_CONCAT, .name = "cat", .n_inputs = 3, .inputs = {c1, r0, r1});
    int h0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "h0", .n_inputs = 1, .inputs = {cat}, .c_in = 28,
                  .c_out = 5, .kernel = 1);
    int h1 = NODE(.op = SLEAPC_OP_CONV2D, .name = "h1", .n_inputs = 1, .inputs = {cat}, .c_in = 28,
                  .c_out = 2, .kernel = 3, .act = SLEAPC_ACT_SIGMOID);
    int gp = NODE(.op = SLEAPC_OP_GLOBAL_MAXPOOL, .name = "gp", .n_inputs = 1, .inputs = {c2});
    int l0 = NODE(.op = SLEAPC_OP_LINEAR, .name = "l0", .n_inputs = 1, .inputs = {gp}, .c_in = 12,
                  .c_out = 16, .act = SLEAPC_ACT_RELU);
    int l1 = NODE(.op = SLEAPC_OP_LINEAR, .name = "l1", .n_inputs = 1, .inputs = {l0}, .c_in = 16,
                  .c_out = 4, .act = SLEAPC_ACT_SOFTMAX);
    int l2 = NODE(.op = SLEAPC_OP_LINEAR, .name = "l2", .n_inputs = 1, .inputs = {l0}, .c_in = 16,
                  .c_out = 3, .act = SLEAPC_ACT_SIGMOID, .no_bias = true);
    CHECK_OK(sleapc__graph_add_output(&t->g, "MapHead", h0, 1));
    CHECK_OK(sleapc__graph_add_output(&t->g, "SigmoidMapHead", h1, 1));
    CHECK_OK(sleapc__graph_add_output(&t->g, "SoftmaxVectorHead", l1, 0));
    CHECK_OK(sleapc__graph_add_output(&t->g, "SigmoidVectorHead", l2, 0));
}

/* Keras placement, identities (equal-size RESIZE_LIKE, a one-input concat,
 * global max pool of a 1 x 1 map for a 4 x 4 input), a bias-free transposed
 * conv, and one node named by two outputs; 1 input channel. */
static void build_keras(test_graph *t)
{
    memset(t, 0, sizeof *t);
    t->seed = 2;
    t->g.in_channels = 1;
    t->g.max_stride = 4;
    int x = NODE(.op = SLEAPC_OP_INPUT, .name = "input");
    int c0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c0", .n_inputs = 1, .inputs = {x}, .c_in = 1,
                  .c_out = 6, .kernel = 3, .act = SLEAPC_ACT_RELU);
    int p0 = NODE(.op = SLEAPC_OP_MAXPOOL2D, .name = "p0", .n_inputs = 1, .inputs = {c0});
    int t0 = NODE(.op = SLEAPC_OP_CONV_TRANSPOSE2D, .name = "t0", .n_inputs = 1, .inputs = {p0},
                  .c_in = 6, .c_out = 4, .kernel = 3, .act = SLEAPC_ACT_RELU, .keras = true,
                  .no_bias = true);
    int r0 = NODE(.op = SLEAPC_OP_RESIZE_LIKE, .name = "r0", .n_inputs = 2, .inputs = {t0, c0});
    int cat = NODE(.op = SLEAPC_OP_CONCAT, .name = "cat", .n_inputs = 1, .inputs = {r0});
    int h0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "h0", .n_inputs = 1, .inputs = {cat}, .c_in = 4,
                  .c_out = 3, .kernel = 1);
    int p1 = NODE(.op = SLEAPC_OP_MAXPOOL2D, .name = "p1", .n_inputs = 1, .inputs = {p0});
    int gp = NODE(.op = SLEAPC_OP_GLOBAL_MAXPOOL, .name = "gp", .n_inputs = 1, .inputs = {p1});
    int l0 = NODE(.op = SLEAPC_OP_LINEAR, .name = "l0", .n_inputs = 1, .inputs = {gp}, .c_in = 6,
                  .c_out = 2);
    CHECK_OK(sleapc__graph_add_output(&t->g, "KerasHead", h0, 1));
    CHECK_OK(sleapc__graph_add_output(&t->g, "KerasHeadAgain", h0, 1));
    CHECK_OK(sleapc__graph_add_output(&t->g, "ResizeOut", r0, 1));
    CHECK_OK(sleapc__graph_add_output(&t->g, "Vec", l0, 0));
}

static float *rand_input(const int64_t shape[4], unsigned seed)
{
    int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
    float *p = malloc((size_t)n * sizeof *p);
    if (!p)
        abort();
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((seed >> 8) & 0xffffff) / 16777216.0f; /* [0, 1) */
    }
    return p;
}

static sleapc_backend *create(const struct sleapc_backend_factory *f, const sleapc_graph *g,
                              int n_threads, sleapc_precision prec)
{
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = n_threads, .precision = prec};
    CHECK_OK(sleapc__backend_create_from(f, g, &opts, &be));
    return be;
}

/* Run both backends on one random input of `shape` and compare every output;
 * returns the worst relative L2. */
static double compare(sleapc_backend *xb, sleapc_backend *nb, const sleapc_graph *g,
                      const int64_t shape[4], double tol, const char *what)
{
    float *px = rand_input(shape, (unsigned)(shape[0] * 7 + shape[2] * 131 + shape[3]));
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32,
                       .ndim = 4,
                       .shape = {shape[0], shape[1], shape[2], shape[3]},
                       .data = px};
    sleapc_tensor_map xo = {0}, no = {0};
    CHECK_OK(sleapc__backend_forward(xb, &x, &xo));
    CHECK_OK(sleapc__backend_forward(nb, &x, &no));
    double worst = 0;
    CHECK_MSG(xo.n == g->n_outputs, "%s: %d outputs", what, xo.n);
    for (int o = 0; o < g->n_outputs; o++) {
        const char *name = g->outputs[o].name;
        const sleapc_tensor *a = sleapc__tensor_map_get(&xo, name);
        const sleapc_tensor *b = sleapc__tensor_map_get(&no, name);
        CHECK_MSG(a && b, "%s: output %s missing", what, name);
        if (!a || !b)
            continue;
        bool same = a->dtype == SLEAPC_DTYPE_F32 && a->ndim == b->ndim;
        for (int d = 0; same && d < b->ndim; d++)
            same = a->shape[d] == b->shape[d];
        CHECK_MSG(same, "%s: output %s: shape differs from native", what, name);
        if (!same)
            continue;
        double err = test_rel_l2(a->data, b->data, sleapc_tensor_numel(b));
        CHECK_MSG(err <= tol, "%s: %s (%lld x %lld, batch %lld): relative L2 %.3g > %.0e", what,
                  name, (long long)shape[2], (long long)shape[3], (long long)shape[0], err, tol);
        if (!(err <= worst))
            worst = err;
    }
    free(px);
    return worst;
}

/* A forward of the planned shape makes no allocation. */
static void check_no_alloc(sleapc_backend *be, const int64_t shape[4], const char *what)
{
    float *px = rand_input(shape, 99);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32,
                       .ndim = 4,
                       .shape = {shape[0], shape[1], shape[2], shape[3]},
                       .data = px};
    sleapc_tensor_map out = {0};
    int64_t before = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_MSG(sleapc__alloc_count() == before, "%s: forward allocated %lld times", what,
              (long long)(sleapc__alloc_count() - before));
    free(px);
}

#endif
