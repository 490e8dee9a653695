/* Every backend's sigmoid gives the native backend's float32 values, bit for
 * bit, saturated ones included (exactly 1.0f, where oneDNN's and XNNPACK's
 * own logistic give 0.99999994; SLEAP 1.x's class assignment breaks ties
 * between class-map values of exactly 1, so an ulp there changes tracks).
 *
 * 1. A hand-built graph whose pre-activations are exact on every backend: a
 *    1x1 conv and a linear layer with power-of-two weights on inputs with few
 *    significant bits, so no sum rounds differently anywhere. Its sigmoid
 *    heads, over pre-activations from -32 to 80, must equal native's and the
 *    shared sigmoid applied here to the same pre-activations, bit for bit.
 *    A sigmoid that another node reads is exact too (oneDNN) or refused
 *    (XNNPACK, whose runtime could only use its own).
 * 2. Real models with sigmoid class maps (the legacy SLEAP 1.x multi-class
 *    bottom-up model min_tracks_2node and sleap-nn's multi-class bottom-up
 *    checkpoint), on the stored network inputs of reference cases whose class
 *    maps saturate. Convolution sums differ by ulps between backends, so the
 *    maps are compared within relative L2 1e-5 (as in test_onednn.c and
 *    test_xnnpack.c), and the saturated values exactly: wherever native gives
 *    1.0f every other backend gives 1.0f, and the other way round.
 * Skipped (77) when only the native backend is built. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/sigmoid.h"
#include "core/alloc.h"
#include "io/npy/npy_file.h"
#include "model/model_impl.h"
#include "test_util.h"

#define REL_L2_TOL 1e-5

/* Synthetic graph: H x W input holding j / 2^16, conv pre-activation
 * 64 x - 32 (exact: at most 16 significant bits); linear pre-activation
 * 64 * max + bias_o with biases in steps of 1/4 (exact as well). */
enum { H = 256, W = 256, BATCH = 3, N_LIN = 64 };

static const struct sleapc_backend_factory *native_f;

static int add_node(sleapc_graph *g, sleapc_node n, const char *name)
{
    snprintf(n.name, sizeof n.name, "%s", name);
    int idx = -1;
    CHECK_OK(sleapc__graph_add(g, &n, &idx));
    return idx;
}

static void build_exact_graph(sleapc_graph *g, const float *conv_w, const float *conv_b,
                              const float *lin_w, const float *lin_b)
{
    memset(g, 0, sizeof *g);
    g->in_channels = 1;
    g->max_stride = 1;
    int in = add_node(g, (sleapc_node){.op = SLEAPC_OP_INPUT}, "input");
    int c = add_node(g,
                     (sleapc_node){.op = SLEAPC_OP_CONV2D,
                                   .n_inputs = 1,
                                   .inputs = {in},
                                   .c_in = 1,
                                   .c_out = 1,
                                   .kernel = 1,
                                   .act = SLEAPC_ACT_SIGMOID,
                                   .weight = conv_w,
                                   .bias = conv_b},
                     "SigmoidMap");
    int gp = add_node(
        g, (sleapc_node){.op = SLEAPC_OP_GLOBAL_MAXPOOL, .n_inputs = 1, .inputs = {in}}, "gp");
    int l = add_node(g,
                     (sleapc_node){.op = SLEAPC_OP_LINEAR,
                                   .n_inputs = 1,
                                   .inputs = {gp},
                                   .c_in = 1,
                                   .c_out = N_LIN,
                                   .act = SLEAPC_ACT_SIGMOID,
                                   .weight = lin_w,
                                   .bias = lin_b},
                     "SigmoidVec");
    CHECK_OK(sleapc__graph_add_output(g, "SigmoidMapHead", c, 1));
    CHECK_OK(sleapc__graph_add_output(g, "SigmoidVectorHead", l, 0));
}

/* Bitwise comparison; counts the values that are exactly 1. */
static void check_bitwise(const float *got, const float *want, int64_t n, const char *what,
                          int64_t *n_ones)
{
    int64_t diff = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            diff++;
            first = first < 0 ? i : first;
        }
        *n_ones += want[i] == 1.0f;
    }
    CHECK_MSG(diff == 0, "%s: %lld of %lld values differ (first at %lld: %.9g, want %.9g)", what,
              (long long)diff, (long long)n, (long long)first, first >= 0 ? got[first] : 0.0,
              first >= 0 ? want[first] : 0.0);
}

static const sleapc_tensor *output(const sleapc_tensor_map *m, const char *name, int64_t numel)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(m, name);
    CHECK_MSG(t && t->dtype == SLEAPC_DTYPE_F32 && sleapc_tensor_numel(t) == numel,
              "output %s missing or of another size", name);
    return t && sleapc_tensor_numel(t) == numel ? t : NULL;
}

static void check_exact_graph(const struct sleapc_backend_factory *f)
{
    const float conv_w[1] = {64.0f}, conv_b[1] = {-32.0f};
    float lin_w[N_LIN], lin_b[N_LIN];
    for (int o = 0; o < N_LIN; o++) {
        lin_w[o] = 64.0f;
        lin_b[o] = -48.0f + 0.25f * (float)o; /* with 64 * max: up to 79.75 */
    }
    sleapc_graph g;
    build_exact_graph(&g, conv_w, conv_b, lin_w, lin_b);

    /* Image b holds j / 2^16 shifted by b / 8 (wrapping below 1), so the
     * three maxima differ and every value stays exact. */
    const int64_t n_map = (int64_t)BATCH * H * W;
    float *x = sleapc__malloc((size_t)n_map * sizeof *x);
    float *map_want = sleapc__malloc((size_t)n_map * sizeof *map_want);
    float vec_want[BATCH * N_LIN];
    CHECK(x && map_want);
    if (!x || !map_want)
        goto done;
    for (int64_t b = 0; b < BATCH; b++)
        for (int64_t j = 0; j < H * W; j++) {
            float v = (float)j / 65536.0f + (float)b / 8.0f;
            x[b * H * W + j] = v < 1.0f ? v : v - 1.0f;
        }
    /* The pre-activations, exact, then the shared sigmoid. */
    for (int64_t i = 0; i < n_map; i++)
        map_want[i] = 64.0f * x[i] - 32.0f;
    for (int b = 0; b < BATCH; b++) {
        float m = 0.0f;
        for (int64_t j = 0; j < H * W; j++)
            m = fmaxf(m, x[b * H * W + j]);
        for (int o = 0; o < N_LIN; o++)
            vec_want[b * N_LIN + o] = 64.0f * m + lin_b[o];
    }
    sleapc__sigmoid_apply(map_want, n_map);
    sleapc__sigmoid_apply(vec_want, BATCH * N_LIN);

    sleapc_tensor in = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {BATCH, 1, H, W}, .data = x};
    sleapc_backend_opts opts = {.n_threads = 2};
    sleapc_backend *be = NULL, *nb = NULL;
    CHECK_OK(sleapc__backend_create_from(f, &g, &opts, &be));
    CHECK_OK(sleapc__backend_create_from(native_f, &g, &opts, &nb));
    sleapc_tensor_map got = {0}, ref = {0};
    if (be && nb) {
        CHECK_OK(sleapc__backend_forward(nb, &in, &ref));
        CHECK_OK(sleapc__backend_forward(be, &in, &got));
        /* The host sigmoid adds no allocation to a planned forward. */
        int64_t before = sleapc__alloc_count();
        CHECK_OK(sleapc__backend_forward(be, &in, &got));
        CHECK_MSG(sleapc__alloc_count() == before, "%s: second forward allocated", f->name);
        const sleapc_tensor *gm = output(&got, "SigmoidMapHead", n_map);
        const sleapc_tensor *rm = output(&ref, "SigmoidMapHead", n_map);
        const sleapc_tensor *gv = output(&got, "SigmoidVectorHead", BATCH * N_LIN);
        const sleapc_tensor *rv = output(&ref, "SigmoidVectorHead", BATCH * N_LIN);
        char what[96];
        int64_t ones = 0, ones_shared = 0;
        if (gm && rm) {
            snprintf(what, sizeof what, "%s map vs native", f->name);
            check_bitwise(gm->data, rm->data, n_map, what, &ones);
            snprintf(what, sizeof what, "%s map vs the shared sigmoid", f->name);
            check_bitwise(gm->data, map_want, n_map, what, &ones_shared);
        }
        if (gv && rv) {
            snprintf(what, sizeof what, "%s vector vs native", f->name);
            check_bitwise(gv->data, rv->data, BATCH * N_LIN, what, &ones);
            snprintf(what, sizeof what, "%s vector vs the shared sigmoid", f->name);
            check_bitwise(gv->data, vec_want, BATCH * N_LIN, what, &ones_shared);
        }
        /* Pre-activations above 24 ln 2 must have saturated. */
        CHECK_MSG(ones > 1000, "%s: only %lld values of exactly 1", f->name, (long long)ones);
        printf("exact graph [%s]: %lld map + %d vector values bitwise equal to native, %lld of "
               "them exactly 1\n",
               f->name, (long long)n_map, BATCH * N_LIN, (long long)ones);
    }
    sleapc__backend_destroy(be);
    sleapc__backend_destroy(nb);
done:
    sleapc__free(x);
    sleapc__free(map_want);
    sleapc__graph_clear(&g);
}

/* A sigmoid that another node reads: oneDNN applies it between its
 * primitives (checked through an exact 1x1 identity conv after it); XNNPACK
 * could only use its own logistic inside the runtime, so it refuses the graph
 * naming the node. */
static void check_inner_sigmoid(const struct sleapc_backend_factory *f)
{
    const float w0[1] = {64.0f}, b0[1] = {-32.0f}, w1[1] = {1.0f}, b1[1] = {0.0f};
    sleapc_graph g;
    memset(&g, 0, sizeof g);
    g.in_channels = 1;
    g.max_stride = 1;
    int in = add_node(&g, (sleapc_node){.op = SLEAPC_OP_INPUT}, "input");
    int c0 = add_node(&g,
                      (sleapc_node){.op = SLEAPC_OP_CONV2D,
                                    .n_inputs = 1,
                                    .inputs = {in},
                                    .c_in = 1,
                                    .c_out = 1,
                                    .kernel = 1,
                                    .act = SLEAPC_ACT_SIGMOID,
                                    .weight = w0,
                                    .bias = b0},
                      "inner_sigmoid");
    int c1 = add_node(&g,
                      (sleapc_node){.op = SLEAPC_OP_CONV2D,
                                    .n_inputs = 1,
                                    .inputs = {c0},
                                    .c_in = 1,
                                    .c_out = 1,
                                    .kernel = 1,
                                    .weight = w1,
                                    .bias = b1},
                      "identity");
    CHECK_OK(sleapc__graph_add_output(&g, "AfterSigmoid", c1, 1));
    sleapc_backend_opts opts = {.n_threads = 2};
    sleapc_backend *be = NULL, *nb = NULL;
    sleapc_status st = sleapc__backend_create_from(f, &g, &opts, &be);
    /* Backends whose sigmoid inside the graph would not be the shared one
     * refuse such a graph, naming the node. */
    if (strcmp(f->name, "xnnpack") == 0 || strcmp(f->name, "vulkan") == 0) {
        CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED && !be, "%s: inner sigmoid: %s", f->name,
                  sleapc_status_str(st));
        CHECK_MSG(strstr(sleapc_last_error(), "inner_sigmoid") != NULL, "message: %s",
                  sleapc_last_error());
        sleapc__backend_destroy(be);
        sleapc__graph_clear(&g);
        return;
    }
    CHECK_OK(st);
    CHECK_OK(sleapc__backend_create_from(native_f, &g, &opts, &nb));
    const int64_t n = (int64_t)H * W;
    float *x = sleapc__malloc((size_t)n * sizeof *x);
    CHECK(x != NULL);
    sleapc_tensor_map got = {0}, ref = {0};
    if (be && nb && x) {
        for (int64_t j = 0; j < n; j++)
            x[j] = (float)j / 65536.0f;
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 1, H, W}, .data = x};
        CHECK_OK(sleapc__backend_forward(nb, &t, &ref));
        CHECK_OK(sleapc__backend_forward(be, &t, &got));
        const sleapc_tensor *a = output(&got, "AfterSigmoid", n);
        const sleapc_tensor *b = output(&ref, "AfterSigmoid", n);
        int64_t ones = 0;
        char what[64];
        snprintf(what, sizeof what, "%s inner sigmoid vs native", f->name);
        if (a && b)
            check_bitwise(a->data, b->data, n, what, &ones);
        CHECK(ones > 0);
    }
    sleapc__free(x);
    sleapc__backend_destroy(be);
    sleapc__backend_destroy(nb);
    sleapc__graph_clear(&g);
}

/* One model's class maps on every backend against native's. */
static void check_model(const char *model_rel, const char *input_rel)
{
    char model_dir[4096];
    snprintf(model_dir, sizeof model_dir, "%s", test_data_path(model_rel));
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(test_data_path(input_rel), &x));
    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(model_dir, &m));
    /* (B, n_samples=1, C, H, W) -> (B, C, H, W) */
    CHECK(!x.data || (x.ndim == 5 && x.shape[1] == 1));
    if (!m || !x.data || x.ndim != 5)
        goto done;
    for (int d = 1; d < 4; d++)
        x.shape[d] = x.shape[d + 1];
    x.ndim = 4;

    sleapc_backend_opts opts = {.n_threads = 2};
    sleapc_backend *nb = NULL;
    sleapc_tensor_map ref = {0};
    CHECK_OK(sleapc__backend_create_from(native_f, &m->graph, &opts, &nb));
    if (nb)
        CHECK_OK(sleapc__backend_forward(nb, &x, &ref));
    const sleapc_tensor *rc = sleapc__tensor_map_get(&ref, "ClassMapsHead");
    CHECK_MSG(rc != NULL, "%s: native gave no ClassMapsHead", model_rel);
    int64_t n = rc ? sleapc_tensor_numel(rc) : 0;
    int64_t native_ones = 0;
    for (int64_t i = 0; i < n; i++)
        native_ones += ((const float *)rc->data)[i] == 1.0f;
    /* The case is chosen because its class maps saturate. */
    CHECK_MSG(native_ones > 0, "%s: no class-map value is exactly 1", model_rel);

    for (int bi = 0; rc && bi < sleapc__backend_count(); bi++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(bi);
        if (f == native_f || f->score() <= 0)
            continue;
        sleapc_backend *be = NULL;
        sleapc_tensor_map got = {0};
        CHECK_OK(sleapc__backend_create_from(f, &m->graph, &opts, &be));
        if (be)
            CHECK_OK(sleapc__backend_forward(be, &x, &got));
        const sleapc_tensor *gc = be ? output(&got, "ClassMapsHead", n) : NULL;
        if (gc) {
            const float *a = gc->data, *b = rc->data;
            int64_t ones = 0, only_native = 0, only_other = 0, equal = 0;
            for (int64_t i = 0; i < n; i++) {
                ones += a[i] == 1.0f;
                only_native += b[i] == 1.0f && a[i] != 1.0f;
                only_other += a[i] == 1.0f && b[i] != 1.0f;
                equal += a[i] == b[i];
            }
            double err = test_rel_l2(a, b, n);
            printf("%s [%s]: %lld class-map values, %lld exactly 1 (native %lld), %.2f%% equal "
                   "to native, relative L2 %.2e\n",
                   model_rel, f->name, (long long)n, (long long)ones, (long long)native_ones,
                   100.0 * (double)equal / (double)n, err);
            CHECK_MSG(err <= REL_L2_TOL, "%s [%s]: relative L2 %.3g > %.0e", model_rel, f->name,
                      err, REL_L2_TOL);
            CHECK_MSG(only_native == 0, "%s [%s]: %lld values are 1 on native only", model_rel,
                      f->name, (long long)only_native);
            CHECK_MSG(only_other == 0, "%s [%s]: %lld values are 1 on %s only", model_rel, f->name,
                      (long long)only_other, f->name);
        }
        sleapc__backend_destroy(be);
    }
    sleapc__backend_destroy(nb);
done:
    sleapc__model_destroy(m);
    sleapc__free(x.data);
}

int main(void)
{
    int n_other = 0;
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (strcmp(f->name, "native") == 0)
            native_f = f;
        else if (f->score() > 0)
            n_other++;
    }
    CHECK(native_f != NULL);
    if (!native_f || n_other == 0) {
        printf("no backend besides native is built and usable here\n");
        return native_f ? 77 : test_finish();
    }
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (f != native_f && f->score() > 0) {
            check_exact_graph(f);
            check_inner_sigmoid(f);
        }
    }

    if (!test_data_dir()) {
        printf("no data folder: the model checks are skipped\n");
        return test_finish();
    }
    check_model("sleap-nn-assets/legacy_models/min_tracks_2node.UNet.bottomup_multiclass",
                "reference/legacy_multiclass_bottomup__centered_pair_f0000/"
                "multiclass_bottomup.input.npy");
    check_model("sleap-nn-assets/model_ckpts/minimal_instance_multiclass_bottomup",
                "reference/multiclass_bottomup__centered_pair_f0250/"
                "multiclass_bottomup.input.npy");
    return test_finish();
}
