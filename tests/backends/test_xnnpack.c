/* The XNNPACK backend against the native one on hand-built random graphs that
 * cover every op of the IR: both transposed-conv placements, RESIZE_LIKE to
 * odd sizes and as an identity, one- and three-input concats, global max pool
 * over a real window and over a 1 x 1 map, every activation, batch 1 and 3.
 * Also: re-planning when the shape changes, no allocation in a warmed-up
 * forward, thread-count changes, refusals (unsupported nodes, bf16), fp16
 * where XNNPACK has it, and failing allocations on every error path.
 * Skipped (77) when the backend is not compiled in.
 *
 * Tolerance (fp32): relative L2 <= 1e-5 per output. Both backends compute in
 * float32 and differ only in summation order and in how bilinear weights are
 * formed, ~1e-7 per op; weights are scaled by 1/sqrt(fan-in) so activations
 * stay O(1) and nothing amplifies that. A wrong tap, border, placement or
 * channel order is off by ~1e-1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "backend_compare.h"
#include "test_util.h"

#define REL_L2_TOL 1e-5
/* fp16 keeps 11 significant bits (2^-11 ~ 5e-4 per rounding) and XNNPACK's
 * fp16 GEMMs accumulate in fp16, over a few layers of up to 9 * 8 = 72
 * products: about 1e-3 (1.1e-3 measured on x86's emulated fp16). A layout or
 * placement bug is ~1e-1. */
#define REL_L2_TOL_FP16 1e-2

static const struct sleapc_backend_factory *xnn_f, *native_f;

/* Only ops XNNPACK has in fp16. */
static void build_fp16(test_graph *t)
{
    memset(t, 0, sizeof *t);
    t->seed = 3;
    t->g.in_channels = 1;
    t->g.max_stride = 2;
    int x = NODE(.op = SLEAPC_OP_INPUT, .name = "input");
    int c0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c0", .n_inputs = 1, .inputs = {x}, .c_in = 1,
                  .c_out = 8, .kernel = 3, .act = SLEAPC_ACT_RELU);
    int p0 = NODE(.op = SLEAPC_OP_MAXPOOL2D, .name = "p0", .n_inputs = 1, .inputs = {c0});
    int t0 = NODE(.op = SLEAPC_OP_CONV_TRANSPOSE2D, .name = "t0", .n_inputs = 1, .inputs = {p0},
                  .c_in = 8, .c_out = 8, .kernel = 3, .act = SLEAPC_ACT_RELU);
    int u0 = NODE(.op = SLEAPC_OP_UPSAMPLE2X, .name = "u0", .n_inputs = 1, .inputs = {p0});
    int r0 = NODE(.op = SLEAPC_OP_RESIZE_LIKE, .name = "r0", .n_inputs = 2, .inputs = {t0, c0});
    int r1 = NODE(.op = SLEAPC_OP_RESIZE_LIKE, .name = "r1", .n_inputs = 2, .inputs = {u0, c0});
    int cat = NODE(.op = SLEAPC_OP_CONCAT, .name = "cat", .n_inputs = 2, .inputs = {r0, r1});
    int h0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "h0", .n_inputs = 1, .inputs = {cat}, .c_in = 16,
                  .c_out = 3, .kernel = 1);
    CHECK_OK(sleapc__graph_add_output(&t->g, "Fp16Head", h0, 1));
}

static void check_graph(const sleapc_graph *g, const int64_t (*shapes)[4], int n_shapes,
                        const char *what)
{
    sleapc_backend *xb = create(xnn_f, g, 2, SLEAPC_PRECISION_FP32);
    sleapc_backend *nb = create(native_f, g, 2, SLEAPC_PRECISION_FP32);
    if (xb && nb) {
        /* Warmed up: the first forward allocates nothing. */
        CHECK_OK(sleapc__backend_warmup(xb, shapes[0]));
        check_no_alloc(xb, shapes[0], what);
        /* Every shape in turn, then the first again: each change re-plans and
         * the results follow the new shape; once planned, no allocation. */
        for (int k = 0; k <= n_shapes; k++) {
            const int64_t *s = shapes[k % n_shapes];
            compare(xb, nb, g, s, REL_L2_TOL, what);
            check_no_alloc(xb, s, what);
        }
        /* Other thread counts (1: no pool; 3) give the same results. */
        CHECK_OK(sleapc__backend_set_n_threads(xb, 1));
        compare(xb, nb, g, shapes[0], REL_L2_TOL, what);
        CHECK_OK(sleapc__backend_set_n_threads(xb, 3));
        compare(xb, nb, g, shapes[n_shapes - 1], REL_L2_TOL, what);
    }
    sleapc__backend_destroy(xb);
    sleapc__backend_destroy(nb);
}

static void check_refusals(test_graph *all)
{
    sleapc_backend *be = (sleapc_backend *)1;
    sleapc_backend_opts bf16 = {.n_threads = 1, .precision = SLEAPC_PRECISION_BF16};
    CHECK(sleapc__backend_create_from(xnn_f, &all->g, &bf16, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(be == NULL);
    CHECK(strstr(sleapc_last_error(), "bf16") != NULL);

    /* fp16 of a graph with a linear node: no fp16 fully connected here. */
    sleapc_backend_opts fp16 = {.n_threads = 1, .precision = SLEAPC_PRECISION_FP16};
    CHECK(sleapc__backend_create_from(xnn_f, &all->g, &fp16, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(be == NULL);

    /* Softmax over a map's channels is not an IR operation: refused, naming
     * the node, and "auto" falls back to another backend. */
    test_graph t;
    memset(&t, 0, sizeof t);
    t.g.in_channels = 1;
    int x = add(&t, (node_spec){.op = SLEAPC_OP_INPUT, .name = "input"});
    int c = add(&t, (node_spec){.op = SLEAPC_OP_CONV2D,
                                .name = "odd_softmax_conv",
                                .n_inputs = 1,
                                .inputs = {x},
                                .c_in = 1,
                                .c_out = 2,
                                .kernel = 1,
                                .act = SLEAPC_ACT_SOFTMAX});
    CHECK_OK(sleapc__graph_add_output(&t.g, "Head", c, 1));
    sleapc_backend_opts fp32 = {.n_threads = 1};
    CHECK(sleapc__backend_create_from(xnn_f, &t.g, &fp32, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(sleapc_last_error(), "odd_softmax_conv") != NULL, "message: %s",
              sleapc_last_error());
    graph_free(&t);
}

/* A shape past what XNNPACK can index is refused at planning (warmup needs
 * no data), and the backend still runs a normal shape afterwards. */
static void check_too_large(const sleapc_graph *g)
{
    sleapc_backend *xb = create(xnn_f, g, 1, SLEAPC_PRECISION_FP32);
    if (!xb)
        return;
    const int64_t huge[4] = {1, 1, (int64_t)1 << 25, 4};
    CHECK(sleapc__backend_warmup(xb, huge) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "too large") != NULL);
    const int64_t ok[4] = {1, 1, 8, 8};
    CHECK_OK(sleapc__backend_warmup(xb, ok));
    check_no_alloc(xb, ok, "after a refused shape");
    sleapc__backend_destroy(xb);
}

/* fp16 where this XNNPACK and CPU have it; refused with UNSUPPORTED where not. */
static void check_fp16(void)
{
    test_graph t;
    build_fp16(&t);
    sleapc_backend *xb = NULL;
    sleapc_backend_opts opts = {.n_threads = 2, .precision = SLEAPC_PRECISION_FP16};
    sleapc_status st = sleapc__backend_create_from(xnn_f, &t.g, &opts, &xb);
    CHECK_MSG(st == SLEAPC_OK || st == SLEAPC_ERR_UNSUPPORTED, "fp16: %s", sleapc_last_error());
    if (st == SLEAPC_OK) {
        sleapc_backend *nb = create(native_f, &t.g, 2, SLEAPC_PRECISION_FP32);
        const int64_t s[4] = {3, 1, 13, 11};
        double err = nb ? compare(xb, nb, &t.g, s, REL_L2_TOL_FP16, "fp16") : 0;
        /* It really runs in fp16: fp32 would agree to ~1e-7. */
        CHECK_MSG(err > 1e-5, "fp16 result matches fp32 to %.3g", err);
        sleapc__backend_destroy(nb);
    }
    sleapc__backend_destroy(xb);
    graph_free(&t);
}

/* The Nth allocation fails, for every N until the whole sequence succeeds:
 * each failure is an error with a message (ASan checks that nothing leaks). */
static void check_alloc_failures(const sleapc_graph *g)
{
    const int64_t s[4] = {1, 1, 9, 7};
    float *px = rand_input(s, 5);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 1, 9, 7}, .data = px};
    bool done = false;
    for (int64_t n = 1; n < 5000 && !done; n++) {
        sleapc_backend *be = NULL;
        sleapc_tensor_map out = {0};
        sleapc_backend_opts opts = {.n_threads = 2};
        sleapc__alloc_fail_after(n);
        sleapc_status st = sleapc__backend_create_from(xnn_f, g, &opts, &be);
        if (!st)
            st = sleapc__backend_forward(be, &x, &out);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            done = true;
        } else {
            CHECK_MSG(st == SLEAPC_ERR_NOMEM || st == SLEAPC_ERR_BACKEND,
                      "allocation %lld failing: status %d: %s", (long long)n, (int)st,
                      sleapc_last_error());
            CHECK(strlen(sleapc_last_error()) > 0);
        }
        sleapc__backend_destroy(be);
    }
    CHECK(done);
    free(px);
}

int main(void)
{
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (strcmp(f->name, "xnnpack") == 0)
            xnn_f = f;
        else if (strcmp(f->name, "native") == 0)
            native_f = f;
    }
    if (!xnn_f || xnn_f->score() <= 0) {
        printf("skipped: the xnnpack backend is not built or cannot run here\n");
        return 77;
    }
    CHECK(native_f != NULL);
    if (!native_f)
        return test_finish();

    test_graph all, keras;
    build_all_ops(&all);
    build_keras(&keras);
    /* Odd sizes make RESIZE_LIKE a real resize; even ones an identity. */
    const int64_t all_shapes[][4] = {{1, 3, 13, 11}, {3, 3, 13, 11}, {1, 3, 16, 16}};
    check_graph(&all.g, all_shapes, 3, "all ops");
    const int64_t keras_shapes[][4] = {{1, 1, 4, 4}, {3, 1, 9, 7}, {3, 1, 12, 10}};
    check_graph(&keras.g, keras_shapes, 3, "keras placement");

    check_refusals(&all);
    check_too_large(&keras.g);
    check_fp16();
    check_alloc_failures(&keras.g);

    graph_free(&all);
    graph_free(&keras);
    return test_finish();
}
