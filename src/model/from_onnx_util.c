/* The ONNX importer's value table and attribute helpers (from_onnx_impl.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/from_onnx_impl.h"

const char *sleapc__onnx_imp_label(const sleapc_onnx_node *n)
{
    if (n->name[0])
        return n->name;
    return n->n_outputs > 0 ? n->outputs[0] : "?";
}

sleapc_status sleapc__onnx_imp_unsupported(const onnx_importer *im, const sleapc_onnx_node *n,
                                           const char *fmt, ...)
{
    char why[256] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
    }
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                        "import ONNX: %s: ONNX node %s (%s) is not supported%s%s", im->path,
                        sleapc__onnx_imp_label(n), n->op_type, why[0] ? ": " : "", why);
}

onnx_val *sleapc__onnx_imp_val(onnx_importer *im, const char *name)
{
    for (int i = 0; i < im->n_vals; i++)
        if (strcmp(im->vals[i].name, name) == 0)
            return &im->vals[i];
    return NULL;
}

sleapc_status sleapc__onnx_imp_input(onnx_importer *im, const sleapc_onnx_node *n, int i,
                                     onnx_val **out)
{
    *out = NULL;
    if (i >= n->n_inputs || !n->inputs[i][0])
        return SLEAPC_OK;
    onnx_val *v = sleapc__onnx_imp_val(im, n->inputs[i]);
    if (!v || v->kind == ONNX_VAL_UNDEFINED)
        return sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "import ONNX: %s: ONNX node %s reads \"%s\" before anything produces it", im->path,
            sleapc__onnx_imp_label(n), n->inputs[i]);
    *out = v;
    return SLEAPC_OK;
}

sleapc_status sleapc__onnx_imp_define(onnx_importer *im, const sleapc_onnx_node *n, int i,
                                      const onnx_val *v)
{
    if (i >= n->n_outputs || !n->outputs[i][0])
        return SLEAPC_OK; /* an optional output nobody named */
    onnx_val *dst = sleapc__onnx_imp_val(im, n->outputs[i]);
    if (!dst)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "import ONNX: %s: output \"%s\" was not declared",
                            im->path, n->outputs[i]);
    const char *name = dst->name;
    int n_uses = dst->n_uses;
    *dst = *v;
    dst->name = name;
    dst->n_uses = n_uses;
    return SLEAPC_OK;
}

static const sleapc_onnx_attr *typed_attr(const onnx_importer *im, const sleapc_onnx_node *n,
                                          const char *name, sleapc_onnx_attr_type type,
                                          sleapc_status *st)
{
    *st = SLEAPC_OK;
    const sleapc_onnx_attr *a = sleapc__onnx_node_attr(n, name);
    if (a && a->type != type) {
        *st = sleapc__fail(SLEAPC_ERR_FORMAT,
                           "import ONNX: %s: attribute %s of ONNX node %s has type %d", im->path,
                           name, sleapc__onnx_imp_label(n), (int)a->type);
        return NULL;
    }
    return a;
}

sleapc_status sleapc__onnx_imp_attr_int(const onnx_importer *im, const sleapc_onnx_node *n,
                                        const char *name, int64_t def, int64_t *out)
{
    sleapc_status st;
    const sleapc_onnx_attr *a = typed_attr(im, n, name, SLEAPC_ONNX_ATTR_INT, &st);
    *out = a ? a->i : def;
    return st;
}

sleapc_status sleapc__onnx_imp_attr_ints(const onnx_importer *im, const sleapc_onnx_node *n,
                                         const char *name, int cap, int64_t *out, int *n_out)
{
    sleapc_status st;
    const sleapc_onnx_attr *a = typed_attr(im, n, name, SLEAPC_ONNX_ATTR_INTS, &st);
    *n_out = 0;
    if (st || !a)
        return st;
    if (a->n_ints > cap)
        return sleapc__onnx_imp_unsupported(im, n, "%s has %d values", name, a->n_ints);
    memcpy(out, a->ints, (size_t)a->n_ints * sizeof *out);
    *n_out = a->n_ints;
    return SLEAPC_OK;
}

sleapc_status sleapc__onnx_imp_attr_str(const onnx_importer *im, const sleapc_onnx_node *n,
                                        const char *name, const char *def, const char **out)
{
    sleapc_status st;
    const sleapc_onnx_attr *a = typed_attr(im, n, name, SLEAPC_ONNX_ATTR_STRING, &st);
    *out = a && a->s ? a->s : def;
    return st;
}

sleapc_status sleapc__onnx_imp_const_ints(const onnx_importer *im, const sleapc_onnx_node *n,
                                          const onnx_val *v, int cap, int64_t *out, int *n_out)
{
    *n_out = 0;
    if (!v || v->kind != ONNX_VAL_CONST ||
        (v->t->dtype != SLEAPC_ONNX_DTYPE_INT64 && v->t->dtype != SLEAPC_ONNX_DTYPE_INT32) ||
        v->t->ndim > 1)
        return sleapc__onnx_imp_unsupported(im, n, "\"%s\" is not a constant integer list",
                                            v ? v->name : "");
    if (v->t->numel > cap)
        return sleapc__onnx_imp_unsupported(im, n, "\"%s\" has %lld values", v->name,
                                            (long long)v->t->numel);
    for (int64_t i = 0; i < v->t->numel; i++)
        out[i] = v->t->dtype == SLEAPC_ONNX_DTYPE_INT64 ? ((const int64_t *)v->t->data)[i]
                                                        : ((const int32_t *)v->t->data)[i];
    *n_out = (int)v->t->numel;
    return SLEAPC_OK;
}

sleapc_status sleapc__onnx_imp_add(onnx_importer *im, const sleapc_onnx_node *n, sleapc_node *node,
                                   int rank, bool pooled)
{
    snprintf(node->name, sizeof node->name, "%s", sleapc__onnx_imp_label(n));
    int idx = 0;
    sleapc_status st = sleapc__graph_add(im->g, node, &idx);
    if (st)
        return st;
    onnx_val v = {.kind = ONNX_VAL_NODE, .node = idx, .rank = rank, .pooled = pooled};
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

sleapc_status sleapc__onnx_imp_channels(const onnx_importer *im, int i, int64_t *out)
{
    /* One pass over nodes 0..i, not a recursion a hostile chain could make
     * arbitrarily deep; sums saturate instead of overflowing. */
    const sleapc_graph *g = im->g;
    int64_t *ch = sleapc__malloc((size_t)(i + 1) * sizeof *ch);
    if (!ch)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "import ONNX: out of memory");
    for (int k = 0; k <= i; k++) {
        const sleapc_node *n = &g->nodes[k];
        switch (n->op) {
        case SLEAPC_OP_INPUT:
            ch[k] = g->in_channels;
            break;
        case SLEAPC_OP_CONV2D:
        case SLEAPC_OP_CONV_TRANSPOSE2D:
        case SLEAPC_OP_LINEAR:
            ch[k] = n->c_out;
            break;
        case SLEAPC_OP_CONCAT:
            ch[k] = 0;
            for (int q = 0; q < n->n_inputs; q++)
                ch[k] = ch[k] + ch[n->inputs[q]] < INT32_MAX ? ch[k] + ch[n->inputs[q]] : INT32_MAX;
            break;
        default:
            ch[k] = n->n_inputs ? ch[n->inputs[0]] : 0;
            break;
        }
    }
    *out = ch[i];
    sleapc__free(ch);
    return SLEAPC_OK;
}
