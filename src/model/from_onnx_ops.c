/* The network ops of an ONNX graph mapped to IR nodes: Conv, ConvTranspose,
 * MaxPool, Resize, Concat, Gemm. Each checks every attribute that would
 * change the result and refuses what the IR op does not compute. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/from_onnx_impl.h"

#define MAX_CHANNELS (1 << 20)

/* Input i of n as a feature map: its IR node. */
static sleapc_status map_input(onnx_importer *im, const sleapc_onnx_node *n, int i, int *node)
{
    onnx_val *x = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, i, &x);
    if (st)
        return st;
    if (!x || x->kind != ONNX_VAL_NODE || x->rank != 4 || x->pooled)
        return sleapc__onnx_imp_unsupported(im, n, "input \"%s\" is not a feature map",
                                            x ? x->name : "");
    *node = x->node;
    return SLEAPC_OK;
}

/* Input i of n as a float32 constant of rank ndim whose dimensions are in
 * [1, MAX_CHANNELS]; it is copied into the weights once (the IR points into
 * them). transpose: a (K, N) matrix stored as (N, K). */
static sleapc_status weight_input(onnx_importer *im, const sleapc_onnx_node *n, int i, int ndim,
                                  bool transpose, const sleapc_onnx_tensor **out_t,
                                  const float **out)
{
    onnx_val *v = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, i, &v);
    if (st)
        return st;
    if (!v || v->kind != ONNX_VAL_CONST || v->t->dtype != SLEAPC_ONNX_DTYPE_FLOAT ||
        v->t->ndim != ndim)
        return sleapc__onnx_imp_unsupported(im, n, "\"%s\" is not a float32 constant of rank %d",
                                            v ? v->name : "", ndim);
    const sleapc_onnx_tensor *t = v->t;
    for (int d = 0; d < ndim; d++)
        if (t->shape[d] < 1 || t->shape[d] > MAX_CHANNELS)
            return sleapc__fail(SLEAPC_ERR_FORMAT,
                                "import ONNX: %s: weight \"%s\" has dimension %lld", im->path,
                                v->name, (long long)t->shape[d]);
    char key[512];
    snprintf(key, sizeof key, "%s%s", v->name, transpose ? "#transposed" : "");
    *out_t = t;
    const sleapc_weight *have = sleapc__weights_find(im->w, key);
    if (have) {
        *out = have->data;
        return SLEAPC_OK;
    }
    float *data = sleapc__aligned_alloc((size_t)t->numel * sizeof(float));
    if (!data)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "import ONNX: out of memory");
    int64_t shape[SLEAPC_ONNX_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    if (transpose) {
        const float *src = t->data;
        int64_t r = t->shape[0], c = t->shape[1];
        for (int64_t a = 0; a < r; a++)
            for (int64_t b = 0; b < c; b++)
                data[b * r + a] = src[a * c + b];
        shape[0] = c;
        shape[1] = r;
    } else {
        memcpy(data, t->data, (size_t)t->numel * sizeof(float));
    }
    st = sleapc__weights_add(im->w, key, ndim, shape, data);
    if (st)
        return st;
    *out = im->w->items[im->w->n - 1].data;
    return SLEAPC_OK;
}

/* Optional bias input i: c_out floats (shape (c_out) or (1, c_out)). */
static sleapc_status bias_input(onnx_importer *im, const sleapc_onnx_node *n, int i, int c_out,
                                const float **out)
{
    *out = NULL;
    if (i >= n->n_inputs || !n->inputs[i][0])
        return SLEAPC_OK;
    onnx_val *v = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, i, &v);
    if (st)
        return st;
    const sleapc_onnx_tensor *t = NULL;
    int ndim = v->kind == ONNX_VAL_CONST ? v->t->ndim : 1;
    if (ndim != 1 && ndim != 2)
        return sleapc__onnx_imp_unsupported(im, n, "bias \"%s\" has rank %d", v->name, ndim);
    st = weight_input(im, n, i, ndim, false, &t, out);
    if (st)
        return st;
    if (t->numel != c_out)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "import ONNX: %s: bias \"%s\" has %lld values for %d channels",
                            im->path, v->name, (long long)t->numel, c_out);
    return SLEAPC_OK;
}

/* An INTS attribute that must be absent or equal `want` in every element. */
static sleapc_status ints_all(onnx_importer *im, const sleapc_onnx_node *n, const char *name,
                              int64_t want)
{
    int64_t v[8];
    int nv = 0;
    sleapc_status st = sleapc__onnx_imp_attr_ints(im, n, name, 8, v, &nv);
    if (st)
        return st;
    for (int i = 0; i < nv; i++)
        if (v[i] != want)
            return sleapc__onnx_imp_unsupported(im, n, "%s other than %lld", name, (long long)want);
    return SLEAPC_OK;
}

static sleapc_status check_group_dilation(onnx_importer *im, const sleapc_onnx_node *n)
{
    int64_t group = 1;
    sleapc_status st = sleapc__onnx_imp_attr_int(im, n, "group", 1, &group);
    if (st)
        return st;
    if (group != 1)
        return sleapc__onnx_imp_unsupported(im, n, "group %lld", (long long)group);
    return ints_all(im, n, "dilations", 1);
}

/* kernel_shape, when given, must match the weight's (kh, kw). */
static sleapc_status check_kernel(onnx_importer *im, const sleapc_onnx_node *n, int64_t kh,
                                  int64_t kw)
{
    int64_t k[8];
    int nk = 0;
    sleapc_status st = sleapc__onnx_imp_attr_ints(im, n, "kernel_shape", 8, k, &nk);
    if (st)
        return st;
    if (nk && (nk != 2 || k[0] != kh || k[1] != kw))
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "import ONNX: %s: ONNX node %s: kernel_shape does not match its weight",
                            im->path, n->name);
    if (kh != kw)
        return sleapc__onnx_imp_unsupported(im, n, "kernel %lldx%lld is not square", (long long)kh,
                                            (long long)kw);
    return SLEAPC_OK;
}

/* Conv: k x k, stride 1, "same" padding (PyTorch: the odd one at the end,
 * which is ONNX SAME_UPPER). */
sleapc_status sleapc__onnx_op_conv(onnx_importer *im, const sleapc_onnx_node *n)
{
    sleapc_node node = {.op = SLEAPC_OP_CONV2D, .n_inputs = 1};
    const sleapc_onnx_tensor *wt = NULL;
    sleapc_status st = map_input(im, n, 0, &node.inputs[0]);
    if (!st)
        st = weight_input(im, n, 1, 4, false, &wt, &node.weight);
    if (!st)
        st = check_group_dilation(im, n);
    if (!st)
        st = ints_all(im, n, "strides", 1);
    if (!st)
        st = check_kernel(im, n, wt->shape[2], wt->shape[3]);
    if (st)
        return st;
    int k = (int)wt->shape[2];
    node.c_out = (int)wt->shape[0];
    node.c_in = (int)wt->shape[1];
    node.kernel = k;
    const char *auto_pad = NULL;
    int64_t pads[8];
    int np = 0;
    st = sleapc__onnx_imp_attr_str(im, n, "auto_pad", "NOTSET", &auto_pad);
    if (!st)
        st = sleapc__onnx_imp_attr_ints(im, n, "pads", 8, pads, &np);
    if (st)
        return st;
    int64_t lo = (k - 1) / 2, hi = k - 1 - lo;
    bool same;
    if (strcmp(auto_pad, "SAME_UPPER") == 0)
        same = true;
    else if (strcmp(auto_pad, "SAME_LOWER") == 0)
        same = k % 2 == 1;
    else if (strcmp(auto_pad, "VALID") == 0)
        same = k == 1;
    else if (strcmp(auto_pad, "NOTSET") == 0)
        same = (np == 0 && k == 1) ||
               (np == 4 && pads[0] == lo && pads[1] == lo && pads[2] == hi && pads[3] == hi);
    else
        same = false;
    if (!same)
        return sleapc__onnx_imp_unsupported(im, n, "padding other than \"same\" (auto_pad %s)",
                                            auto_pad);
    st = bias_input(im, n, 2, node.c_out, &node.bias);
    if (st)
        return st;
    return sleapc__onnx_imp_add(im, n, &node, 4, false);
}

/* ConvTranspose 3 x 3, stride 2, output 2H x 2W. Which 2H rows of the full
 * (2H + 1) output it keeps is the first pad: 1 is PyTorch's padding=1,
 * output_padding=1; 0 is TensorFlow's "same" (keras_placement). */
sleapc_status sleapc__onnx_op_conv_transpose(onnx_importer *im, const sleapc_onnx_node *n)
{
    sleapc_node node = {.op = SLEAPC_OP_CONV_TRANSPOSE2D, .n_inputs = 1, .kernel = 3};
    const sleapc_onnx_tensor *wt = NULL;
    sleapc_status st = map_input(im, n, 0, &node.inputs[0]);
    if (!st)
        st = weight_input(im, n, 1, 4, false, &wt, &node.weight);
    if (!st)
        st = check_group_dilation(im, n);
    if (!st)
        st = check_kernel(im, n, wt->shape[2], wt->shape[3]);
    if (st)
        return st;
    if (wt->shape[2] != 3)
        return sleapc__onnx_imp_unsupported(im, n, "kernel %lld (the IR has 3 x 3)",
                                            (long long)wt->shape[2]);
    node.c_in = (int)wt->shape[0];
    node.c_out = (int)wt->shape[1];
    const char *auto_pad = NULL;
    int64_t strides[8], pads[8] = {0, 0, 0, 0}, opad[8] = {0, 0};
    int ns = 0, np = 0, nop = 0;
    st = sleapc__onnx_imp_attr_str(im, n, "auto_pad", "NOTSET", &auto_pad);
    if (!st)
        st = sleapc__onnx_imp_attr_ints(im, n, "strides", 8, strides, &ns);
    if (!st)
        st = sleapc__onnx_imp_attr_ints(im, n, "pads", 8, pads, &np);
    if (!st)
        st = sleapc__onnx_imp_attr_ints(im, n, "output_padding", 8, opad, &nop);
    if (st)
        return st;
    if (sleapc__onnx_node_attr(n, "output_shape") || strcmp(auto_pad, "NOTSET") != 0)
        return sleapc__onnx_imp_unsupported(im, n, "output_shape or auto_pad (explicit pads only)");
    if (ns != 2 || strides[0] != 2 || strides[1] != 2)
        return sleapc__onnx_imp_unsupported(im, n, "strides other than 2");
    if ((np != 0 && np != 4) || (nop != 0 && nop != 2))
        return sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "import ONNX: %s: ONNX node %s: pads/output_padding of the wrong length", im->path,
            n->name);
    /* Output length 2(H-1) + 3 - begin - end + output_padding must be 2H. */
    bool ok = true;
    for (int a = 0; a < 2; a++)
        ok = ok && (pads[a] == 0 || pads[a] == 1) && pads[a] == pads[0] &&
             (opad[a] == 0 || opad[a] == 1) && pads[a] + pads[a + 2] - opad[a] == 1;
    if (!ok)
        return sleapc__onnx_imp_unsupported(im, n,
                                            "pads/output_padding that do not double the size");
    node.keras_placement = pads[0] == 0;
    st = bias_input(im, n, 2, node.c_out, &node.bias);
    if (st)
        return st;
    return sleapc__onnx_imp_add(im, n, &node, 4, false);
}

/* MaxPool 2 x 2, stride 2, no padding, floor. */
sleapc_status sleapc__onnx_op_maxpool(onnx_importer *im, const sleapc_onnx_node *n)
{
    sleapc_node node = {.op = SLEAPC_OP_MAXPOOL2D, .n_inputs = 1};
    int64_t k[8], s[8], ceil_mode = 0;
    int nk = 0, ns = 0;
    const char *auto_pad = NULL;
    sleapc_status st = map_input(im, n, 0, &node.inputs[0]);
    if (!st)
        st = sleapc__onnx_imp_attr_ints(im, n, "kernel_shape", 8, k, &nk);
    if (!st)
        st = sleapc__onnx_imp_attr_ints(im, n, "strides", 8, s, &ns);
    if (!st)
        st = sleapc__onnx_imp_attr_int(im, n, "ceil_mode", 0, &ceil_mode);
    if (!st)
        st = sleapc__onnx_imp_attr_str(im, n, "auto_pad", "NOTSET", &auto_pad);
    if (!st)
        st = ints_all(im, n, "pads", 0);
    if (!st)
        st = ints_all(im, n, "dilations", 1);
    if (st)
        return st;
    if (nk != 2 || k[0] != 2 || k[1] != 2 || ns != 2 || s[0] != 2 || s[1] != 2 || ceil_mode ||
        (strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0))
        return sleapc__onnx_imp_unsupported(im, n, "only 2 x 2, stride 2, unpadded, floor is");
    if (n->n_outputs > 1 && n->outputs[1][0])
        return sleapc__onnx_imp_unsupported(im, n, "the Indices output");
    return sleapc__onnx_imp_add(im, n, &node, 4, false);
}

/* Resize, bilinear with half-pixel centres (align_corners=False): by a
 * constant scale of 2 -> UPSAMPLE2X; to the size of another map (sizes built
 * from its Shape) -> RESIZE_LIKE. */
sleapc_status sleapc__onnx_op_resize(onnx_importer *im, const sleapc_onnx_node *n)
{
    int x = 0;
    const char *mode = NULL, *ctm = NULL;
    sleapc_status st = map_input(im, n, 0, &x);
    if (!st)
        st = sleapc__onnx_imp_attr_str(im, n, "mode", "nearest", &mode);
    if (!st)
        st = sleapc__onnx_imp_attr_str(im, n, "coordinate_transformation_mode", "half_pixel", &ctm);
    if (st)
        return st;
    if (strcmp(mode, "linear") != 0 ||
        (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "pytorch_half_pixel") != 0))
        return sleapc__onnx_imp_unsupported(im, n, "mode %s, %s (bilinear half_pixel only)", mode,
                                            ctm);
    int64_t axes[8];
    int n_axes = 0;
    st = sleapc__onnx_imp_attr_ints(im, n, "axes", 8, axes, &n_axes);
    if (st)
        return st;
    if (n_axes && !(n_axes == 2 && axes[0] == 2 && axes[1] == 3))
        return sleapc__onnx_imp_unsupported(im, n, "axes other than (2, 3)");
    /* Opset 10 has (X, scales); 11+ has (X, roi, scales, sizes). */
    onnx_val *scales = NULL, *sizes = NULL;
    st = sleapc__onnx_imp_input(im, n, n->n_inputs == 2 ? 1 : 2, &scales);
    if (!st && n->n_inputs > 2)
        st = sleapc__onnx_imp_input(im, n, 3, &sizes);
    if (st)
        return st;
    if (scales && scales->kind == ONNX_VAL_CONST && scales->t->numel == 0)
        scales = NULL; /* an empty scales tensor stands for "use sizes" */
    if (scales) {
        /* pytorch_half_pixel differs from half_pixel only for 1-pixel
         * outputs, which a x2 upsample never has. */
        size_t n_sc = scales->kind == ONNX_VAL_CONST ? (size_t)scales->t->numel : 0;
        const float *sc = n_sc ? scales->t->data : NULL;
        bool x2 =
            scales->kind == ONNX_VAL_CONST && scales->t->dtype == SLEAPC_ONNX_DTYPE_FLOAT &&
            ((n_sc == 4 && sc[0] == 1.0f && sc[1] == 1.0f && sc[2] == 2.0f && sc[3] == 2.0f) ||
             (n_sc == 2 && n_axes == 2 && sc[0] == 2.0f && sc[1] == 2.0f));
        if (!x2)
            return sleapc__onnx_imp_unsupported(im, n, "scales other than a constant (1, 1, 2, 2)");
        sleapc_node node = {.op = SLEAPC_OP_UPSAMPLE2X, .n_inputs = 1, .inputs = {x}};
        return sleapc__onnx_imp_add(im, n, &node, 4, false);
    }
    if (!sizes)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "import ONNX: %s: ONNX node %s has neither scales nor sizes", im->path,
                            n->name);
    int like = 0;
    st = sleapc__onnx_sizes_like(im, n, sizes, x, n_axes == 2, &like);
    if (st)
        return st;
    if (like == x) {
        onnx_val v = {.kind = ONNX_VAL_NODE, .node = x, .rank = 4};
        return sleapc__onnx_imp_define(im, n, 0, &v);
    }
    sleapc_node node = {.op = SLEAPC_OP_RESIZE_LIKE, .n_inputs = 2, .inputs = {x, like}};
    return sleapc__onnx_imp_add(im, n, &node, 4, false);
}

/* Concat of feature maps along channels (longer lists chained in order), or
 * of shape values along axis 0. */
sleapc_status sleapc__onnx_op_concat(onnx_importer *im, const sleapc_onnx_node *n)
{
    int64_t axis = 0;
    const sleapc_onnx_attr *a = sleapc__onnx_node_attr(n, "axis");
    sleapc_status st = sleapc__onnx_imp_attr_int(im, n, "axis", 0, &axis);
    if (st)
        return st;
    if (!a || n->n_inputs < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "import ONNX: %s: ONNX node %s needs an axis and inputs", im->path,
                            n->name);
    onnx_val *first = NULL;
    st = sleapc__onnx_imp_input(im, n, 0, &first);
    if (st)
        return st;
    if (!first || first->kind != ONNX_VAL_NODE)
        return sleapc__onnx_shape_concat(im, n, axis);
    if (axis != 1 && axis != -3)
        return sleapc__onnx_imp_unsupported(im, n, "axis %lld (channels only)", (long long)axis);
    sleapc_node node = {.op = SLEAPC_OP_CONCAT};
    int prev = -1;
    for (int i = 0; i < n->n_inputs; i++) {
        st = map_input(im, n, i, &node.inputs[node.n_inputs]);
        if (st)
            return st;
        node.n_inputs++;
        bool last = i == n->n_inputs - 1;
        if (node.n_inputs == SLEAPC_NODE_MAX_INPUTS && !last) {
            /* Full: concatenate what we have, and continue from it. */
            snprintf(node.name, sizeof node.name, "%s_part%d", n->name, i);
            st = sleapc__graph_add(im->g, &node, &prev);
            if (st)
                return st;
            node = (sleapc_node){.op = SLEAPC_OP_CONCAT, .n_inputs = 1, .inputs = {prev}};
        }
    }
    if (node.n_inputs == 1) {
        onnx_val v = {.kind = ONNX_VAL_NODE, .node = node.inputs[0], .rank = 4};
        return sleapc__onnx_imp_define(im, n, 0, &v);
    }
    return sleapc__onnx_imp_add(im, n, &node, 4, false);
}

/* Gemm on a (B, K) vector: Y = A B^T + C (transB=1, PyTorch nn.Linear) or
 * A B + C (transB=0: B is stored transposed once). */
sleapc_status sleapc__onnx_op_gemm(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *a = NULL;
    int64_t trans_a = 0, trans_b = 0;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &a);
    if (!st)
        st = sleapc__onnx_imp_attr_int(im, n, "transA", 0, &trans_a);
    if (!st)
        st = sleapc__onnx_imp_attr_int(im, n, "transB", 0, &trans_b);
    if (st)
        return st;
    if (!a || a->kind != ONNX_VAL_NODE || a->rank != 2 || trans_a)
        return sleapc__onnx_imp_unsupported(im, n, "A must be a (batch, features) vector");
    const sleapc_onnx_attr *alpha = sleapc__onnx_node_attr(n, "alpha");
    const sleapc_onnx_attr *beta = sleapc__onnx_node_attr(n, "beta");
    if ((alpha && alpha->f != 1.0f) || (beta && beta->f != 1.0f))
        return sleapc__onnx_imp_unsupported(im, n, "alpha or beta other than 1");
    sleapc_node node = {.op = SLEAPC_OP_LINEAR, .n_inputs = 1, .inputs = {a->node}};
    const sleapc_onnx_tensor *bt = NULL;
    st = weight_input(im, n, 1, 2, trans_b == 0, &bt, &node.weight);
    if (st)
        return st;
    node.c_out = (int)(trans_b ? bt->shape[0] : bt->shape[1]);
    node.c_in = (int)(trans_b ? bt->shape[1] : bt->shape[0]);
    st = bias_input(im, n, 2, node.c_out, &node.bias);
    if (st)
        return st;
    return sleapc__onnx_imp_add(im, n, &node, 2, false);
}
