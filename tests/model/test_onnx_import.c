/* The ONNX importer on small synthetic graphs built here: the uint8
 * normalisation prefix, fused activations, a traced resize-to-skip, the
 * class-vector tail, transposed-conv placements, and what it must refuse.
 * Numeric checks compare the native backend with a direct computation in
 * double; 1e-5 absolute is float32 rounding over at most 18 products of
 * values of order 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "io/onnx/onnx_read.h"
#include "io/onnx_pb_writer.h"
#include "model/from_onnx.h"
#include "test_util.h"

#define ABS_TOL 1e-5

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum { T_FLOAT = 1, T_UINT8 = 2, T_INT64 = 7 };

static void add_node(pb *g, const char *op, const char *name, const char *const *ins,
                     const char *const *outs, pb *attrs, int n_attrs)
{
    pb n = onnx_node(op, name, ins, outs, attrs, n_attrs);
    pb_sub(g, ONNX_GRAPH_NODE, &n);
}

static void add_floats(pb *g, const char *name, int ndim, const int64_t *dims, const float *v)
{
    pb t = onnx_float_tensor(name, ndim, dims, v);
    pb_sub(g, ONNX_GRAPH_INIT, &t);
}

static void add_ints(pb *g, const char *name, int n, const int64_t *v)
{
    int64_t dims[1] = {n};
    pb t = onnx_int64_tensor(name, n < 0 ? 0 : 1, dims, v);
    pb_sub(g, ONNX_GRAPH_INIT, &t);
}

static void add_io(pb *g, int field, const char *name, int elem, int ndim, const int64_t *dims)
{
    pb v = onnx_value(name, elem, ndim, dims);
    pb_sub(g, field, &v);
}

/* Deterministic weights in [-1, 1]. */
static void fill(float *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = (float)(((i * 7919 + seed * 104729) % 2001) - 1000) / 1000.0f;
}

typedef struct imported {
    sleapc_onnx_model *om;
    sleapc_weights w;
    sleapc_graph g;
} imported;

/* Wrap graph (consumed) in a model, parse and import it. */
static sleapc_status import(pb *graph, const sleapc_head_spec *heads, int n_heads, imported *out)
{
    memset(out, 0, sizeof *out);
    pb model = onnx_model(graph, 17);
    sleapc_status st = sleapc__onnx_parse(model.d, model.n, "synthetic.onnx", &out->om);
    free(model.d);
    if (!st)
        st = sleapc__graph_from_onnx(out->om, heads, n_heads, &out->w, &out->g);
    return st;
}

static void release(imported *im)
{
    sleapc__graph_clear(&im->g);
    sleapc__weights_clear(&im->w);
    sleapc__onnx_destroy(im->om);
    memset(im, 0, sizeof *im);
}

/* Run g on x with the native backend; the output named `name`. */
static const sleapc_tensor *run(const sleapc_graph *g, const sleapc_tensor *x, const char *name,
                                sleapc_backend **be, sleapc_tensor_map *out)
{
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create("native", g, &opts, be));
    if (!*be)
        return NULL;
    CHECK_OK(sleapc__backend_forward(*be, x, out));
    return sleapc__tensor_map_get(out, name);
}

/* uint8 image -> Cast -> Div 255 -> Conv 3x3 + Relu -> Conv 1x1 + Sigmoid. */
static void test_prefix_and_fusion(void)
{
    enum { H = 5, W = 6 };
    float w1[2 * 9], b1[2], w2[2], b2[1], c255 = 255.0f;
    fill(w1, 18, 1);
    fill(b1, 2, 2);
    fill(w2, 2, 3);
    fill(b2, 1, 4);
    pb g = {0};
    add_io(&g, ONNX_GRAPH_INPUT, "image", T_UINT8, 4, (int64_t[]){-1, 1, -1, -1});
    add_io(&g, ONNX_GRAPH_OUTPUT, "Out", T_FLOAT, 0, NULL);
    add_floats(&g, "w1", 4, (int64_t[]){2, 1, 3, 3}, w1);
    add_floats(&g, "b1", 1, (int64_t[]){2}, b1);
    add_floats(&g, "w2", 4, (int64_t[]){1, 2, 1, 1}, w2);
    add_floats(&g, "b2", 1, (int64_t[]){1}, b2);
    pb t = onnx_float_tensor("", 0, NULL, &c255);
    pb a[4] = {onnx_attr_tensor("value", &t)};
    add_node(&g, "Constant", "k255", NULL, NAMES("c255"), a, 1);
    a[0] = onnx_attr_int("to", T_FLOAT);
    add_node(&g, "Cast", "cast", NAMES("image"), NAMES("xf"), a, 1);
    add_node(&g, "Div", "div", NAMES("xf", "c255"), NAMES("xn"), NULL, 0);
    a[0] = onnx_attr_ints("kernel_shape", 2, (int64_t[]){3, 3});
    a[1] = onnx_attr_ints("pads", 4, (int64_t[]){1, 1, 1, 1});
    a[2] = onnx_attr_ints("strides", 2, (int64_t[]){1, 1});
    a[3] = onnx_attr_int("group", 1);
    add_node(&g, "Conv", "conv1", NAMES("xn", "w1", "b1"), NAMES("c1"), a, 4);
    add_node(&g, "Relu", "relu1", NAMES("c1"), NAMES("r1"), NULL, 0);
    a[0] = onnx_attr_str("auto_pad", "SAME_UPPER");
    add_node(&g, "Conv", "conv2", NAMES("r1", "w2", "b2"), NAMES("c2"), a, 1);
    add_node(&g, "Sigmoid", "sig", NAMES("c2"), NAMES("Out"), NULL, 0);

    imported im;
    CHECK_OK(import(&g, NULL, 0, &im));
    CHECK(im.g.n_nodes == 3 && im.g.in_channels == 1 && im.g.max_stride == 1);
    CHECK(im.w.n == 4); /* weights and biases only: the 255 is folded away */
    if (im.g.n_nodes == 3) {
        CHECK(im.g.nodes[1].op == SLEAPC_OP_CONV2D && im.g.nodes[1].act == SLEAPC_ACT_RELU);
        CHECK(im.g.nodes[1].kernel == 3 && im.g.nodes[1].c_in == 1 && im.g.nodes[1].c_out == 2);
        CHECK(im.g.nodes[2].op == SLEAPC_OP_CONV2D && im.g.nodes[2].act == SLEAPC_ACT_SIGMOID);
        CHECK(strcmp(im.g.nodes[1].name, "conv1") == 0);
    }
    CHECK(im.g.n_outputs == 1 && strcmp(im.g.outputs[0].name, "Out") == 0 &&
          im.g.outputs[0].stride == 1);

    uint8_t px[H * W];
    for (int i = 0; i < H * W; i++)
        px[i] = (uint8_t)(i * 37 % 256);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 1, H, W}, .data = px};
    sleapc_backend *be = NULL;
    sleapc_tensor_map out = {0};
    const sleapc_tensor *y = im.g.n_outputs ? run(&im.g, &x, "Out", &be, &out) : NULL;
    CHECK(y && y->shape[1] == 1 && y->shape[2] == H && y->shape[3] == W);
    double max_err = 0;
    for (int yy = 0; y && yy < H; yy++) {
        for (int xx = 0; xx < W; xx++) {
            double c2 = b2[0];
            for (int o = 0; o < 2; o++) {
                double c1 = b1[o];
                for (int dy = 0; dy < 3; dy++)
                    for (int dx = 0; dx < 3; dx++) {
                        int sy = yy + dy - 1, sx = xx + dx - 1;
                        if (sy >= 0 && sy < H && sx >= 0 && sx < W)
                            c1 += w1[o * 9 + dy * 3 + dx] * (px[sy * W + sx] / 255.0);
                    }
                c2 += w2[o] * (c1 > 0 ? c1 : 0);
            }
            double want = 1.0 / (1.0 + exp(-c2));
            double err = fabs(((const float *)y->data)[yy * W + xx] - want);
            max_err = err > max_err ? err : max_err;
        }
    }
    CHECK_MSG(max_err <= ABS_TOL, "max error %.3g", max_err);
    printf("prefix + fused activations: max abs error %.2e\n", max_err);
    sleapc__backend_destroy(be);
    release(&im);
}

/* F.interpolate(q, size=x.shape[-2:]) as traced: Shape/Gather/Unsqueeze/
 * Slice/Concat -> Resize(sizes) must become RESIZE_LIKE(q, x). */
static pb resize_like_graph(void)
{
    float wq[3 * 2], wo[5 * 9];
    fill(wq, 6, 5);
    fill(wo, 45, 6);
    pb g = {0};
    pb a[4];
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){-1, 2, -1, -1});
    add_io(&g, ONNX_GRAPH_OUTPUT, "Head", T_FLOAT, 0, NULL);
    add_floats(&g, "wq", 4, (int64_t[]){3, 2, 1, 1}, wq);
    add_floats(&g, "wo", 4, (int64_t[]){1, 5, 3, 3}, wo);
    add_ints(&g, "i2", -1, (int64_t[]){2});
    add_ints(&g, "i3", -1, (int64_t[]){3});
    add_ints(&g, "ax0", 1, (int64_t[]){0});
    add_ints(&g, "s0", 1, (int64_t[]){0});
    add_ints(&g, "e2", 1, (int64_t[]){2});
    a[0] = onnx_attr_ints("kernel_shape", 2, (int64_t[]){2, 2});
    a[1] = onnx_attr_ints("strides", 2, (int64_t[]){2, 2});
    add_node(&g, "MaxPool", "pool", NAMES("x"), NAMES("p"), a, 2);
    add_node(&g, "Conv", "convq", NAMES("p", "wq"), NAMES("q"), NULL, 0);
    add_node(&g, "Shape", "shx", NAMES("x"), NAMES("sx"), NULL, 0);
    add_node(&g, "Shape", "shq", NAMES("q"), NAMES("sq"), NULL, 0);
    add_node(&g, "Gather", "gh", NAMES("sx", "i2"), NAMES("h"), NULL, 0);
    add_node(&g, "Gather", "gw", NAMES("sx", "i3"), NAMES("w"), NULL, 0);
    add_node(&g, "Unsqueeze", "uh", NAMES("h", "ax0"), NAMES("h1"), NULL, 0);
    add_node(&g, "Unsqueeze", "uw", NAMES("w", "ax0"), NAMES("w1"), NULL, 0);
    add_node(&g, "Slice", "bc", NAMES("sq", "s0", "e2"), NAMES("bc"), NULL, 0);
    a[0] = onnx_attr_int("axis", 0);
    add_node(&g, "Concat", "sizes", NAMES("bc", "h1", "w1"), NAMES("sizes"), a, 1);
    a[0] = onnx_attr_str("mode", "linear");
    a[1] = onnx_attr_str("coordinate_transformation_mode", "pytorch_half_pixel");
    add_node(&g, "Resize", "resize", NAMES("q", "", "", "sizes"), NAMES("r"), a, 2);
    a[0] = onnx_attr_int("axis", 1);
    add_node(&g, "Concat", "cat", NAMES("x", "r"), NAMES("cat"), a, 1);
    a[0] = onnx_attr_ints("pads", 4, (int64_t[]){1, 1, 1, 1});
    add_node(&g, "Conv", "head", NAMES("cat", "wo"), NAMES("Head"), a, 1);
    return g;
}

static void test_resize_like(void)
{
    sleapc_head_spec head = {.name = "Head", .channels = 1, .stride = 1, .act = SLEAPC_ACT_NONE};
    pb g = resize_like_graph();
    imported im;
    CHECK_OK(import(&g, &head, 1, &im));
    int n_resize = 0;
    for (int i = 0; i < im.g.n_nodes; i++) {
        const sleapc_node *n = &im.g.nodes[i];
        if (n->op == SLEAPC_OP_RESIZE_LIKE) {
            n_resize++;
            CHECK(n->n_inputs == 2 && im.g.nodes[n->inputs[0]].op == SLEAPC_OP_CONV2D &&
                  n->inputs[1] == 0);
        }
    }
    CHECK(n_resize == 1 && im.g.max_stride == 2 && im.g.n_outputs == 1);
    /* An odd size: the pooled branch is resized back to 7 x 9. */
    float px[2 * 7 * 9];
    fill(px, 2 * 7 * 9, 7);
    for (int i = 0; i < 2 * 7 * 9; i++)
        px[i] = fabsf(px[i]);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 2, 7, 9}, .data = px};
    sleapc_backend *be = NULL;
    sleapc_tensor_map out = {0};
    const sleapc_tensor *y = im.g.n_outputs ? run(&im.g, &x, "Head", &be, &out) : NULL;
    CHECK(y && y->shape[1] == 1 && y->shape[2] == 7 && y->shape[3] == 9);
    sleapc__backend_destroy(be);
    release(&im);

    /* The config's head must be there, with its stride. */
    sleapc_head_spec wrong_stride = {.name = "Head", .channels = 1, .stride = 2, .act = SLEAPC_ACT_NONE};
    g = resize_like_graph();
    CHECK(import(&g, &wrong_stride, 1, &im) == SLEAPC_ERR_FORMAT);
    CHECK(im.g.n_nodes == 0 && im.w.n == 0);
    release(&im);
    sleapc_head_spec missing = {.name = "CentroidConfmapsHead", .channels = 1, .stride = 1, .act = SLEAPC_ACT_NONE};
    g = resize_like_graph();
    CHECK(import(&g, &missing, 1, &im) == SLEAPC_ERR_FORMAT &&
          strstr(sleapc_last_error(), "CentroidConfmapsHead"));
    release(&im);

    /* Every allocation of the import failing in turn: NOMEM, nothing leaked. */
    int n_fail = 0;
    for (int64_t k = 1; k < 10000; k++) {
        g = resize_like_graph();
        pb model = onnx_model(&g, 17);
        memset(&im, 0, sizeof im);
        CHECK_OK(sleapc__onnx_parse(model.d, model.n, "synthetic.onnx", &im.om));
        free(model.d);
        sleapc__alloc_fail_after(k);
        sleapc_status st =
            im.om ? sleapc__graph_from_onnx(im.om, &head, 1, &im.w, &im.g) : SLEAPC_ERR_STATE;
        sleapc__alloc_fail_after(0);
        bool done = st == SLEAPC_OK;
        if (!done) {
            n_fail++;
            CHECK_MSG(st == SLEAPC_ERR_NOMEM && im.g.n_nodes == 0 && im.w.n == 0,
                      "allocation %lld: %s", (long long)k, sleapc_last_error());
        }
        release(&im);
        if (done || st != SLEAPC_ERR_NOMEM)
            break;
    }
    CHECK(n_fail > 3);
}

/* GlobalMaxPool -> Flatten | Reshape(0, -1) -> Gemm (transB 1 | 0) -> Softmax. */
static pb class_vector_graph(bool reshape, const float *w, const float *b)
{
    float wt[3 * 2];
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 2; i++)
            wt[i * 3 + o] = w[o * 2 + i];
    pb g = {0};
    pb a[2];
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){-1, 2, 4, 4});
    add_io(&g, ONNX_GRAPH_OUTPUT, "ClassVectorsHead", T_FLOAT, 0, NULL);
    add_floats(&g, "w", 2, reshape ? (int64_t[]){2, 3} : (int64_t[]){3, 2}, reshape ? wt : w);
    add_floats(&g, "b", 1, (int64_t[]){3}, b);
    add_ints(&g, "shape", 2, (int64_t[]){0, -1});
    add_node(&g, "GlobalMaxPool", "gmp", NAMES("x"), NAMES("p"), NULL, 0);
    if (reshape)
        add_node(&g, "Reshape", "flat", NAMES("p", "shape"), NAMES("f"), NULL, 0);
    else
        add_node(&g, "Flatten", "flat", NAMES("p"), NAMES("f"), NULL, 0);
    a[0] = onnx_attr_int("transB", reshape ? 0 : 1);
    a[1] = onnx_attr_float("alpha", 1.0f);
    add_node(&g, "Gemm", "fc", NAMES("f", "w", "b"), NAMES("z"), a, 2);
    a[0] = onnx_attr_int("axis", -1);
    add_node(&g, "Softmax", "softmax", NAMES("z"), NAMES("ClassVectorsHead"), a, 1);
    return g;
}

static void test_class_vectors(void)
{
    float w[3 * 2], b[3], px[2 * 16];
    fill(w, 6, 8);
    fill(b, 3, 9);
    fill(px, 32, 10);
    sleapc_head_spec head = {.name = "ClassVectorsHead", .channels = 3, .stride = 0, .act = SLEAPC_ACT_SOFTMAX};
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 2, 4, 4}, .data = px};
    /* softmax(W max_hw(x) + b) */
    double m[2] = {-1e9, -1e9}, z[3], sum = 0;
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 16; i++)
            m[c] = px[c * 16 + i] > m[c] ? px[c * 16 + i] : m[c];
    for (int o = 0; o < 3; o++) {
        z[o] = exp(b[o] + w[o * 2] * m[0] + w[o * 2 + 1] * m[1]);
        sum += z[o];
    }
    for (int reshape = 0; reshape < 2; reshape++) {
        pb g = class_vector_graph(reshape, w, b);
        imported im;
        CHECK_OK(import(&g, &head, 1, &im));
        CHECK(im.g.n_nodes == 3 && im.g.outputs[0].stride == 0);
        if (im.g.n_nodes == 3)
            CHECK(im.g.nodes[2].op == SLEAPC_OP_LINEAR && im.g.nodes[2].act == SLEAPC_ACT_SOFTMAX &&
                  im.g.nodes[2].c_in == 2 && im.g.nodes[2].c_out == 3);
        sleapc_backend *be = NULL;
        sleapc_tensor_map out = {0};
        const sleapc_tensor *y = im.g.n_outputs ? run(&im.g, &x, head.name, &be, &out) : NULL;
        CHECK(y && y->ndim == 2 && y->shape[1] == 3);
        for (int o = 0; y && o < 3; o++)
            CHECK_MSG(fabs(((const float *)y->data)[o] - z[o] / sum) <= ABS_TOL, "%s: class %d",
                      reshape ? "Reshape, transB=0" : "Flatten, transB=1", o);
        sleapc__backend_destroy(be);
        release(&im);
    }
}

/* ConvTranspose 3x3 stride 2 with pads/output_padding -> placement. */
static sleapc_status convt(const int64_t *pads, const int64_t *opad, imported *im)
{
    float w[2 * 3 * 9], b[3];
    fill(w, 54, 11);
    fill(b, 3, 12);
    pb g = {0};
    pb a[3];
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
    add_io(&g, ONNX_GRAPH_OUTPUT, "Y", T_FLOAT, 0, NULL);
    add_floats(&g, "w", 4, (int64_t[]){2, 3, 3, 3}, w);
    add_floats(&g, "b", 1, (int64_t[]){3}, b);
    a[0] = onnx_attr_ints("kernel_shape", 2, (int64_t[]){2, 2});
    a[1] = onnx_attr_ints("strides", 2, (int64_t[]){2, 2});
    add_node(&g, "MaxPool", "pool", NAMES("x"), NAMES("p"), a, 2);
    a[0] = onnx_attr_ints("strides", 2, (int64_t[]){2, 2});
    a[1] = onnx_attr_ints("pads", 4, pads);
    a[2] = onnx_attr_ints("output_padding", 2, opad);
    add_node(&g, "ConvTranspose", "up", NAMES("p", "w", "b"), NAMES("Y"), a, 3);
    return import(&g, NULL, 0, im);
}

static void test_conv_transpose(void)
{
    imported im;
    CHECK_OK(convt((int64_t[]){1, 1, 1, 1}, (int64_t[]){1, 1}, &im));
    /* Pooled then upsampled: back at stride 1. */
    CHECK(im.g.n_nodes == 3 && !im.g.nodes[2].keras_placement && im.g.nodes[2].c_in == 2 &&
          im.g.nodes[2].c_out == 3 && im.g.outputs[0].stride == 1 && im.g.max_stride == 2);
    release(&im);
    CHECK_OK(convt((int64_t[]){0, 0, 1, 1}, (int64_t[]){0, 0}, &im));
    CHECK(im.g.n_nodes == 3 && im.g.nodes[2].keras_placement);
    release(&im);
    /* Output 2H - 1: not what the IR op computes. */
    CHECK(convt((int64_t[]){1, 1, 1, 1}, (int64_t[]){0, 0}, &im) == SLEAPC_ERR_UNSUPPORTED);
    release(&im);
}

/* One-node graphs the importer must refuse, with the node named. */
static void test_refusals(void)
{
    float w[4 * 2 * 9];
    fill(w, 72, 13);
    imported im;
    struct {
        const char *op;
        pb attr;
        sleapc_status want;
        const char *text;
    } cases[] = {
        {"Conv", onnx_attr_int("group", 2), SLEAPC_ERR_UNSUPPORTED, "group 2"},
        {"Conv", onnx_attr_ints("strides", 2, (int64_t[]){2, 2}), SLEAPC_ERR_UNSUPPORTED,
         "strides"},
        {"Conv", onnx_attr_ints("dilations", 2, (int64_t[]){2, 2}), SLEAPC_ERR_UNSUPPORTED,
         "dilations"},
        {"Conv", onnx_attr_ints("pads", 4, (int64_t[]){0, 0, 0, 0}), SLEAPC_ERR_UNSUPPORTED,
         "padding"},
        {"Conv", onnx_attr_str("group", "x"), SLEAPC_ERR_FORMAT, "attribute group"},
        {"LeakyRelu", onnx_attr_float("alpha", 0.1f), SLEAPC_ERR_UNSUPPORTED,
         "(LeakyRelu) is not supported"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pb g = {0};
        add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
        add_io(&g, ONNX_GRAPH_OUTPUT, "Y", T_FLOAT, 0, NULL);
        add_floats(&g, "w", 4, (int64_t[]){4, 2, 3, 3}, w);
        add_node(&g, cases[i].op, "the_node", NAMES("x", "w"), NAMES("Y"), &cases[i].attr, 1);
        sleapc_status st = import(&g, NULL, 0, &im);
        const char *msg = sleapc_last_error();
        CHECK_MSG(st == cases[i].want && strstr(msg, "the_node") && strstr(msg, cases[i].text),
                  "case %zu: %s: %s", i, sleapc_status_str(st), msg);
        CHECK(im.g.n_nodes == 0 && im.w.n == 0);
        release(&im);
    }

    /* A Relu on a value that is also a graph output cannot be fused. */
    pb g = {0};
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
    add_io(&g, ONNX_GRAPH_OUTPUT, "C", T_FLOAT, 0, NULL);
    add_io(&g, ONNX_GRAPH_OUTPUT, "R", T_FLOAT, 0, NULL);
    add_floats(&g, "w", 4, (int64_t[]){4, 2, 3, 3}, w);
    pb a = onnx_attr_str("auto_pad", "SAME_UPPER");
    add_node(&g, "Conv", "conv", NAMES("x", "w"), NAMES("C"), &a, 1);
    add_node(&g, "Relu", "relu", NAMES("C"), NAMES("R"), NULL, 0);
    CHECK(import(&g, NULL, 0, &im) == SLEAPC_ERR_UNSUPPORTED &&
          strstr(sleapc_last_error(), "also read"));
    release(&im);

    /* Reading a value nothing defines is not valid ONNX. */
    g = (pb){0};
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
    add_io(&g, ONNX_GRAPH_OUTPUT, "Y", T_FLOAT, 0, NULL);
    add_node(&g, "Relu", "relu", NAMES("nowhere"), NAMES("Y"), NULL, 0);
    CHECK(import(&g, NULL, 0, &im) == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "nowhere"));
    release(&im);

    /* Two image inputs. */
    g = (pb){0};
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
    add_io(&g, ONNX_GRAPH_INPUT, "x2", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
    add_io(&g, ONNX_GRAPH_OUTPUT, "Y", T_FLOAT, 0, NULL);
    a = onnx_attr_int("axis", 1);
    add_node(&g, "Concat", "cat", NAMES("x", "x2"), NAMES("Y"), &a, 1);
    CHECK(import(&g, NULL, 0, &im) == SLEAPC_ERR_UNSUPPORTED);
    release(&im);

    /* A x3 upsample. */
    g = (pb){0};
    add_io(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 4, (int64_t[]){1, 2, 8, 8});
    add_io(&g, ONNX_GRAPH_OUTPUT, "Y", T_FLOAT, 0, NULL);
    add_floats(&g, "sc", 1, (int64_t[]){4}, (float[]){1, 1, 3, 3});
    a = onnx_attr_str("mode", "linear");
    add_node(&g, "Resize", "up3", NAMES("x", "", "sc"), NAMES("Y"), &a, 1);
    CHECK(import(&g, NULL, 0, &im) == SLEAPC_ERR_UNSUPPORTED && strstr(sleapc_last_error(), "up3"));
    release(&im);
}

int main(void)
{
    test_prefix_and_fusion();
    test_resize_like();
    test_class_vectors();
    test_conv_transpose();
    test_refusals();
    return test_finish();
}
