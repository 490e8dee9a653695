/* The small ops of an ONNX network: constants and identity-like glue, the
 * uint8 normalisation prefix (folded into the IR input), activations (fused
 * into their producer), and the class-vector head's pooling and flatten. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "model/from_onnx_impl.h"

/* A float32 scalar constant's value. */
static bool const_scalar(const onnx_val *v, double *out)
{
    if (!v || v->kind != ONNX_VAL_CONST || v->t->numel != 1 ||
        v->t->dtype != SLEAPC_ONNX_DTYPE_FLOAT)
        return false;
    *out = ((const float *)v->t->data)[0];
    return true;
}

sleapc_status sleapc__onnx_op_constant(onnx_importer *im, const sleapc_onnx_node *n)
{
    const sleapc_onnx_attr *a = sleapc__onnx_node_attr(n, "value");
    if (!a || a->type != SLEAPC_ONNX_ATTR_TENSOR || !a->t || n->n_attrs != 1)
        return sleapc__onnx_imp_unsupported(im, n, "only a \"value\" tensor is");
    onnx_val v = {.kind = ONNX_VAL_CONST, .t = a->t};
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

/* Identity, Dropout (inference): output 0 is input 0. */
sleapc_status sleapc__onnx_op_identity(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (st)
        return st;
    if (!x || n->n_inputs > 1 || (n->n_outputs > 1 && n->outputs[1][0]))
        return sleapc__onnx_imp_unsupported(im, n, "only the one-input, one-output form is");
    return sleapc__onnx_imp_define(im, n, 0, x);
}

sleapc_status sleapc__onnx_op_cast(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    int64_t to = 0;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (!st)
        st = sleapc__onnx_imp_attr_int(im, n, "to", 0, &to);
    if (st)
        return st;
    if (!x)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "import ONNX: %s: ONNX node %s has no input",
                            im->path, sleapc__onnx_imp_label(n));
    onnx_val v = *x;
    if (x->kind == ONNX_VAL_RAW_INPUT && to == SLEAPC_ONNX_DTYPE_FLOAT)
        v.kind = ONNX_VAL_SCALED_INPUT;
    else if (!((x->kind == ONNX_VAL_NODE || x->kind == ONNX_VAL_SCALED_INPUT) &&
               to == SLEAPC_ONNX_DTYPE_FLOAT) &&
             !(x->kind == ONNX_VAL_SHAPE && to == SLEAPC_ONNX_DTYPE_INT64))
        return sleapc__onnx_imp_unsupported(im, n, "cast of \"%s\" to type %lld", x->name,
                                            (long long)to);
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

/* x / 255 or x * (1/255) on the [0, 255] input: sleap-nn's uint8
 * normalisation, which the IR input node already does. */
sleapc_status sleapc__onnx_op_normalise(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL, *k = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (!st)
        st = sleapc__onnx_imp_input(im, n, 1, &k);
    if (st)
        return st;
    bool is_input =
        x && (x->kind == ONNX_VAL_SCALED_INPUT || (x->kind == ONNX_VAL_NODE && x->node == 0));
    double c = 0.0;
    bool div = strcmp(n->op_type, "Div") == 0;
    bool by_255 =
        const_scalar(k, &c) && (div ? fabs(c - 255.0) < 1e-3 : fabs(c * 255.0 - 1.0) < 1e-6);
    if (!is_input || !by_255)
        return sleapc__onnx_imp_unsupported(im, n, "only the input's division by 255 is");
    onnx_val v = {.kind = ONNX_VAL_NODE, .node = 0, .rank = 4};
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

/* Relu, Sigmoid, Softmax: fused into the node that computes their input,
 * which nothing else may read. */
sleapc_status sleapc__onnx_op_activation(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (st)
        return st;
    sleapc_act act = SLEAPC_ACT_RELU;
    if (strcmp(n->op_type, "Sigmoid") == 0) {
        act = SLEAPC_ACT_SIGMOID;
    } else if (strcmp(n->op_type, "Softmax") == 0) {
        int64_t axis = 0;
        st = sleapc__onnx_imp_attr_int(im, n, "axis", im->om->opset >= 13 ? -1 : 1, &axis);
        if (st)
            return st;
        if (!x || x->kind != ONNX_VAL_NODE || x->rank != 2 || (axis != 1 && axis != -1))
            return sleapc__onnx_imp_unsupported(im, n,
                                                "softmax other than over a vector's channels");
        act = SLEAPC_ACT_SOFTMAX;
    }
    if (!x || x->kind != ONNX_VAL_NODE || x->node == 0)
        return sleapc__onnx_imp_unsupported(
            im, n, "an activation must follow Conv, ConvTranspose or Gemm");
    sleapc_node *p = &im->g->nodes[x->node];
    bool fits = p->op == SLEAPC_OP_LINEAR ||
                (p->op == SLEAPC_OP_CONV2D && act != SLEAPC_ACT_SOFTMAX) ||
                (p->op == SLEAPC_OP_CONV_TRANSPOSE2D && act == SLEAPC_ACT_RELU);
    if (!fits || p->act != SLEAPC_ACT_NONE)
        return sleapc__onnx_imp_unsupported(im, n, "it cannot be fused into %s node %s",
                                            sleapc__op_name(p->op), p->name);
    if (x->n_uses != 1)
        return sleapc__onnx_imp_unsupported(im, n, "its input \"%s\" is also read elsewhere",
                                            x->name);
    p->act = act;
    return sleapc__onnx_imp_define(im, n, 0, x);
}

sleapc_status sleapc__onnx_op_global_maxpool(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (st)
        return st;
    if (!x || x->kind != ONNX_VAL_NODE || x->rank != 4 || x->pooled)
        return sleapc__onnx_imp_unsupported(im, n, "its input is not a feature map");
    sleapc_node node = {.op = SLEAPC_OP_GLOBAL_MAXPOOL, .n_inputs = 1, .inputs = {x->node}};
    return sleapc__onnx_imp_add(im, n, &node, 4, true);
}

/* Flatten (axis 1) or Reshape to (B, C) of a pooled (B,C,1,1) vector. */
sleapc_status sleapc__onnx_op_flatten(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL, *shape = NULL;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (!st)
        st = sleapc__onnx_imp_input(im, n, 1, &shape);
    if (st)
        return st;
    if (!x || x->kind != ONNX_VAL_NODE || !(x->pooled || x->rank == 2))
        return sleapc__onnx_imp_unsupported(im, n, "only a pooled vector can be flattened");
    bool ok = true;
    if (strcmp(n->op_type, "Flatten") == 0) {
        int64_t axis = 1;
        st = sleapc__onnx_imp_attr_int(im, n, "axis", 1, &axis);
        ok = axis == 1 || (axis == -1 && x->rank == 2);
    } else {
        int64_t dims[ONNX_SYM_MAX], c = 0;
        int nd = 0;
        st = sleapc__onnx_imp_channels(im, x->node, &c);
        if (!st)
            st = sleapc__onnx_imp_const_ints(im, n, shape, ONNX_SYM_MAX, dims, &nd);
        /* (0 or -1, -1 or C): keep the batch, put everything else in C. */
        ok = nd == 2 && (dims[0] == 0 || dims[0] == -1) && (dims[1] == -1 || dims[1] == c) &&
             !(dims[0] == -1 && dims[1] == -1);
    }
    if (st)
        return st;
    if (!ok)
        return sleapc__onnx_imp_unsupported(im, n, "only (batch, channels) is");
    onnx_val v = *x;
    v.rank = 2;
    v.pooled = false;
    return sleapc__onnx_imp_define(im, n, 0, &v);
}
