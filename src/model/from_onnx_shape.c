/* Shape arithmetic in ONNX graphs, tracked symbolically: an exporter traces
 * `F.interpolate(x, size=skip.shape[-2:])` (sleap-nn's decoder resize to the
 * skip connection) into Shape -> Gather/Slice -> Unsqueeze -> Concat ->
 * Resize(sizes). Each element of such a value is a constant or "dimension a of
 * IR node i", which is enough to recognise RESIZE_LIKE without running it. */
#include <string.h>

#include "core/error.h"
#include "model/from_onnx_impl.h"

/* v as a list of symbols: a SHAPE value, or a constant integer list. */
static sleapc_status as_shape(onnx_importer *im, const sleapc_onnx_node *n, const onnx_val *v,
                              onnx_val *out)
{
    if (v && v->kind == ONNX_VAL_SHAPE) {
        *out = *v;
        return SLEAPC_OK;
    }
    int64_t vals[ONNX_SYM_MAX];
    int nv = 0;
    sleapc_status st = sleapc__onnx_imp_const_ints(im, n, v, ONNX_SYM_MAX, vals, &nv);
    if (st)
        return st;
    *out = (onnx_val){.kind = ONNX_VAL_SHAPE, .n_sym = nv, .scalar = v->t->ndim == 0};
    for (int i = 0; i < nv; i++)
        out->sym[i] = (onnx_sym){.value = vals[i]};
    return SLEAPC_OK;
}

/* ONNX index normalisation: negative counts from the end. */
static int64_t wrap(int64_t i, int64_t n)
{
    return i < 0 ? i + n : i;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

sleapc_status sleapc__onnx_op_shape(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    int64_t start = 0, end = 0;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (st)
        return st;
    bool is_input = x && (x->kind == ONNX_VAL_RAW_INPUT || x->kind == ONNX_VAL_SCALED_INPUT);
    if (!x || (x->kind != ONNX_VAL_NODE && !is_input))
        return sleapc__onnx_imp_unsupported(im, n, "shape of \"%s\"", x ? x->name : "");
    int rank = is_input ? 4 : x->rank;
    st = sleapc__onnx_imp_attr_int(im, n, "start", 0, &start);
    if (!st)
        st = sleapc__onnx_imp_attr_int(im, n, "end", rank, &end);
    if (st)
        return st;
    start = clamp(wrap(start, rank), 0, rank);
    end = clamp(wrap(end, rank), 0, rank);
    onnx_val v = {.kind = ONNX_VAL_SHAPE};
    for (int64_t a = start; a < end; a++) {
        if (x->pooled && a >= 2)
            v.sym[v.n_sym++] = (onnx_sym){.value = 1};
        else
            v.sym[v.n_sym++] =
                (onnx_sym){.is_dim = true, .node = is_input ? 0 : x->node, .axis = (int)a};
    }
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

sleapc_status sleapc__onnx_op_gather(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *data = NULL, *idx = NULL;
    int64_t axis = 0;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &data);
    if (!st)
        st = sleapc__onnx_imp_input(im, n, 1, &idx);
    if (!st)
        st = sleapc__onnx_imp_attr_int(im, n, "axis", 0, &axis);
    if (st)
        return st;
    if (!data || data->kind != ONNX_VAL_SHAPE || data->scalar || axis != 0)
        return sleapc__onnx_imp_unsupported(im, n, "only indexing a shape is");
    int64_t ix[ONNX_SYM_MAX];
    int ni = 0;
    st = sleapc__onnx_imp_const_ints(im, n, idx, ONNX_SYM_MAX, ix, &ni);
    if (st)
        return st;
    onnx_val v = {.kind = ONNX_VAL_SHAPE, .scalar = idx->t->ndim == 0, .n_sym = ni};
    for (int i = 0; i < ni; i++) {
        int64_t k = wrap(ix[i], data->n_sym);
        if (k < 0 || k >= data->n_sym)
            return sleapc__fail(SLEAPC_ERR_FORMAT,
                                "import ONNX: %s: ONNX node %s: index %lld out of range", im->path,
                                n->name, (long long)ix[i]);
        v.sym[i] = data->sym[k];
    }
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

/* Slice(data, starts, ends[, axes[, steps]]) on a 1-D shape, step 1. */
sleapc_status sleapc__onnx_op_slice(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *data = NULL, *in[4] = {NULL, NULL, NULL, NULL};
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &data);
    for (int i = 0; !st && i < 4; i++)
        st = sleapc__onnx_imp_input(im, n, i + 1, &in[i]);
    if (st)
        return st;
    if (!data || data->kind != ONNX_VAL_SHAPE || data->scalar || !in[0] || !in[1])
        return sleapc__onnx_imp_unsupported(im, n, "only slicing a shape is");
    int64_t p[4][ONNX_SYM_MAX];
    int np[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        if (in[i]) {
            st = sleapc__onnx_imp_const_ints(im, n, in[i], ONNX_SYM_MAX, p[i], &np[i]);
            if (st)
                return st;
        }
    }
    bool axis0 = !in[2] || (np[2] == 1 && (p[2][0] == 0 || p[2][0] == -1));
    bool step1 = !in[3] || (np[3] == 1 && p[3][0] == 1);
    if (np[0] != 1 || np[1] != 1 || !axis0 || !step1)
        return sleapc__onnx_imp_unsupported(im, n, "only a step-1 slice of a shape is");
    int64_t len = data->n_sym;
    int64_t b = clamp(wrap(p[0][0], len), 0, len);
    int64_t e = clamp(wrap(p[1][0], len), 0, len);
    onnx_val v = {.kind = ONNX_VAL_SHAPE};
    for (int64_t i = b; i < e; i++)
        v.sym[v.n_sym++] = data->sym[i];
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

/* The axes of Unsqueeze/Squeeze: an input since opset 13, an attribute
 * before. */
static sleapc_status axes_of(onnx_importer *im, const sleapc_onnx_node *n, int64_t *axes,
                             int *n_axes)
{
    if (n->n_inputs > 1 && n->inputs[1][0]) {
        onnx_val *a = NULL;
        sleapc_status st = sleapc__onnx_imp_input(im, n, 1, &a);
        if (st)
            return st;
        return sleapc__onnx_imp_const_ints(im, n, a, ONNX_SYM_MAX, axes, n_axes);
    }
    return sleapc__onnx_imp_attr_ints(im, n, "axes", ONNX_SYM_MAX, axes, n_axes);
}

sleapc_status sleapc__onnx_op_unsqueeze(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    int64_t axes[ONNX_SYM_MAX];
    int na = 0;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (!st)
        st = axes_of(im, n, axes, &na);
    if (st)
        return st;
    if (!x || x->kind != ONNX_VAL_SHAPE || !x->scalar || na != 1 || (axes[0] != 0 && axes[0] != -1))
        return sleapc__onnx_imp_unsupported(im, n, "only a scalar shape element to 1-D is");
    onnx_val v = *x;
    v.scalar = false;
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

/* Squeeze of a one-element shape to a scalar, or of a pooled (B,C,1,1)
 * vector to (B, C). */
sleapc_status sleapc__onnx_op_squeeze(onnx_importer *im, const sleapc_onnx_node *n)
{
    onnx_val *x = NULL;
    int64_t axes[ONNX_SYM_MAX];
    int na = 0;
    sleapc_status st = sleapc__onnx_imp_input(im, n, 0, &x);
    if (!st)
        st = axes_of(im, n, axes, &na);
    if (st)
        return st;
    onnx_val v = x ? *x : (onnx_val){0};
    if (x && x->kind == ONNX_VAL_SHAPE && !x->scalar && x->n_sym == 1 &&
        (na == 0 || (na == 1 && (axes[0] == 0 || axes[0] == -1)))) {
        v.scalar = true;
        return sleapc__onnx_imp_define(im, n, 0, &v);
    }
    bool spatial = na == 2 && wrap(axes[0], 4) + wrap(axes[1], 4) == 5 && axes[0] != axes[1] &&
                   wrap(axes[0], 4) >= 2 && wrap(axes[1], 4) >= 2;
    if (x && x->kind == ONNX_VAL_NODE && x->pooled && spatial) {
        v.pooled = false;
        v.rank = 2;
        return sleapc__onnx_imp_define(im, n, 0, &v);
    }
    return sleapc__onnx_imp_unsupported(im, n,
                                        "only squeezing a shape element or a pooled vector is");
}

sleapc_status sleapc__onnx_shape_concat(onnx_importer *im, const sleapc_onnx_node *n, int64_t axis)
{
    if (axis != 0 && axis != -1)
        return sleapc__onnx_imp_unsupported(im, n, "axis %lld of a shape", (long long)axis);
    onnx_val v = {.kind = ONNX_VAL_SHAPE};
    for (int i = 0; i < n->n_inputs; i++) {
        onnx_val *x = NULL, part;
        sleapc_status st = sleapc__onnx_imp_input(im, n, i, &x);
        if (!st)
            st = as_shape(im, n, x, &part);
        if (st)
            return st;
        if (part.scalar || v.n_sym + part.n_sym > ONNX_SYM_MAX)
            return sleapc__onnx_imp_unsupported(im, n, "a shape of more than %d elements",
                                                ONNX_SYM_MAX);
        memcpy(&v.sym[v.n_sym], part.sym, (size_t)part.n_sym * sizeof part.sym[0]);
        v.n_sym += part.n_sym;
    }
    return sleapc__onnx_imp_define(im, n, 0, &v);
}

static bool is_dim(const onnx_sym *s, int node, int axis)
{
    return s->is_dim && s->node == node && s->axis == axis;
}

sleapc_status sleapc__onnx_sizes_like(onnx_importer *im, const sleapc_onnx_node *n,
                                      const onnx_val *sizes, int x, bool hw_only, int *like)
{
    onnx_val s;
    sleapc_status st = as_shape(im, n, sizes, &s);
    if (st)
        return st;
    int off = hw_only ? 0 : 2;
    bool ok = s.n_sym == off + 2 && s.sym[off].is_dim && s.sym[off].axis == 2 &&
              is_dim(&s.sym[off + 1], s.sym[off].node, 3);
    if (ok && !hw_only)
        ok = is_dim(&s.sym[0], x, 0) && is_dim(&s.sym[1], x, 1);
    if (!ok)
        return sleapc__onnx_imp_unsupported(im, n,
                                            "sizes other than the height and width of another map");
    *like = s.sym[off].node;
    return SLEAPC_OK;
}
