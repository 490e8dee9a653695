/* The baked-graph runner on bad input: inputs that do not match the graph,
 * hostile synthetic graphs (huge shapes, out-of-range indices, division by
 * zero, unknown ops), the single-instance export with flipped bytes in its
 * node list, and failed allocations while planning and running. Each must
 * end in a clean status (the sanitizer build checks "clean"). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "core/alloc.h"
#include "io/npy/npy_file.h"
#include "io/onnx/onnx_read.h"
#include "io/onnx_pb_writer.h"
#include "test_util.h"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum { T_FLOAT = 1, T_INT64 = 7 };

static uint32_t rng_state = 777u;

static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* Plan and run a graph of one node `op` on x (float (1,4)) and the int64
 * constant `k`; returns the first failing status. */
static sleapc_status one_node(const char *op, const int64_t *k, int nk, pb *attr)
{
    pb g = {0};
    pb in = onnx_value("x", T_FLOAT, 2, (int64_t[]){1, 4});
    pb_sub(&g, ONNX_GRAPH_INPUT, &in);
    pb t = onnx_int64_tensor("k", 1, (int64_t[]){nk}, k);
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    pb n = onnx_node(op, "hostile", NAMES("x", "k"), NAMES("y"), attr, attr ? 1 : 0);
    pb_sub(&g, ONNX_GRAPH_NODE, &n);
    pb out = onnx_value("y", T_FLOAT, 0, NULL);
    pb_sub(&g, ONNX_GRAPH_OUTPUT, &out);
    pb model = onnx_model(&g, 17);
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = NULL;
    sleapc_status st = sleapc__onnx_parse(model.d, model.n, "hostile.onnx", &om);
    free(model.d);
    if (!st)
        st = sleapc__onnxrt_create(om, "native", 1, &rt);
    float x[4] = {1, 2, 3, 4};
    sleapc_tensor xt = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {1, 4}, .data = x};
    sleapc_tensor_map res = {0};
    if (!st)
        st = sleapc__onnxrt_run(rt, &xt, &res);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    return st;
}

static void check_hostile_graphs(void)
{
    struct {
        const char *op;
        int64_t k[4];
        int nk;
        sleapc_status want;
        const char *text;
    } cases[] = {
        /* 2^40 elements. */
        {"Expand", {1 << 20, 1 << 20}, 2, SLEAPC_ERR_FORMAT, "hostile"},
        {"Reshape", {-1, -1}, 2, SLEAPC_ERR_FORMAT, "two -1"},
        {"Reshape", {3, 3}, 2, SLEAPC_ERR_FORMAT, "cannot take"},
        {"Gather", {4}, 1, SLEAPC_ERR_FORMAT, "out of"},
        {"Tile", {1, 2}, 2, SLEAPC_ERR_UNSUPPORTED, "(Tile) is not supported"},
        {"Slice", {0}, 1, SLEAPC_ERR_FORMAT, "missing"},
        {"TopK", {5}, 1, SLEAPC_ERR_FORMAT, "expects 2 inputs, 2 outputs"},
        /* sleap-nn 0.3.5's ops: indices of another rank, mixed types, a bad axis. */
        {"GatherElements", {0}, 1, SLEAPC_ERR_FORMAT, "indices of rank 1"},
        {"GreaterOrEqual", {0}, 1, SLEAPC_ERR_FORMAT, "types"},
        {"ReduceL2", {5}, 1, SLEAPC_ERR_FORMAT, "axis 5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sleapc_status st = one_node(cases[i].op, cases[i].k, cases[i].nk, NULL);
        CHECK_MSG(st == cases[i].want && strstr(sleapc_last_error(), cases[i].text), "%s: %s: %s",
                  cases[i].op, sleapc_status_str(st), sleapc_last_error());
    }
    /* Gather on axis 1 of a (1, 4) input: index 4 is out of range. */
    pb axis = onnx_attr_int("axis", 1);
    sleapc_status st = one_node("Gather", (int64_t[]){4}, 1, &axis);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "index 4"), "%s",
              sleapc_last_error());
    /* ConstantOfShape with a huge shape stops at the host-memory budget. */
    axis = onnx_attr_int("unused", 0);
    pb g = {0};
    pb in = onnx_value("x", T_FLOAT, 2, (int64_t[]){1, 4});
    pb_sub(&g, ONNX_GRAPH_INPUT, &in);
    pb t = onnx_int64_tensor("k", 1, (int64_t[]){2}, (int64_t[]){1 << 14, 1 << 14});
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    pb n = onnx_node("ConstantOfShape", "big", NAMES("k"), NAMES("y"), &axis, 1);
    pb_sub(&g, ONNX_GRAPH_NODE, &n);
    pb out = onnx_value("y", T_FLOAT, 0, NULL);
    pb_sub(&g, ONNX_GRAPH_OUTPUT, &out);
    pb model = onnx_model(&g, 17);
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnx_parse(model.d, model.n, "big.onnx", &om));
    free(model.d);
    if (om)
        CHECK_OK(sleapc__onnxrt_create(om, "native", 1, &rt));
    float x[4] = {0};
    sleapc_tensor xt = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {1, 4}, .data = x};
    sleapc_tensor_map res = {0};
    st = rt ? sleapc__onnxrt_run(rt, &xt, &res) : SLEAPC_ERR_STATE;
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "host memory"), "%s",
              sleapc_last_error());
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* Inputs the single-instance export does not take. */
static void check_bad_inputs(sleapc_onnxrt *rt, const sleapc_tensor *good)
{
    sleapc_tensor_map out = {0};
    sleapc_tensor x = *good;
    x.dtype = SLEAPC_DTYPE_F32;
    CHECK(sleapc__onnxrt_run(rt, &x, &out) == SLEAPC_ERR_INVALID_ARG);
    x = *good;
    x.ndim = 3;
    CHECK(sleapc__onnxrt_run(rt, &x, &out) == SLEAPC_ERR_INVALID_ARG);
    x = *good;
    x.shape[1] = 1; /* the graph declares 3 channels */
    CHECK(sleapc__onnxrt_run(rt, &x, &out) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__onnxrt_run(rt, NULL, &out) == SLEAPC_ERR_INVALID_ARG);
    /* Still usable afterwards. */
    CHECK_OK(sleapc__onnxrt_run(rt, good, &out));
    CHECK(sleapc__tensor_map_get(&out, "peaks") != NULL);
}

/* Flipped bytes in the node list (the first 9 KB; the weights follow) and in
 * the graph's inputs and outputs near the end. */
static void check_flipped(const uint8_t *good, size_t size, const sleapc_tensor *x)
{
    uint8_t *buf = malloc(size);
    int n_planned = 0;
    for (int it = 0; it < 120; it++) {
        memcpy(buf, good, size);
        for (int k = 0; k < 1 + (int)(rng() % 3); k++) {
            size_t at = it % 4 == 3 ? size - 1 - rng() % 5000 : 64 + rng() % 9000;
            buf[at] ^= (uint8_t)(1u << (rng() % 8));
        }
        sleapc_onnx_model *om = NULL;
        sleapc_onnxrt *rt = NULL;
        sleapc_status st = sleapc__onnx_parse(buf, size, "flipped.onnx", &om);
        if (!st)
            st = sleapc__onnxrt_create(om, "native", 1, &rt);
        if (!st) {
            n_planned++;
            sleapc_tensor_map out = {0};
            st = sleapc__onnxrt_run(rt, x, &out);
        }
        CHECK_MSG(st == SLEAPC_OK || st == SLEAPC_ERR_FORMAT || st == SLEAPC_ERR_UNSUPPORTED ||
                      st == SLEAPC_ERR_INVALID_ARG,
                  "%s: %s", sleapc_status_str(st), sleapc_last_error());
        sleapc__onnxrt_destroy(rt);
        sleapc__onnx_destroy(om);
    }
    free(buf);
    CHECK_MSG(n_planned > 10, "only %d of the flipped graphs got to run", n_planned);
}

/* Every allocation of planning failing in turn: NOMEM, nothing leaked. The
 * graph is host-only (the backends' own creation is tested with them). */
static void check_plan_out_of_memory(void)
{
    pb g = {0};
    pb in = onnx_value("x", T_FLOAT, 2, (int64_t[]){1, 4});
    pb_sub(&g, ONNX_GRAPH_INPUT, &in);
    pb t = onnx_int64_tensor("k", 1, (int64_t[]){1}, (int64_t[]){2});
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    pb n = onnx_node("TopK", "topk", NAMES("x", "k"), NAMES("v", "i"), NULL, 0);
    pb_sub(&g, ONNX_GRAPH_NODE, &n);
    n = onnx_node("Shape", "shape", NAMES("v"), NAMES("s"), NULL, 0);
    pb_sub(&g, ONNX_GRAPH_NODE, &n);
    pb out = onnx_value("s", T_INT64, 0, NULL);
    pb_sub(&g, ONNX_GRAPH_OUTPUT, &out);
    out = onnx_value("i", T_INT64, 0, NULL);
    pb_sub(&g, ONNX_GRAPH_OUTPUT, &out);
    pb model = onnx_model(&g, 17);
    sleapc_onnx_model *om = NULL;
    CHECK_OK(sleapc__onnx_parse(model.d, model.n, "small.onnx", &om));
    free(model.d);
    int n_fail = 0;
    sleapc_onnxrt *rt = NULL;
    for (int64_t k = 1; k < 10000 && om && !rt; k++) {
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__onnxrt_create(om, "native", 1, &rt);
        sleapc__alloc_fail_after(0);
        if (st) {
            n_fail++;
            CHECK_MSG(st == SLEAPC_ERR_NOMEM && !rt, "plan, allocation %lld: %s", (long long)k,
                      sleapc_last_error());
            if (st != SLEAPC_ERR_NOMEM)
                break;
        }
    }
    CHECK(rt && n_fail > 5);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* Every allocation of a run (host tensors, the backend's buffers) failing
 * in turn: NOMEM, nothing leaked, and the next run works. */
static void check_run_out_of_memory(const sleapc_onnx_model *om, const sleapc_tensor *x)
{
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnxrt_create(om, "native", 1, &rt));
    int n_fail = 0;
    for (int64_t k = 1; k < 100000 && rt; k++) {
        sleapc_tensor_map out = {0};
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__onnxrt_run(rt, x, &out);
        sleapc__alloc_fail_after(0);
        if (!st)
            break;
        n_fail++;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "run, allocation %lld: %s", (long long)k,
                  sleapc_last_error());
        if (st != SLEAPC_ERR_NOMEM)
            break;
    }
    CHECK(n_fail > 10);
    sleapc__onnxrt_destroy(rt);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    check_hostile_graphs();
    check_plan_out_of_memory();
    test_require_data();
    size_t size = 0;
    uint8_t *good = test_read_file(test_data_path("onnx/single_instance/model.onnx"), &size);
    CHECK(good && size > 20000);
    sleapc_onnx_model *om = NULL;
    if (good)
        CHECK_OK(sleapc__onnx_parse(good, size, "single_instance.onnx", &om));
    /* The first case's input. */
    char *names[64];
    int n = 0;
    DIR *d = opendir(test_data_path("onnx/single_instance/cases"));
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    char path[4096];
    snprintf(path, sizeof path, "%s", test_data_path("onnx/single_instance/cases"));
    size_t len = strlen(path);
    snprintf(path + len, sizeof path - len, "/%s/input.npy", n ? names[0] : "?");
    for (int i = 0; i < n; i++)
        free(names[i]);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_onnxrt *rt = NULL;
    if (om && x.data)
        CHECK_OK(sleapc__onnxrt_create(om, "native", 1, &rt));
    if (rt) {
        check_bad_inputs(rt, &x);
        check_flipped(good, size, &x);
        check_run_out_of_memory(om, &x);
    }
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    free(x.data);
    free(good);
    return test_finish();
}
