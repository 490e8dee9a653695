/* Host tensors of the ONNX interpreter: allocation with size checks,
 * attribute and small-input readers, NumPy broadcasting. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/alloc.h"
#include "core/error.h"

sleapc_status sleapc__rt_fail(const rt_op_ctx *c, sleapc_status st, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const sleapc_onnx_node *n = c->node;
    const char *name = n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : "?";
    return sleapc__fail(st, "run ONNX: %s: node %s (%s): %s", c->path, name, n->op_type, why);
}

sleapc_status sleapc__rt_need(const rt_op_ctx *c, rt_tensor *const *in, int n_in, int n)
{
    for (int k = 0; k < n; k++)
        if (k >= n_in || !in[k] || !in[k]->set)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "input %d is missing", k);
    return SLEAPC_OK;
}

size_t sleapc__rt_esize(const rt_tensor *t)
{
    return sleapc__onnx_dtype_size(t->dtype);
}

sleapc_status sleapc__rt_alloc(const rt_op_ctx *c, rt_tensor *t, sleapc_onnx_dtype dtype, int ndim,
                               const int64_t *shape)
{
    sleapc__rt_release(t);
    size_t esize = sleapc__onnx_dtype_size(dtype);
    if (ndim < 0 || ndim > RT_MAX_DIMS || esize == 0)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "a %d-d %s result", ndim,
                               sleapc__onnx_dtype_name(dtype));
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] > 0 && numel > RT_MAX_NUMEL / shape[i]))
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "result dimension %d is %lld", i,
                                   (long long)shape[i]);
        numel *= shape[i];
    }
    int64_t bytes = numel * (int64_t)esize;
    if (c->budget && bytes > *c->budget)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT,
                               "the graph needs more host memory than its input justifies");
    if (c->budget)
        *c->budget -= bytes;
    /* The budget counts what a run uses, reused storage included, so a
     * graph is judged the same on every run. */
    sleapc_status st = sleapc__rt_storage(c->pool, t, (size_t)bytes);
    if (st == SLEAPC_ERR_NOMEM)
        return sleapc__fail(st, "run ONNX: %s: out of memory", c->path);
    if (st)
        return sleapc__rt_fail(c, st, "a result's storage is not its pool's");
    t->data = t->buf;
    t->last_bytes = (size_t)bytes;
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = numel;
    t->owned = true;
    t->set = true;
    return SLEAPC_OK;
}

void sleapc__rt_release(rt_tensor *t)
{
    rt_tensor keep = *t;
    memset(t, 0, sizeof *t);
    t->buf = keep.buf;
    t->cap = keep.cap;
    t->pooled = keep.pooled;
    t->pref = keep.pref;
    t->last_bytes = keep.last_bytes;
}

void sleapc__rt_free(rt_tensor *t)
{
    if (!t->pooled)
        sleapc__aligned_free(t->buf);
    memset(t, 0, sizeof *t);
}

sleapc_status sleapc__rt_scratch(const rt_op_ctx *c, size_t bytes, void **out)
{
    rt_scratch *s = c->scratch;
    *out = NULL;
    if (!s)
        return sleapc__rt_fail(c, SLEAPC_ERR_STATE, "no scratch memory to run in");
    if (!s->data || bytes > s->cap) {
        sleapc__aligned_free(s->data);
        s->cap = 0;
        s->data = sleapc__aligned_alloc(bytes ? bytes : 1);
        if (!s->data)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "run ONNX: %s: out of memory", c->path);
        s->cap = bytes;
    }
    *out = s->data;
    return SLEAPC_OK;
}

void sleapc__rt_view(rt_tensor *t, const sleapc_onnx_tensor *src)
{
    sleapc__rt_release(t);
    t->dtype = src->dtype;
    t->ndim = src->ndim;
    memcpy(t->shape, src->shape, sizeof t->shape);
    t->numel = src->numel;
    t->data = src->data;
    t->set = true;
}

sleapc_status sleapc__rt_copy(const rt_op_ctx *c, const rt_tensor *src, rt_tensor *t)
{
    sleapc_status st = sleapc__rt_alloc(c, t, src->dtype, src->ndim, src->shape);
    if (!st && src->numel)
        memcpy(t->data, src->data, (size_t)src->numel * sleapc__rt_esize(src));
    return st;
}

sleapc_status sleapc__rt_ints(const rt_op_ctx *c, const rt_tensor *t, int cap, int64_t *out,
                              int *n_out)
{
    *n_out = 0;
    if (!t || t->ndim > 1 ||
        (t->dtype != SLEAPC_ONNX_DTYPE_INT64 && t->dtype != SLEAPC_ONNX_DTYPE_INT32))
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects a list of integers");
    if (t->numel > cap)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%lld integers (at most %d)",
                               (long long)t->numel, cap);
    for (int64_t i = 0; i < t->numel; i++)
        out[i] = t->dtype == SLEAPC_ONNX_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                                     : ((const int32_t *)t->data)[i];
    *n_out = (int)t->numel;
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_scalar(const rt_op_ctx *c, const rt_tensor *t, double *out)
{
    if (!t || t->numel != 1)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects a single value");
    switch (t->dtype) {
    case SLEAPC_ONNX_DTYPE_FLOAT:
        *out = ((const float *)t->data)[0];
        return SLEAPC_OK;
    case SLEAPC_ONNX_DTYPE_DOUBLE:
        *out = ((const double *)t->data)[0];
        return SLEAPC_OK;
    case SLEAPC_ONNX_DTYPE_INT64:
        *out = (double)((const int64_t *)t->data)[0];
        return SLEAPC_OK;
    case SLEAPC_ONNX_DTYPE_INT32:
        *out = ((const int32_t *)t->data)[0];
        return SLEAPC_OK;
    case SLEAPC_ONNX_DTYPE_BOOL:
    case SLEAPC_ONNX_DTYPE_UINT8:
        *out = ((const uint8_t *)t->data)[0];
        return SLEAPC_OK;
    default:
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "a %s value",
                               sleapc__onnx_dtype_name(t->dtype));
    }
}

static sleapc_status attr_of(const rt_op_ctx *c, const char *name, sleapc_onnx_attr_type type,
                             const sleapc_onnx_attr **out)
{
    *out = sleapc__onnx_node_attr(c->node, name);
    if (*out && (*out)->type != type)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "attribute %s has type %d", name,
                               (int)(*out)->type);
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_attr_int(const rt_op_ctx *c, const char *name, int64_t def, int64_t *out)
{
    const sleapc_onnx_attr *a = NULL;
    sleapc_status st = attr_of(c, name, SLEAPC_ONNX_ATTR_INT, &a);
    *out = a ? a->i : def;
    return st;
}

sleapc_status sleapc__rt_attr_float(const rt_op_ctx *c, const char *name, float def, float *out)
{
    const sleapc_onnx_attr *a = NULL;
    sleapc_status st = attr_of(c, name, SLEAPC_ONNX_ATTR_FLOAT, &a);
    *out = a ? a->f : def;
    return st;
}

sleapc_status sleapc__rt_attr_ints(const rt_op_ctx *c, const char *name, int cap, int64_t *out,
                                   int *n_out)
{
    const sleapc_onnx_attr *a = NULL;
    sleapc_status st = attr_of(c, name, SLEAPC_ONNX_ATTR_INTS, &a);
    *n_out = 0;
    if (st || !a)
        return st;
    if (a->n_ints > cap)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%s has %d values", name, a->n_ints);
    memcpy(out, a->ints, (size_t)a->n_ints * sizeof *out);
    *n_out = a->n_ints;
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_attr_str(const rt_op_ctx *c, const char *name, const char *def,
                                  const char **out)
{
    const sleapc_onnx_attr *a = NULL;
    sleapc_status st = attr_of(c, name, SLEAPC_ONNX_ATTR_STRING, &a);
    *out = a && a->s ? a->s : def;
    return st;
}

sleapc_status sleapc__rt_axis(const rt_op_ctx *c, int64_t a, int r, int *out)
{
    if (a < -r || a >= r)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "axis %lld of a rank-%d tensor", (long long)a,
                               r);
    *out = (int)(a < 0 ? a + r : a);
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_broadcast(const rt_op_ctx *c, rt_tensor *const *ts, int n, int *ndim,
                                   int64_t *shape)
{
    int r = 0;
    for (int k = 0; k < n; k++)
        r = ts[k]->ndim > r ? ts[k]->ndim : r;
    for (int i = 0; i < r; i++)
        shape[i] = 1;
    for (int k = 0; k < n; k++) {
        int off = r - ts[k]->ndim;
        for (int i = 0; i < ts[k]->ndim; i++) {
            int64_t d = ts[k]->shape[i];
            if (d == shape[off + i] || d == 1)
                continue;
            if (shape[off + i] != 1)
                return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT,
                                       "shapes do not broadcast (%lld vs %lld on axis %d)",
                                       (long long)shape[off + i], (long long)d, off + i);
            shape[off + i] = d;
        }
    }
    *ndim = r;
    return SLEAPC_OK;
}

void sleapc__rt_bcast_strides(const rt_tensor *t, int ndim, const int64_t *shape, int64_t *strides)
{
    int off = ndim - t->ndim;
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (i < off) {
            strides[i] = 0;
            continue;
        }
        int64_t d = t->shape[i - off];
        strides[i] = d == 1 && shape[i] != 1 ? 0 : s;
        s *= d;
    }
}

void sleapc__rt_iter_init(rt_iter *it, int ndim, const int64_t *shape, rt_tensor *const *ts, int n)
{
    memset(it, 0, sizeof *it);
    it->ndim = ndim;
    it->n = n;
    memcpy(it->shape, shape, (size_t)ndim * sizeof *shape);
    for (int k = 0; k < n; k++)
        sleapc__rt_bcast_strides(ts[k], ndim, shape, it->strides[k]);
}

void sleapc__rt_iter_next(rt_iter *it)
{
    for (int i = it->ndim - 1; i >= 0; i--) {
        for (int k = 0; k < it->n; k++)
            it->off[k] += it->strides[k][i];
        if (++it->idx[i] < it->shape[i])
            return;
        for (int k = 0; k < it->n; k++)
            it->off[k] -= it->strides[k][i] * it->shape[i];
        it->idx[i] = 0;
    }
}
