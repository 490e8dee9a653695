/* Reductions on the host: ReduceMax/Min/Sum/Mean/L2, GlobalAveragePool (the
 * mean over every axis after the channels, kept), ArgMax/ArgMin, TopK. Ties
 * go to the lower index, as in ONNX Runtime (ArgMax's first occurrence, TopK's
 * GreaterValueCmp), which is also the order the exports' peak lists rely on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"

static bool op_is(const rt_op_ctx *c, const char *op)
{
    return strcmp(c->node->op_type, op) == 0;
}

sleapc_status sleapc__rt_op_reduce(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    if (n_in < 1 || !in[0])
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects an input");
    const rt_tensor *x = in[0];
    int64_t axes[RT_MAX_DIMS], keepdims = 1, noop = 0;
    int na = 0;
    const bool gap = op_is(c, "GlobalAveragePool");
    if (gap && x->ndim < 3)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "a %d-D input (N, C, ... expected)", x->ndim);
    for (int i = 2; gap && i < x->ndim; i++)
        axes[na++] = i;
    sleapc_status st = gap                ? SLEAPC_OK
                       : n_in > 1 && in[1] ? sleapc__rt_ints(c, in[1], RT_MAX_DIMS, axes, &na)
                                           : sleapc__rt_attr_ints(c, "axes", RT_MAX_DIMS, axes, &na);
    if (!st)
        st = sleapc__rt_attr_int(c, "keepdims", 1, &keepdims);
    if (!st)
        st = sleapc__rt_attr_int(c, "noop_with_empty_axes", 0, &noop);
    if (st)
        return st;
    if (x->dtype != SLEAPC_ONNX_DTYPE_FLOAT)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "a %s input",
                               sleapc__onnx_dtype_name(x->dtype));
    if (na == 0 && noop)
        return sleapc__rt_copy(c, x, out);
    bool reduce[RT_MAX_DIMS] = {false};
    for (int i = 0; i < na; i++) {
        int a = 0;
        st = sleapc__rt_axis(c, axes[i], x->ndim, &a);
        if (st)
            return st;
        reduce[a] = true;
    }
    /* The kept-dims shape: the output's layout whatever keepdims says. */
    rt_tensor kept = {.dtype = SLEAPC_ONNX_DTYPE_FLOAT, .ndim = x->ndim};
    int64_t shape[RT_MAX_DIMS];
    int r = 0;
    int64_t count = 1;
    for (int i = 0; i < x->ndim; i++) {
        bool red = na == 0 || reduce[i];
        kept.shape[i] = red ? 1 : x->shape[i];
        count *= red ? x->shape[i] : 1;
        if (!red || keepdims)
            shape[r++] = kept.shape[i];
    }
    if (count == 0 && (op_is(c, "ReduceMax") || op_is(c, "ReduceMin")))
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "max of nothing");
    st = sleapc__rt_alloc(c, out, x->dtype, r, shape);
    if (st)
        return st;
    int kind = op_is(c, "ReduceMax")   ? 0
               : op_is(c, "ReduceMin") ? 1
               : op_is(c, "ReduceSum") ? 2
               : op_is(c, "ReduceL2")  ? 4
                                       : 3;
    float *d = out->data;
    for (int64_t i = 0; i < out->numel; i++)
        d[i] = kind == 0 ? -INFINITY : kind == 1 ? INFINITY : 0.0f;
    rt_tensor *ts[2] = {(rt_tensor *)x, &kept};
    rt_iter it;
    sleapc__rt_iter_init(&it, x->ndim, x->shape, ts, 2);
    const float *s = x->data;
    for (int64_t i = 0; i < x->numel; i++, sleapc__rt_iter_next(&it)) {
        float v = s[i];
        float *o = &d[it.off[1]];
        if (kind == 0)
            *o = v > *o || isnan(v) ? v : *o;
        else if (kind == 1)
            *o = v < *o || isnan(v) ? v : *o;
        else
            *o += kind == 4 ? v * v : v;
    }
    for (int64_t i = 0; kind == 3 && count > 0 && i < out->numel; i++)
        d[i] /= (float)count;
    /* ReduceL2: the square root of the sum of squares. */
    for (int64_t i = 0; kind == 4 && i < out->numel; i++)
        d[i] = sqrtf(d[i]);
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_argmax(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axis = 0, keepdims = 1, last = 0;
    sleapc_status st = sleapc__rt_attr_int(c, "axis", 0, &axis);
    if (!st)
        st = sleapc__rt_attr_int(c, "keepdims", 1, &keepdims);
    if (!st)
        st = sleapc__rt_attr_int(c, "select_last_index", 0, &last);
    if (st)
        return st;
    if (n_in < 1 || !in[0] || in[0]->dtype != SLEAPC_ONNX_DTYPE_FLOAT)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "expects a float input");
    const rt_tensor *x = in[0];
    int a = 0;
    st = sleapc__rt_axis(c, axis, x->ndim, &a);
    if (st)
        return st;
    int64_t n = x->shape[a], outer = 1, inner = 1, shape[RT_MAX_DIMS];
    if (n == 0)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "argmax of nothing");
    int r = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (i < a)
            outer *= x->shape[i];
        if (i > a)
            inner *= x->shape[i];
        if (i != a || keepdims)
            shape[r++] = i == a ? 1 : x->shape[i];
    }
    st = sleapc__rt_alloc(c, out, SLEAPC_ONNX_DTYPE_INT64, r, shape);
    if (st)
        return st;
    bool is_min = op_is(c, "ArgMin");
    const float *s = x->data;
    int64_t *d = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < inner; k++) {
            const float *p = s + o * n * inner + k;
            int64_t best = 0;
            for (int64_t j = 1; j < n; j++) {
                float v = p[j * inner], b = p[best * inner];
                bool better = is_min ? v < b : v > b;
                if (better || (last && v == b))
                    best = j;
            }
            d[o * inner + k] = best;
        }
    return SLEAPC_OK;
}

typedef struct ranked {
    float v;
    int64_t i;
} ranked;

/* Descending value, then ascending index; NaN after every number. */
static int cmp_desc(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb)
        return na ? 1 : -1;
    if (!na && a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int cmp_asc(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb)
        return na ? 1 : -1;
    if (!na && a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

typedef int (*rank_cmp)(const void *, const void *);

/* Sift h[at] down a heap of n whose root is the worst entry (the largest
 * under cmp). */
static void sift_worst(ranked *h, int64_t n, int64_t at, rank_cmp cmp)
{
    for (;;) {
        int64_t l = 2 * at + 1, r = l + 1, w = at;
        if (l < n && cmp(&h[l], &h[w]) > 0)
            w = l;
        if (r < n && cmp(&h[r], &h[w]) > 0)
            w = r;
        if (w == at)
            return;
        ranked t = h[at];
        h[at] = h[w];
        h[w] = t;
        at = w;
    }
}

/* The first k of buf[0..n) under cmp, in order, into buf[0..k): a heap of
 * the k best seen so far, then the heap sorted. cmp is a total order (ties
 * broken by index), so this equals a full sort's first k, without the
 * allocation a library sort may make. */
static void select_first_k(ranked *buf, int64_t n, int64_t k, rank_cmp cmp)
{
    if (k <= 0)
        return;
    for (int64_t i = k / 2 - 1; i >= 0; i--)
        sift_worst(buf, k, i, cmp);
    for (int64_t j = k; j < n; j++)
        if (cmp(&buf[j], &buf[0]) < 0) {
            buf[0] = buf[j];
            sift_worst(buf, k, 0, cmp);
        }
    for (int64_t m = k - 1; m > 0; m--) {
        ranked t = buf[0];
        buf[0] = buf[m];
        buf[m] = t;
        sift_worst(buf, m, 0, cmp);
    }
}

sleapc_status sleapc__rt_op_topk(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                 int n_out)
{
    int64_t axis = -1, largest = 1, sorted = 1, kv[1];
    int nk = 0;
    sleapc_status st = n_in == 2 && in[0] && in[1] && n_out == 2
                           ? sleapc__rt_ints(c, in[1], 1, kv, &nk)
                           : sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects 2 inputs, 2 outputs");
    if (!st)
        st = sleapc__rt_attr_int(c, "axis", -1, &axis);
    if (!st)
        st = sleapc__rt_attr_int(c, "largest", 1, &largest);
    if (!st)
        st = sleapc__rt_attr_int(c, "sorted", 1, &sorted);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    int a = 0;
    st = sleapc__rt_axis(c, axis, x->ndim, &a);
    if (st)
        return st;
    int64_t n = x->shape[a], k = nk == 1 ? kv[0] : -1;
    if (x->dtype != SLEAPC_ONNX_DTYPE_FLOAT || k < 0 || k > n)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "k = %lld of %lld %s values", (long long)k,
                               (long long)n, sleapc__onnx_dtype_name(x->dtype));
    int64_t shape[RT_MAX_DIMS], outer = 1, inner = 1;
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = k;
    for (int i = 0; i < a; i++)
        outer *= x->shape[i];
    for (int i = a + 1; i < x->ndim; i++)
        inner *= x->shape[i];
    st = sleapc__rt_alloc(c, &out[0], x->dtype, x->ndim, shape);
    if (!st)
        st = sleapc__rt_alloc(c, &out[1], SLEAPC_ONNX_DTYPE_INT64, x->ndim, shape);
    void *scratch = NULL;
    if (!st)
        st = sleapc__rt_scratch(c, (size_t)n * sizeof(ranked), &scratch);
    if (st)
        return st;
    ranked *buf = scratch;
    const float *s = x->data;
    float *dv = out[0].data;
    int64_t *di = out[1].data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t q = 0; q < inner; q++) {
            for (int64_t j = 0; j < n; j++)
                buf[j] = (ranked){s[(o * n + j) * inner + q], j};
            /* sorted=0 may return any order; sorted is one of them. */
            select_first_k(buf, n, k, largest ? cmp_desc : cmp_asc);
            for (int64_t j = 0; j < k; j++) {
                dv[(o * k + j) * inner + q] = buf[j].v;
                di[(o * k + j) * inner + q] = buf[j].i;
            }
        }
    return SLEAPC_OK;
}
