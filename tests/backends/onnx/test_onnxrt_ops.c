/* The host interpreter's kernels on one synthetic graph whose outputs have
 * values fixed by the ONNX operator definitions (Python-style Mod, negative
 * Slice steps, Gather's negative indices, TopK's lower-index-first ties as in
 * ONNX Runtime, GridSample with align_corners=1, If branches, ...). The
 * expected numbers are the operators' definitions applied by hand. */
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "io/onnx/onnx_read.h"
#include "io/onnx_pb_writer.h"
#include "test_util.h"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum { T_FLOAT = 1, T_INT64 = 7, T_BOOL = 9 };

static void node(pb *g, const char *op, const char *const *ins, const char *const *outs, pb *attrs,
                 int n_attrs)
{
    pb n = onnx_node(op, outs[0], ins, outs, attrs, n_attrs);
    pb_sub(g, ONNX_GRAPH_NODE, &n);
}

static void floats(pb *g, const char *name, int ndim, const int64_t *dims, const float *v)
{
    pb t = onnx_float_tensor(name, ndim, dims, v);
    pb_sub(g, ONNX_GRAPH_INIT, &t);
}

static void ints(pb *g, const char *name, int ndim, const int64_t *dims, const int64_t *v)
{
    pb t = onnx_int64_tensor(name, ndim, dims, v);
    pb_sub(g, ONNX_GRAPH_INIT, &t);
}

static void output(pb *g, const char *name)
{
    pb v = onnx_value(name, T_FLOAT, 0, NULL);
    pb_sub(g, ONNX_GRAPH_OUTPUT, &v);
}

/* then: x + 1; else: x. */
static pb branch(bool then)
{
    pb g = {0};
    if (then) {
        float one = 1.0f;
        floats(&g, "one", 0, NULL, &one);
        node(&g, "Add", NAMES("x", "one"), NAMES("b_then"), NULL, 0);
    } else {
        node(&g, "Identity", NAMES("x"), NAMES("b_else"), NULL, 0);
    }
    output(&g, then ? "b_then" : "b_else");
    return g;
}

/* The graph, returning the named outputs (a tensor map holds at most 16). */
static pb build(const char *const *outs, int n_outs)
{
    pb g = {0}, a[2];
    pb in = onnx_value("x", T_FLOAT, 2, (int64_t[]){1, 4});
    pb_sub(&g, ONNX_GRAPH_INPUT, &in);
    ints(&g, "k2", 1, (int64_t[]){1}, (int64_t[]){2});
    ints(&g, "ax1", 1, (int64_t[]){1}, (int64_t[]){1});
    ints(&g, "ma", 1, (int64_t[]){3}, (int64_t[]){-7, 7, -7});
    ints(&g, "mb", 1, (int64_t[]){3}, (int64_t[]){3, -3, -3});
    ints(&g, "s_start", 1, (int64_t[]){1}, (int64_t[]){-1});
    ints(&g, "s_end", 1, (int64_t[]){1}, (int64_t[]){-10});
    ints(&g, "s_step", 1, (int64_t[]){1}, (int64_t[]){-2});
    floats(&g, "cf", 1, (int64_t[]){2}, (float[]){-1.7f, 2.9f});
    float thr = 2.5f, zero = 0.0f, pad_val = -5.0f;
    floats(&g, "thr", 0, NULL, &thr);
    floats(&g, "zero", 0, NULL, &zero);
    floats(&g, "pad_val", 0, NULL, &pad_val);
    ints(&g, "gi", 1, (int64_t[]){2}, (int64_t[]){-1, 0});
    ints(&g, "pads", 1, (int64_t[]){4}, (int64_t[]){0, -1, 0, 2});
    ints(&g, "r0", 0, NULL, (int64_t[]){0});
    ints(&g, "r7", 0, NULL, (int64_t[]){7});
    ints(&g, "r3", 0, NULL, (int64_t[]){3});
    floats(&g, "col", 2, (int64_t[]){2, 1}, (float[]){1, 2});
    ints(&g, "eshape", 1, (int64_t[]){2}, (int64_t[]){2, 3});
    floats(&g, "m23", 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    floats(&g, "z4", 1, (int64_t[]){4}, (float[]){0, 0, 0, 0});
    ints(&g, "si", 2, (int64_t[]){2, 1}, (int64_t[]){1, 3});
    floats(&g, "su", 1, (int64_t[]){2}, (float[]){5, 7});
    floats(&g, "img", 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4});
    floats(&g, "grid", 4, (int64_t[]){1, 1, 2, 2}, (float[]){0, 0, 1, -1});

    a[0] = onnx_attr_int("axis", -1);
    node(&g, "TopK", NAMES("x", "k2"), NAMES("topv", "topi"), a, 1);
    a[0] = onnx_attr_int("axis", 1);
    a[1] = onnx_attr_int("keepdims", 0);
    node(&g, "ArgMax", NAMES("x"), NAMES("am"), a, 2);
    node(&g, "ReduceSum", NAMES("x", "ax1"), NAMES("rs"), NULL, 0);
    float two = 2.0f;
    floats(&g, "two", 0, NULL, &two);
    node(&g, "Pow", NAMES("x", "two"), NAMES("pw"), NULL, 0);
    node(&g, "GlobalAveragePool", NAMES("img"), NAMES("gap"), NULL, 0);
    a[0] = onnx_attr_int("transB", 1);
    node(&g, "Gemm", NAMES("m23", "m23", "su"), NAMES("gm"), a, 1);
    node(&g, "Sub", NAMES("x", "thr"), NAMES("xs"), NULL, 0);
    node(&g, "Relu", NAMES("xs"), NAMES("rl"), NULL, 0);
    node(&g, "Flatten", NAMES("img"), NAMES("fl"), NULL, 0);
    node(&g, "Mod", NAMES("ma", "mb"), NAMES("mod"), NULL, 0);
    node(&g, "Slice", NAMES("x", "s_start", "s_end", "ax1", "s_step"), NAMES("sl"), NULL, 0);
    a[0] = onnx_attr_int("to", T_INT64);
    node(&g, "Cast", NAMES("cf"), NAMES("cast"), a, 1);
    node(&g, "Greater", NAMES("x", "thr"), NAMES("gt"), NULL, 0);
    node(&g, "Where", NAMES("gt", "x", "zero"), NAMES("wh"), NULL, 0);
    a[0] = onnx_attr_int("axis", 1);
    node(&g, "Gather", NAMES("x", "gi"), NAMES("ga"), a, 1);
    node(&g, "Pad", NAMES("x", "pads", "pad_val"), NAMES("pad"), NULL, 0);
    node(&g, "Range", NAMES("r0", "r7", "r3"), NAMES("rng"), NULL, 0);
    node(&g, "Expand", NAMES("col", "eshape"), NAMES("ex"), NULL, 0);
    node(&g, "Transpose", NAMES("m23"), NAMES("tr"), NULL, 0);
    node(&g, "ScatterND", NAMES("z4", "si", "su"), NAMES("sc"), NULL, 0);
    a[0] = onnx_attr_int("align_corners", 1);
    node(&g, "GridSample", NAMES("img", "grid"), NAMES("gs"), a, 1);
    a[0] = onnx_attr_int("keepdims", 0);
    node(&g, "ReduceMax", NAMES("x"), NAMES("mx"), a, 1);
    node(&g, "Greater", NAMES("mx", "thr"), NAMES("cond"), NULL, 0);
    pb then_g = branch(true), else_g = branch(false);
    pb attr_then = {0}, attr_else = {0};
    pb_str(&attr_then, 1, "then_branch");
    pb_sub(&attr_then, 6, &then_g);
    pb_int(&attr_then, 20, 5);
    pb_str(&attr_else, 1, "else_branch");
    pb_sub(&attr_else, 6, &else_g);
    pb_int(&attr_else, 20, 5);
    a[0] = attr_then;
    a[1] = attr_else;
    node(&g, "If", NAMES("cond"), NAMES("if"), a, 2);
    for (int i = 0; i < n_outs; i++)
        output(&g, outs[i]);
    return onnx_model(&g, 17);
}

static void check_f(const sleapc_tensor_map *m, const char *name, int n, const float *want)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(m, name);
    CHECK_MSG(t && t->dtype == SLEAPC_DTYPE_F32 && sleapc_tensor_numel(t) == n, "%s: type/size",
              name);
    for (int i = 0; t && i < n && sleapc_tensor_numel(t) == n; i++)
        CHECK_MSG(((const float *)t->data)[i] == want[i], "%s[%d] = %g, want %g", name, i,
                  ((const float *)t->data)[i], want[i]);
}

static void check_i(const sleapc_tensor_map *m, const char *name, int n, const int64_t *want)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(m, name);
    CHECK_MSG(t && t->dtype == SLEAPC_DTYPE_I64 && sleapc_tensor_numel(t) == n, "%s: type/size",
              name);
    for (int i = 0; t && i < n && sleapc_tensor_numel(t) == n; i++)
        CHECK_MSG(((const int64_t *)t->data)[i] == want[i], "%s[%d] = %lld, want %lld", name, i,
                  (long long)((const int64_t *)t->data)[i], (long long)want[i]);
}

static sleapc_onnxrt *plan(const char *const *outs, int n, sleapc_onnx_model **om)
{
    pb model = build(outs, n);
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnx_parse(model.d, model.n, "ops.onnx", om));
    free(model.d);
    if (*om)
        CHECK_OK(sleapc__onnxrt_create(*om, "native", 1, &rt));
    CHECK(rt && sleapc__onnxrt_n_segments(rt) == 0);
    return rt;
}

static bool run(sleapc_onnxrt *rt, float *x, sleapc_tensor_map *out)
{
    sleapc_tensor in = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {1, 4}, .data = x};
    sleapc_status st = rt ? sleapc__onnxrt_run(rt, &in, out) : SLEAPC_ERR_STATE;
    CHECK_OK(st);
    return st == SLEAPC_OK;
}

int main(void)
{
    float x[4] = {1, 3, 3, 2};
    sleapc_onnx_model *om = NULL;
    sleapc_tensor_map out = {0};
    sleapc_onnxrt *rt = plan(NAMES("topv", "topi", "am", "rs", "mod", "sl", "cast", "wh"), 8, &om);
    if (run(rt, x, &out)) {
        check_f(&out, "topv", 2, (float[]){3, 3});
        check_i(&out, "topi", 2, (int64_t[]){1, 2}); /* ties: lower index first */
        check_i(&out, "am", 1, (int64_t[]){1});      /* first maximum */
        check_f(&out, "rs", 1, (float[]){9});
        const sleapc_tensor *t = sleapc__tensor_map_get(&out, "rs");
        CHECK(t && t->ndim == 2 && t->shape[0] == 1 && t->shape[1] == 1); /* keepdims */
        check_i(&out, "mod", 3, (int64_t[]){2, -2, -1});                  /* sign of the divisor */
        check_f(&out, "sl", 2, (float[]){2, 3});                          /* x[3], x[1] */
        check_i(&out, "cast", 2, (int64_t[]){-1, 2});                     /* truncation */
        check_f(&out, "wh", 4, (float[]){0, 3, 3, 0});
    }
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);

    rt = plan(NAMES("ga", "pad", "rng", "ex", "tr", "sc", "gs", "if"), 8, &om);
    if (run(rt, x, &out)) {
        check_f(&out, "ga", 2, (float[]){2, 1});
        check_f(&out, "pad", 5, (float[]){3, 3, 2, -5, -5}); /* crop 1 left, pad 2 right */
        check_i(&out, "rng", 3, (int64_t[]){0, 3, 6});
        check_f(&out, "ex", 6, (float[]){1, 1, 1, 2, 2, 2});
        check_f(&out, "tr", 6, (float[]){1, 4, 2, 5, 3, 6});
        check_f(&out, "sc", 4, (float[]){0, 5, 0, 7});
        /* The centre of [[1,2],[3,4]] is their mean; (1,-1) is the top-right pixel. */
        check_f(&out, "gs", 2, (float[]){2.5f, 2});
        check_f(&out, "if", 4, (float[]){2, 4, 4, 3});
    }
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);

    /* An embedding export's host ops: Pow (its standardize and GeM pool),
     * GlobalAveragePool (the mean over H, W, kept as (1, 1, 1, 1)), and
     * Flatten, Gemm, Relu fed by the host. */
    rt = plan(NAMES("pw", "gap", "gm", "rl", "fl", "if"), 6, &om);
    if (run(rt, x, &out)) {
        check_f(&out, "pw", 4, (float[]){1, 9, 9, 4});
        check_f(&out, "gap", 1, (float[]){2.5f});
        const sleapc_tensor *t = sleapc__tensor_map_get(&out, "gap");
        CHECK(t && t->ndim == 4 && t->shape[2] == 1 && t->shape[3] == 1);
        check_f(&out, "gm", 4, (float[]){19, 39, 37, 84}); /* m23 m23^T + (5, 7) */
        check_f(&out, "rl", 4, (float[]){0, 0.5f, 0.5f, 0});
        check_f(&out, "fl", 4, (float[]){1, 2, 3, 4});
        t = sleapc__tensor_map_get(&out, "fl");
        CHECK(t && t->ndim == 2 && t->shape[0] == 1 && t->shape[1] == 4);
    }
    /* The other branch, on a second run of the same plan. */
    float y[4] = {1, 2, 0, 1};
    if (run(rt, y, &out))
        check_f(&out, "if", 4, y);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);

    /* More outputs than a tensor map holds: refused when planning. */
    const char *const many[] = {"topv", "topi", "am", "rs", "mod", "sl", "cast", "wh", "ga",
                                "pad",  "rng",  "ex", "tr", "sc",  "gs", "if",   "pw"};
    pb model = build(many, 17);
    CHECK_OK(sleapc__onnx_parse(model.d, model.n, "ops.onnx", &om));
    free(model.d);
    rt = NULL;
    CHECK(om && sleapc__onnxrt_create(om, "native", 1, &rt) == SLEAPC_ERR_UNSUPPORTED && !rt);
    sleapc__onnx_destroy(om);
    return test_finish();
}
