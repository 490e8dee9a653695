/* The Vulkan backend against the native one on hand-built random graphs that
 * cover every op it runs: both transposed-conv placements, RESIZE_LIKE to odd
 * sizes and as an identity, one- to three-input concats, global max pool over
 * a real window and over a 1 x 1 map, every activation, kernels 1 to 7,
 * channel counts and map sizes that are no multiple of the conv shader's
 * tiles, batch 1 to 3, SwinT's shifted window attention (padding, the mask,
 * a shift dropped on one axis). Also: re-planning when the shape changes, no
 * allocation in a warmed-up forward, refusals (a kernel or an activation it
 * lacks, naming the node; a shape too large), device strings, that "auto"
 * never takes a software device, and failing allocations on every error path. Runs under the Khronos
 * validation layer (zero messages). Skipped (77) when the backend is not
 * built or Vulkan lists no device (CI runs it on Mesa's lavapipe).
 *
 * Tolerance: relative L2 <= 1e-5 per output. Both backends compute in
 * float32 and differ only in summation order (and GELU's erf, within 1.5e-7),
 * ~1e-7 per op; weights are scaled by 1/sqrt(fan-in) so activations stay O(1).
 * A wrong tap, border, placement or channel order is off by ~1e-1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "sleapc/runner.h"
#include "test_util.h"

#define REL_L2_TOL 1e-5

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else
#include "backend_compare.h"
#include "backends/vulkan/vulkan_backend.h"
#include "model/graph_plan.h"

static const struct sleapc_backend_factory *vk_f, *native_f;

/* Wider maps and channel counts that are no multiple of the conv shader's
 * blocks (4 input, 8 output channels, 16 x 16 tiles), every kernel size up
 * to 7, GELU, and a conv with no activation that another node reads. */
static void build_tiles(test_graph *t)
{
    memset(t, 0, sizeof *t);
    t->seed = 4;
    t->g.in_channels = 3;
    t->g.max_stride = 2;
    int x = NODE(.op = SLEAPC_OP_INPUT, .name = "input");
    int c0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c0", .n_inputs = 1, .inputs = {x}, .c_in = 3,
                  .c_out = 13, .kernel = 7, .act = SLEAPC_ACT_RELU);
    int c1 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c1", .n_inputs = 1, .inputs = {c0}, .c_in = 13,
                  .c_out = 21, .kernel = 3, .act = SLEAPC_ACT_GELU);
    int c2 = NODE(.op = SLEAPC_OP_CONV2D, .name = "c2", .n_inputs = 1, .inputs = {c1}, .c_in = 21,
                  .c_out = 9, .kernel = 1);
    int p0 = NODE(.op = SLEAPC_OP_MAXPOOL2D, .name = "p0", .n_inputs = 1, .inputs = {c2});
    int t0 = NODE(.op = SLEAPC_OP_CONV_TRANSPOSE2D, .name = "t0", .n_inputs = 1, .inputs = {p0},
                  .c_in = 9, .c_out = 17, .kernel = 3);
    int r0 = NODE(.op = SLEAPC_OP_RESIZE_LIKE, .name = "r0", .n_inputs = 2, .inputs = {t0, c0});
    int cat = NODE(.op = SLEAPC_OP_CONCAT, .name = "cat", .n_inputs = 2, .inputs = {r0, c2});
    int h0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "h0", .n_inputs = 1, .inputs = {cat}, .c_in = 26,
                  .c_out = 11, .kernel = 5);
    CHECK_OK(sleapc__graph_add_output(&t->g, "TileHead", h0, 1));
}

/* The ConvNeXt ops: a 4 x 4 patch stem (with padding), depthwise 7 x 7,
 * LayerNorm (with and without weight), GELU, layer scale and a plain
 * residual, a patch merge over odd sizes. */
static void build_convnext(test_graph *t)
{
    memset(t, 0, sizeof *t);
    t->seed = 5;
    t->g.in_channels = 3;
    t->g.max_stride = 8;
    int x = NODE(.op = SLEAPC_OP_INPUT, .name = "input");
    sleapc_node pn = {.op = SLEAPC_OP_PATCHES, .n_inputs = 1, .inputs = {x}, .kernel = 4,
                      .stride = 4, .pad = 1};
    strcpy(pn.name, "stem_patches");
    int p0 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &pn, &p0));
    int s0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "stem", .n_inputs = 1, .inputs = {p0},
                  .c_in = 48, .c_out = 12, .kernel = 1);
    sleapc_node dw = {.op = SLEAPC_OP_DWCONV, .n_inputs = 1, .inputs = {s0}, .c_in = 12,
                      .c_out = 12, .kernel = 7, .weight = rand_array(t, 12 * 49, 1.0f / 7.0f),
                      .bias = rand_array(t, 12, 0.2f)};
    strcpy(dw.name, "dw");
    int d0 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &dw, &d0));
    sleapc_node ln = {.op = SLEAPC_OP_LAYERNORM, .n_inputs = 1, .inputs = {d0}, .c_in = 12,
                      .c_out = 12, .eps = 1e-6f, .weight = rand_array(t, 12, 1.0f),
                      .bias = rand_array(t, 12, 0.2f)};
    strcpy(ln.name, "ln");
    int l0 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &ln, &l0));
    int f0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "fc1", .n_inputs = 1, .inputs = {l0},
                  .c_in = 12, .c_out = 24, .kernel = 1, .act = SLEAPC_ACT_GELU);
    int f1 = NODE(.op = SLEAPC_OP_CONV2D, .name = "fc2", .n_inputs = 1, .inputs = {f0},
                  .c_in = 24, .c_out = 12, .kernel = 1);
    sleapc_node sa = {.op = SLEAPC_OP_SCALE_ADD, .n_inputs = 2, .inputs = {s0, f1}, .c_in = 12,
                      .c_out = 12, .weight = rand_array(t, 12, 0.5f)};
    strcpy(sa.name, "residual");
    int r0 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &sa, &r0));
    sleapc_node ln2 = {.op = SLEAPC_OP_LAYERNORM, .n_inputs = 1, .inputs = {r0}, .c_in = 12,
                       .c_out = 12, .eps = 1e-5f};
    strcpy(ln2.name, "ln_plain");
    int l1 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &ln2, &l1));
    sleapc_node plain = {.op = SLEAPC_OP_SCALE_ADD, .n_inputs = 2, .inputs = {l1, r0},
                         .c_in = 12, .c_out = 12};
    strcpy(plain.name, "plain_add");
    int a0 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &plain, &a0));
    sleapc_node pm = {.op = SLEAPC_OP_PATCHES, .n_inputs = 1, .inputs = {a0}, .kernel = 2,
                      .stride = 2, .patch_merge = true};
    strcpy(pm.name, "merge");
    int m0 = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &pm, &m0));
    int h0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "head", .n_inputs = 1, .inputs = {m0},
                  .c_in = 48, .c_out = 5, .kernel = 3);
    CHECK_OK(sleapc__graph_add_output(&t->g, "ConvNeXtHead", h0, 8));
    CHECK_OK(sleapc__graph_add_output(&t->g, "StemOut", a0, 4));
}

/* A window attention after a 1x1 qkv conv of x: c channels, heads, window
 * ws, shift; with_bias: the qkv bias is the padded tokens' qkv. */
static int add_attention(test_graph *t, int x, int c_in, int c, int heads, int ws, int shift,
                         bool with_bias, const char *name)
{
    int qkv = NODE(.op = SLEAPC_OP_CONV2D, .name = "qkv", .n_inputs = 1, .inputs = {x},
                   .c_in = c_in, .c_out = 3 * c, .kernel = 1, .no_bias = !with_bias);
    int side = 2 * ws - 1;
    sleapc_node wa = {.op = SLEAPC_OP_WINDOW_ATTENTION, .n_inputs = 1, .inputs = {qkv},
                      .c_in = c, .c_out = c, .kernel = ws, .heads = heads, .shift = shift,
                      .weight = rand_array(t, (size_t)side * side * heads, 1.0f),
                      .bias = t->g.nodes[qkv].bias};
    strcpy(wa.name, name);
    int a = -1;
    CHECK_OK(sleapc__graph_add(&t->g, &wa, &a));
    return a;
}

/* SwinT's window attention: shifted windows with the mask on both axes or
 * (on a map no taller than the window) one, padded windows with and without
 * a qkv bias, no shift, one to three heads, a head width past the shader's
 * channel chunk (40 > 32). */
static void build_swin(test_graph *t)
{
    memset(t, 0, sizeof *t);
    t->seed = 7;
    t->g.in_channels = 3;
    t->g.max_stride = 1;
    int x = NODE(.op = SLEAPC_OP_INPUT, .name = "input");
    int a0 = add_attention(t, x, 3, 12, 3, 4, 2, true, "shifted");
    int a1 = add_attention(t, a0, 12, 40, 1, 3, 1, false, "shifted_no_bias");
    int a2 = add_attention(t, a1, 40, 16, 2, 5, 0, true, "plain");
    int h0 = NODE(.op = SLEAPC_OP_CONV2D, .name = "proj", .n_inputs = 1, .inputs = {a2},
                  .c_in = 16, .c_out = 5, .kernel = 1);
    CHECK_OK(sleapc__graph_add_output(&t->g, "SwinHead", h0, 1));
    CHECK_OK(sleapc__graph_add_output(&t->g, "Attention", a0, 1));
}

/* The device memory of the activations is the shared planner's arena for
 * this device's alignment (printed beside what a buffer per node took). */
static void check_arena(const sleapc_backend *xb, const sleapc_graph *g, const int64_t shape[4],
                        const char *what)
{
    int64_t align = 0;
    int64_t got = sleapc__vulkan_activation_bytes(xb, &align);
    sleapc_plan_opts opts = {.elem = sizeof(float), .align = align};
    sleapc_graph_plan p;
    CHECK_OK(sleapc__graph_plan(g, shape[0], shape[2], shape[3], &opts, &p));
    int64_t per_node = 0;
    for (int i = 0; i < p.n_nodes; i++) {
        const int64_t *s = p.shapes[i];
        per_node += (s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1]) * (int64_t)sizeof(float);
    }
    CHECK_MSG(got == p.arena,
              "%s: %lld bytes of device activations, planned %lld, %lld a buffer per node", what,
              (long long)got, (long long)p.arena, (long long)per_node);
    printf("%-20s device activations %lld bytes (a buffer per node: %lld)\n", what,
           (long long)got, (long long)per_node);
    sleapc__graph_plan_free(&p);
}

static void check_graph(const sleapc_graph *g, const int64_t (*shapes)[4], int n_shapes,
                        const char *what)
{
    sleapc_backend *xb = create(vk_f, g, 2, SLEAPC_PRECISION_FP32);
    sleapc_backend *nb = create(native_f, g, 2, SLEAPC_PRECISION_FP32);
    if (xb && nb) {
        /* Warmed up: the first forward allocates nothing. */
        CHECK_OK(sleapc__backend_warmup(xb, shapes[0]));
        check_arena(xb, g, shapes[0], what);
        check_no_alloc(xb, shapes[0], what);
        /* Every shape in turn, then the first again: each change re-plans and
         * the results follow the new shape; once planned, no allocation. */
        double worst = 0;
        for (int k = 0; k <= n_shapes; k++) {
            const int64_t *s = shapes[k % n_shapes];
            double err = compare(xb, nb, g, s, REL_L2_TOL, what);
            worst = err > worst ? err : worst;
            check_no_alloc(xb, s, what);
        }
        printf("%-20s worst relative L2 vs native %.2e\n", what, worst);
    }
    sleapc__backend_destroy(xb);
    sleapc__backend_destroy(nb);
}

/* fp16 storage (--precision fp16): every buffer binary16, arithmetic float32.
 * Each value a node reads or writes and each weight is rounded once to
 * binary16, relative error <= u = 2^-11. The roundings are independent, so
 * in relative L2 they add in quadrature: an op adds its weights' and its
 * output's rounding, <= sqrt(2) u (a dot product of independently rounded
 * terms keeps their relative L2 when its terms do not cancel on average, as
 * with random weights); the input adds u once. A graph whose longest path
 * has `depth` ops is then within sqrt(2 depth + 1) u; the bound allows twice
 * that for the ops that amplify (a transposed conv's 4 overlapping taps,
 * LayerNorm's division by the spread). A wrong tap or border is ~1e-1 off. */
#define FP16_U (1.0 / 2048.0)

/* fp16 arithmetic (a device with shaderFloat16): the convolutions' products
 * are also rounded to binary16, once each, relative error <= u, and still
 * accumulated in float32. Those roundings are independent of the weights'
 * and enter a dot product the same way (each term times its own error), so
 * an op adds at most one more u in quadrature: sqrt(3 depth + 1) u, twice
 * that as the bound. */
static sleapc_backend *create_fp16(const sleapc_graph *g, bool math)
{
    test_setenv("SLEAPC_VULKAN_FP16_MATH", math ? "1" : "0");
    sleapc_backend *be = create(vk_f, g, 2, SLEAPC_PRECISION_FP16);
    test_setenv("SLEAPC_VULKAN_FP16_MATH", NULL);
    /* lavapipe (CI) has shaderFloat16: there it must run. */
    CHECK_MSG(!be || !math || sleapc__backend_fp16_math(be) ||
                  !strstr(sleapc__backend_device_name(be), "llvmpipe"),
              "fp16 arithmetic not run on lavapipe, which has shaderFloat16");
    CHECK_MSG(!be || math || !sleapc__backend_fp16_math(be),
              "SLEAPC_VULKAN_FP16_MATH=0: fp16 arithmetic ran");
    return be;
}

static void check_graph_fp16(const sleapc_graph *g, const int64_t (*shapes)[4], int n_shapes,
                             int depth, const char *what)
{
    double tol = 2 * sqrt(2.0 * depth + 1) * FP16_U;
    double tol_math = 2 * sqrt(3.0 * depth + 1) * FP16_U;
    sleapc_backend *xb = create_fp16(g, false);
    /* A device without shaderFloat16 runs fp16 storage only: nothing more. */
    sleapc_backend *mb = create_fp16(g, true);
    if (mb && !sleapc__backend_fp16_math(mb)) {
        printf("%s: no fp16 arithmetic on this device\n", what);
        sleapc__backend_destroy(mb);
        mb = NULL;
    }
    sleapc_backend *nb = create(native_f, g, 2, SLEAPC_PRECISION_FP32);
    if (xb && nb) {
        CHECK_OK(sleapc__backend_warmup(xb, shapes[0]));
        check_no_alloc(xb, shapes[0], what);
        for (int k = 0; k < n_shapes; k++) {
            double e = compare(xb, nb, g, shapes[k], tol, what);
            printf("%s, fp16, shape %d: relative L2 %.2e (bound %.2e)\n", what, k, e, tol);
            /* Something was rounded: the fp16 shaders ran, not the fp32 ones. */
            CHECK_MSG(e > 1e-6, "%s: fp16 indistinguishable from float32 (%.2e)", what, e);
            if (!mb)
                continue;
            double em = compare(mb, nb, g, shapes[k], tol_math, what);
            /* Products were rounded: the fp16-arithmetic shaders ran. */
            double ems = compare(mb, xb, g, shapes[k], tol_math, what);
            printf("%s, fp16 arithmetic, shape %d: relative L2 %.2e (bound %.2e), %.2e from "
                   "fp16 storage\n", what, k, em, tol_math, ems);
            CHECK_MSG(ems > 1e-6, "%s: fp16 arithmetic indistinguishable from fp16 storage (%.2e)",
                      what, ems);
        }
    }
    if (mb) {
        CHECK_OK(sleapc__backend_warmup(mb, shapes[0]));
        check_no_alloc(mb, shapes[0], what);
    }
    sleapc__backend_destroy(mb);
    sleapc__backend_destroy(xb);
    sleapc__backend_destroy(nb);
}

static void check_refusals(test_graph *all)
{
    sleapc_backend *be = (sleapc_backend *)1;
    sleapc_backend_opts fp32_opts = {.n_threads = 1};
    sleapc_backend_opts bf16 = {.n_threads = 1, .precision = SLEAPC_PRECISION_BF16};
    CHECK(sleapc__backend_create_from(vk_f, &all->g, &bf16, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(be == NULL);
    CHECK(strstr(sleapc_last_error(), "bf16") != NULL);

    /* A kernel it lacks (a 9 x 9 convolution) is refused naming the node
     * and the kernel, so "auto" falls back to another backend. */
    test_graph p;
    memset(&p, 0, sizeof p);
    p.g.in_channels = 3;
    int px = add(&p, (node_spec){.op = SLEAPC_OP_INPUT, .name = "input"});
    int pi = add(&p, (node_spec){.op = SLEAPC_OP_CONV2D,
                                 .name = "wide_conv",
                                 .n_inputs = 1,
                                 .inputs = {px},
                                 .c_in = 3,
                                 .c_out = 2,
                                 .kernel = 9});
    CHECK_OK(sleapc__graph_add_output(&p.g, "Head", pi, 1));
    CHECK(sleapc__backend_create_from(vk_f, &p.g, &fp32_opts, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(sleapc_last_error(), "wide_conv") && strstr(sleapc_last_error(), "9x9"),
              "message: %s", sleapc_last_error());
    graph_free(&p);

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
    CHECK(sleapc__backend_create_from(vk_f, &t.g, &fp32, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(sleapc_last_error(), "odd_softmax_conv") != NULL, "message: %s",
              sleapc_last_error());
    graph_free(&t);
}

/* A shape past what the shaders can index is refused at planning (warmup needs
 * no data), and the backend still runs a normal shape afterwards. */
static void check_too_large(const sleapc_graph *g)
{
    sleapc_backend *xb = create(vk_f, g, 1, SLEAPC_PRECISION_FP32);
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
        sleapc_status st = sleapc__backend_create_from(vk_f, g, &opts, &be);
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

/* The device string names what ran; a device that is not there is refused
 * with UNSUPPORTED; "auto" never takes a software device. */
static void check_devices(const sleapc_graph *g)
{
    sleapc_device_info devs[16];
    int n = sleapc_devices_list(devs, 16);
    CHECK(n >= 1);
    bool only_software = true;
    for (int i = 0; i < n && i < 16; i++)
        only_software = only_software && strcmp(devs[i].kind, "software") == 0;
    sleapc_backend *be = create(vk_f, g, 1, SLEAPC_PRECISION_FP32);
    if (be) {
        CHECK_MSG(strcmp(be->device, devs[0].device) == 0 || !only_software,
                  "device %s, listed %s", be->device, devs[0].device);
        sleapc__backend_destroy(be);
    }
    be = NULL;
    sleapc_backend_opts missing = {.n_threads = 1, .device = "cuda:9"};
    CHECK(sleapc__backend_create_from(vk_f, g, &missing, &be) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(be == NULL);
    sleapc_backend_opts bad = {.n_threads = 1, .device = "tpu"};
    CHECK(sleapc__backend_create_from(vk_f, g, &bad, &be) == SLEAPC_ERR_INVALID_ARG);
    if (only_software) {
        sleapc_backend_opts from_auto = {.n_threads = 1, .from_auto = true};
        CHECK(sleapc__backend_create_from(vk_f, g, &from_auto, &be) == SLEAPC_ERR_UNSUPPORTED);
        CHECK(strstr(sleapc_last_error(), "software") != NULL);
        CHECK(be == NULL);
        sleapc_backend_opts cpu = {.n_threads = 1, .device = "cpu"};
        CHECK_OK(sleapc__backend_create_from(vk_f, g, &cpu, &be));
        if (be)
            CHECK(strcmp(be->device, "cpu") == 0);
        sleapc__backend_destroy(be);
    }
}

int main(void)
{
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (strcmp(f->name, "vulkan") == 0)
            vk_f = f;
        else if (strcmp(f->name, "native") == 0)
            native_f = f;
    }
    if (!vk_f || vk_f->score() <= 0) {
        printf("skipped: the vulkan backend is not built or finds no Vulkan device\n");
        return 77;
    }
    CHECK(native_f != NULL);
    if (!native_f)
        return test_finish();
    /* Everything but the allocation-failure sweep runs under the validation
     * layer, which must report nothing. */
    test_setenv("SLEAPC_VULKAN_VALIDATION", "1");

    test_graph all, keras, tiles, convnext, swin;
    build_all_ops(&all);
    build_keras(&keras);
    build_tiles(&tiles);
    build_convnext(&convnext);
    build_swin(&swin);
    /* Odd sizes make RESIZE_LIKE a real resize; even ones an identity. */
    const int64_t all_shapes[][4] = {{1, 3, 13, 11}, {3, 3, 13, 11}, {1, 3, 16, 16}};
    check_graph(&all.g, all_shapes, 3, "all ops");
    const int64_t keras_shapes[][4] = {{1, 1, 4, 4}, {3, 1, 9, 7}, {3, 1, 12, 10}};
    check_graph(&keras.g, keras_shapes, 3, "keras placement");
    const int64_t tile_shapes[][4] = {{2, 3, 37, 21}, {1, 3, 16, 48}};
    check_graph(&tiles.g, tile_shapes, 2, "tiles");
    /* 44 / 4 = 11 (odd, so the merge pads) and 36 / 4 = 9. */
    const int64_t convnext_shapes[][4] = {{2, 3, 44, 36}, {1, 3, 32, 32}};
    check_graph(&convnext.g, convnext_shapes, 2, "convnext ops");
    /* 10 x 7: windows padded, shifted on both axes; 3 x 13: the shift
     * dropped on the rows (one window tall); 5 x 5: the last attention one
     * window without padding. */
    const int64_t swin_shapes[][4] = {{2, 3, 10, 7}, {1, 3, 3, 13}, {1, 3, 5, 5}};
    check_graph(&swin.g, swin_shapes, 3, "window attention");

    /* Ops on the longest paths: c0 c1 p0 c2 t0 r0 cat h0 (8); c0 p0 t0 r0
     * cat h0 (6); c0 c1 c2 p0 t0 r0 cat h0 (8); stem_patches stem dw ln fc1
     * fc2 residual ln_plain plain_add merge head (11). */
    check_graph_fp16(&all.g, all_shapes, 2, 8, "all ops");
    check_graph_fp16(&keras.g, keras_shapes + 1, 1, 6, "keras placement");
    check_graph_fp16(&tiles.g, tile_shapes, 1, 8, "tiles");
    check_graph_fp16(&convnext.g, convnext_shapes, 1, 11, "convnext ops");

    check_refusals(&all);
    check_too_large(&keras.g);
    check_devices(&keras.g);

    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);

    test_setenv("SLEAPC_VULKAN_VALIDATION", NULL);
    check_alloc_failures(&keras.g);

    graph_free(&all);
    graph_free(&keras);
    graph_free(&tiles);
    graph_free(&convnext);
    graph_free(&swin);
    return test_finish();
}
#endif
