/* The host kernels sleap-nn 0.3.5's exports added (GreaterOrEqual,
 * GatherElements, ReduceL2) and the forms of GridSample and If those graphs
 * use, on small graphs whose expected outputs follow from the ONNX operator
 * definitions by hand: NumPy broadcasting, negative axes and indices,
 * keepdims, bilinear sampling with both align_corners settings and zeros
 * padding, and an If whose condition picks a Constant + Squeeze branch or
 * an Identity one. Bad indices are errors naming the node, never a crash. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "io/onnx/onnx_read.h"
#include "io/onnx_pb_writer.h"
#include "test_util.h"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum { T_FLOAT = 1, T_INT64 = 7 };

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

/* A graph over the float input x (1, 4) with the nodes `add` puts in it;
 * outs are its outputs. */
static sleapc_onnxrt *plan(void (*add)(pb *g), const char *const *outs, sleapc_onnx_model **om)
{
    pb g = {0};
    pb in = onnx_value("x", T_FLOAT, 2, (int64_t[]){1, 4});
    pb_sub(&g, ONNX_GRAPH_INPUT, &in);
    add(&g);
    for (int i = 0; outs[i]; i++)
        output(&g, outs[i]);
    pb model = onnx_model(&g, 17);
    sleapc_onnxrt *rt = NULL;
    *om = NULL;
    CHECK_OK(sleapc__onnx_parse(model.d, model.n, "ops035.onnx", om));
    free(model.d);
    if (*om)
        CHECK_OK(sleapc__onnxrt_create(*om, "native", 1, &rt));
    return rt;
}

static sleapc_status run(sleapc_onnxrt *rt, const float *x, sleapc_tensor_map *out)
{
    sleapc_tensor in = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {1, 4}, .data = (void *)x};
    return rt ? sleapc__onnxrt_run(rt, &in, out) : SLEAPC_ERR_STATE;
}

/* Output `name`: dtype, shape, then values (floats within tol). */
static void check(const sleapc_tensor_map *m, const char *name, sleapc_dtype dt, int ndim,
                  const int64_t *shape, const double *want, double tol)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(m, name);
    bool ok = t && t->dtype == dt && t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = t->shape[i] == shape[i];
    CHECK_MSG(ok, "%s: dtype or shape", name);
    for (int64_t i = 0; ok && i < sleapc_tensor_numel(t); i++) {
        double v = dt == SLEAPC_DTYPE_F32   ? ((const float *)t->data)[i]
                   : dt == SLEAPC_DTYPE_I64 ? (double)((const int64_t *)t->data)[i]
                                            : ((const uint8_t *)t->data)[i];
        CHECK_MSG(fabs(v - want[i]) <= tol, "%s[%lld] = %g, want %g", name, (long long)i, v,
                  want[i]);
    }
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const double[]){__VA_ARGS__})

/* GreaterOrEqual / LessOrEqual: a (2, 1) column against a (3,) row broadcast
 * to (2, 3), in float and int64; NaN compares false. */
static void add_compare(pb *g)
{
    floats(g, "col", 2, SHAPE(2, 1), (float[]){1, 2});
    floats(g, "row", 1, SHAPE(3), (float[]){1, 2, 3});
    ints(g, "icol", 2, SHAPE(2, 1), (int64_t[]){1, 2});
    ints(g, "irow", 1, SHAPE(3), (int64_t[]){1, 2, 3});
    floats(g, "nan", 0, NULL, (float[]){NAN});
    node(g, "GreaterOrEqual", NAMES("col", "row"), NAMES("ge"), NULL, 0);
    node(g, "LessOrEqual", NAMES("col", "row"), NAMES("le"), NULL, 0);
    node(g, "GreaterOrEqual", NAMES("icol", "irow"), NAMES("ige"), NULL, 0);
    node(g, "LessOrEqual", NAMES("irow", "icol"), NAMES("ile"), NULL, 0);
    node(g, "GreaterOrEqual", NAMES("x", "nan"), NAMES("ge_nan"), NULL, 0);
}

static void add_compare_bad(pb *g)
{
    floats(g, "row", 1, SHAPE(3), (float[]){1, 2, 3});
    node(g, "GreaterOrEqual", NAMES("x", "row"), NAMES("ge_bad"), NULL, 0);
}

static void test_compare(void)
{
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(add_compare, NAMES("ge", "le", "ige", "ile", "ge_nan"), &om);
    sleapc_tensor_map out = {0};
    const float x[4] = {1, 3, 3, 2};
    CHECK_OK(run(rt, x, &out));
    check(&out, "ge", SLEAPC_DTYPE_U8, 2, SHAPE(2, 3), VALS(1, 0, 0, 1, 1, 0), 0);
    check(&out, "le", SLEAPC_DTYPE_U8, 2, SHAPE(2, 3), VALS(1, 1, 1, 0, 1, 1), 0);
    check(&out, "ige", SLEAPC_DTYPE_U8, 2, SHAPE(2, 3), VALS(1, 0, 0, 1, 1, 0), 0);
    /* irow <= icol is icol >= irow. */
    check(&out, "ile", SLEAPC_DTYPE_U8, 2, SHAPE(2, 3), VALS(1, 0, 0, 1, 1, 0), 0);
    check(&out, "ge_nan", SLEAPC_DTYPE_U8, 2, SHAPE(1, 4), VALS(0, 0, 0, 0), 0);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);

    /* (1, 4) against (3,) does not broadcast: an error naming the node. */
    rt = plan(add_compare_bad, NAMES("ge_bad"), &om);
    CHECK(run(rt, x, &out) == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "ge_bad"));
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* GatherElements: the spec's example (axis 1), negative axis and indices,
 * indices smaller than the data along the other axis, axis 0. */
static void add_gather(pb *g)
{
    floats(g, "d22", 2, SHAPE(2, 2), (float[]){1, 2, 3, 4});
    ints(g, "i22", 2, SHAPE(2, 2), (int64_t[]){0, 0, 1, 0});
    floats(g, "d23", 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
    ints(g, "ineg", 2, SHAPE(2, 2), (int64_t[]){-1, 0, 1, -3});
    ints(g, "i13", 2, SHAPE(1, 3), (int64_t[]){1, 0, -1});
    pb a[1];
    a[0] = onnx_attr_int("axis", 1);
    node(g, "GatherElements", NAMES("d22", "i22"), NAMES("spec"), a, 1);
    a[0] = onnx_attr_int("axis", -1);
    node(g, "GatherElements", NAMES("d23", "ineg"), NAMES("neg"), a, 1);
    node(g, "GatherElements", NAMES("d23", "i13"), NAMES("ax0"), NULL, 0);
}

static void add_gather_out_of_range(pb *g)
{
    floats(g, "d22", 2, SHAPE(2, 2), (float[]){1, 2, 3, 4});
    ints(g, "i12", 2, SHAPE(1, 2), (int64_t[]){2, 0});
    pb a = onnx_attr_int("axis", 1);
    node(g, "GatherElements", NAMES("d22", "i12"), NAMES("out_of_range"), &a, 1);
}

static void add_gather_too_tall(pb *g)
{
    floats(g, "d23", 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
    ints(g, "i32", 2, SHAPE(3, 2), (int64_t[]){0, 0, 0, 0, 0, 0});
    pb a = onnx_attr_int("axis", 1);
    node(g, "GatherElements", NAMES("d23", "i32"), NAMES("too_tall"), &a, 1);
}

static void test_gather_elements(void)
{
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(add_gather, NAMES("spec", "neg", "ax0"), &om);
    sleapc_tensor_map out = {0};
    const float x[4] = {0};
    CHECK_OK(run(rt, x, &out));
    /* out[i][j] = data[i][indices[i][j]]. */
    check(&out, "spec", SLEAPC_DTYPE_F32, 2, SHAPE(2, 2), VALS(1, 1, 4, 3), 0);
    /* Row 0 takes columns -1 (2) and 0; row 1 columns 1 and -3 (0). */
    check(&out, "neg", SLEAPC_DTYPE_F32, 2, SHAPE(2, 2), VALS(3, 1, 5, 4), 0);
    /* out[0][j] = data[indices[0][j]][j]: rows 1, 0, -1 (1). */
    check(&out, "ax0", SLEAPC_DTYPE_F32, 2, SHAPE(1, 3), VALS(4, 2, 6), 0);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);

    rt = plan(add_gather_out_of_range, NAMES("out_of_range"), &om);
    CHECK(run(rt, x, &out) == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "out_of_range") &&
          strstr(sleapc_last_error(), "index 2"));
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    /* Indices taller than the data on a non-gathered axis. */
    rt = plan(add_gather_too_tall, NAMES("too_tall"), &om);
    CHECK(run(rt, x, &out) == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "too_tall"));
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* ReduceL2 = sqrt(sum(x^2)) over axes given as an attribute (opset <= 17)
 * or an input (opset 18), keepdims on and off, and over every axis. */
static void add_reduce(pb *g)
{
    floats(g, "m", 2, SHAPE(2, 3), (float[]){3, 4, 0, 1, -2, 2});
    ints(g, "ax0", 1, SHAPE(1), (int64_t[]){0});
    pb a[2];
    a[0] = onnx_attr_ints("axes", 1, (int64_t[]){-1});
    a[1] = onnx_attr_int("keepdims", 1);
    node(g, "ReduceL2", NAMES("m"), NAMES("keep"), a, 2);
    a[0] = onnx_attr_ints("axes", 1, (int64_t[]){1});
    a[1] = onnx_attr_int("keepdims", 0);
    node(g, "ReduceL2", NAMES("m"), NAMES("drop"), a, 2);
    a[0] = onnx_attr_int("keepdims", 0);
    node(g, "ReduceL2", NAMES("m", "ax0"), NAMES("axes_in"), a, 1);
    node(g, "ReduceL2", NAMES("m"), NAMES("all"), NULL, 0);
    node(g, "ReduceL2", NAMES("x"), NAMES("of_x"), NULL, 0);
}

static void test_reduce_l2(void)
{
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(add_reduce, NAMES("keep", "drop", "axes_in", "all", "of_x"), &om);
    sleapc_tensor_map out = {0};
    const float x[4] = {1, -1, 1, -1};
    CHECK_OK(run(rt, x, &out));
    check(&out, "keep", SLEAPC_DTYPE_F32, 2, SHAPE(2, 1), VALS(5, 3), 0);
    check(&out, "drop", SLEAPC_DTYPE_F32, 1, SHAPE(2), VALS(5, 3), 0);
    check(&out, "axes_in", SLEAPC_DTYPE_F32, 1, SHAPE(3), VALS(sqrt(10.0), sqrt(20.0), 2), 1e-6);
    /* No axes: every axis, kept as 1s. */
    check(&out, "all", SLEAPC_DTYPE_F32, 2, SHAPE(1, 1), VALS(sqrt(34.0)), 1e-6);
    check(&out, "of_x", SLEAPC_DTYPE_F32, 2, SHAPE(1, 1), VALS(2), 0);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* GridSample, bilinear with zeros padding, on [[1, 2], [3, 4]] at (x, y):
 * align_corners=1 maps -1/+1 to the corner pixels' centres, 0 to their
 * edges. Points: the centre, the top-left corner, and a point beyond the
 * right edge (half of it padding). */
static void add_grid(pb *g)
{
    floats(g, "img", 4, SHAPE(1, 1, 2, 2), (float[]){1, 2, 3, 4});
    floats(g, "grid", 4, SHAPE(1, 1, 3, 2), (float[]){0, 0, -1, -1, 1.5f, 0});
    pb a[3];
    a[0] = onnx_attr_int("align_corners", 1);
    a[1] = onnx_attr_str("mode", "bilinear");
    a[2] = onnx_attr_str("padding_mode", "zeros");
    node(g, "GridSample", NAMES("img", "grid"), NAMES("ac1"), a, 3);
    node(g, "GridSample", NAMES("img", "grid"), NAMES("ac0"), NULL, 0);
}

static void test_grid_sample(void)
{
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(add_grid, NAMES("ac1", "ac0"), &om);
    sleapc_tensor_map out = {0};
    const float x[4] = {0};
    CHECK_OK(run(rt, x, &out));
    /* align_corners=1: pixel = (g + 1) / 2 * (size - 1). (1.5, 0) is pixel
     * (1.25, 0.5): 3/4 of columns 1 (2 and 4) and 1/4 of column 2 (padding),
     * rows half and half: 0.75 * 3 = 2.25. */
    check(&out, "ac1", SLEAPC_DTYPE_F32, 4, SHAPE(1, 1, 1, 3), VALS(2.5, 1, 2.25), 1e-6);
    /* align_corners=0: pixel = ((g + 1) * size - 1) / 2. (-1, -1) is pixel
     * (-0.5, -0.5): a quarter of pixel (0, 0). (1.5, 0) is (2, 0.5): column
     * 2, all padding. */
    check(&out, "ac0", SLEAPC_DTYPE_F32, 4, SHAPE(1, 1, 1, 3), VALS(2.5, 0.25, 0), 1e-6);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* A branch: then = Squeeze(x, Constant [0]), else = Identity(x), as 0.3.5's
 * multi-class bottom-up graph drops a batch axis of 1. */
static pb branch(bool then)
{
    pb g = {0};
    if (then) {
        pb t = onnx_int64_tensor("", 1, SHAPE(1), (int64_t[]){0});
        pb a = onnx_attr_tensor("value", &t);
        node(&g, "Constant", NULL, NAMES("axes0"), &a, 1);
        node(&g, "Squeeze", NAMES("x", "axes0"), NAMES("b_then"), NULL, 0);
    } else {
        node(&g, "Identity", NAMES("x"), NAMES("b_else"), NULL, 0);
    }
    output(&g, then ? "b_then" : "b_else");
    return g;
}

/* cond = (max(x) >= 2), computed from the input so both runs of one plan
 * take different branches. */
static void add_if(pb *g)
{
    floats(g, "two", 0, NULL, (float[]){2});
    pb a[2];
    a[0] = onnx_attr_int("keepdims", 0);
    node(g, "ReduceMax", NAMES("x"), NAMES("mx"), a, 1);
    node(g, "GreaterOrEqual", NAMES("mx", "two"), NAMES("cond"), NULL, 0);
    pb then_g = branch(true), else_g = branch(false);
    a[0] = (pb){0};
    pb_str(&a[0], 1, "then_branch");
    pb_sub(&a[0], 6, &then_g);
    pb_int(&a[0], 20, 5);
    a[1] = (pb){0};
    pb_str(&a[1], 1, "else_branch");
    pb_sub(&a[1], 6, &else_g);
    pb_int(&a[1], 20, 5);
    node(g, "If", NAMES("cond"), NAMES("if"), a, 2);
}

static void test_if(void)
{
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(add_if, NAMES("if"), &om);
    sleapc_tensor_map out = {0};
    const float big[4] = {1, 2, 0, 1}, small[4] = {1, 0, 0, 1};
    CHECK_OK(run(rt, big, &out));
    check(&out, "if", SLEAPC_DTYPE_F32, 1, SHAPE(4), VALS(1, 2, 0, 1), 0);
    CHECK_OK(run(rt, small, &out));
    check(&out, "if", SLEAPC_DTYPE_F32, 2, SHAPE(1, 4), VALS(1, 0, 0, 1), 0);
    CHECK_OK(run(rt, big, &out));
    check(&out, "if", SLEAPC_DTYPE_F32, 1, SHAPE(4), VALS(1, 2, 0, 1), 0);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

int main(void)
{
    test_compare();
    test_gather_elements();
    test_reduce_l2();
    test_grid_sample();
    test_if();
    return test_finish();
}
