/* Shape host kernels: Shape, Reshape, Unsqueeze, Squeeze, Expand,
 * ConstantOfShape, Range, Identity. They move elements without looking at
 * them, so every dtype works. */
#include <math.h>
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"

/* out = x with another shape (same element count). */
static sleapc_status reshaped(const rt_op_ctx *c, const rt_tensor *x, int ndim,
                              const int64_t *shape, rt_tensor *out)
{
    sleapc_status st = sleapc__rt_alloc(c, out, x->dtype, ndim, shape);
    if (st)
        return st;
    if (out->numel != x->numel)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "%lld elements cannot take %lld",
                               (long long)x->numel, (long long)out->numel);
    if (x->numel)
        memcpy(out->data, x->data, (size_t)x->numel * sleapc__rt_esize(x));
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_identity(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                     rt_tensor *out, int n_out)
{
    (void)n_out;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    return st ? st : sleapc__rt_copy(c, in[0], out);
}

sleapc_status sleapc__rt_op_shape(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t start = 0, end = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    int r = st ? 0 : in[0]->ndim;
    if (!st)
        st = sleapc__rt_attr_int(c, "start", 0, &start);
    if (!st)
        st = sleapc__rt_attr_int(c, "end", r, &end);
    if (st)
        return st;
    start = start < 0 ? start + r : start;
    end = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < start ? start : end > r ? r : end;
    int64_t len = end - start;
    st = sleapc__rt_alloc(c, out, SLEAPC_ONNX_DTYPE_INT64, 1, &len);
    for (int64_t i = 0; !st && i < len; i++)
        ((int64_t *)out->data)[i] = in[0]->shape[start + i];
    return st;
}

sleapc_status sleapc__rt_op_reshape(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t dims[RT_MAX_DIMS], allow_zero = 0;
    int nd = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 2);
    if (!st)
        st = sleapc__rt_ints(c, in[1], RT_MAX_DIMS, dims, &nd);
    if (!st)
        st = sleapc__rt_attr_int(c, "allowzero", 0, &allow_zero);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < nd; i++) {
        if (dims[i] == 0 && !allow_zero) {
            if (i >= x->ndim)
                return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "0 copies a missing dimension");
            dims[i] = x->shape[i];
        }
        if (dims[i] == -1) {
            if (infer >= 0)
                return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "two -1 dimensions");
            infer = i;
        } else if (dims[i] < 0 || (dims[i] > 0 && known > RT_MAX_NUMEL / dims[i])) {
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "dimension %lld", (long long)dims[i]);
        } else {
            known *= dims[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || x->numel % known)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "cannot infer the -1 dimension");
        dims[infer] = x->numel / known;
    }
    return reshaped(c, x, nd, dims, out);
}

/* Flatten: the dimensions before axis into one, the rest into another. */
sleapc_status sleapc__rt_op_flatten(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axis = 1;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    if (!st)
        st = sleapc__rt_attr_int(c, "axis", 1, &axis);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    if (axis < 0)
        axis += x->ndim;
    if (axis < 0 || axis > x->ndim)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "axis %lld of a %d-D input", (long long)axis,
                               x->ndim);
    int64_t dims[2] = {1, 1};
    for (int i = 0; i < x->ndim; i++)
        dims[i < axis ? 0 : 1] *= x->shape[i];
    return reshaped(c, x, 2, dims, out);
}

/* Unsqueeze/Squeeze axes: an input since opset 13, else an attribute. */
static sleapc_status axes_of(const rt_op_ctx *c, rt_tensor *const *in, int n_in, int64_t *axes,
                             int *n)
{
    if (n_in > 1 && in[1])
        return sleapc__rt_ints(c, in[1], RT_MAX_DIMS, axes, n);
    return sleapc__rt_attr_ints(c, "axes", RT_MAX_DIMS, axes, n);
}

sleapc_status sleapc__rt_op_unsqueeze(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                      rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axes[RT_MAX_DIMS];
    int na = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    if (!st)
        st = axes_of(c, in, n_in, axes, &na);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    int r = x->ndim + na;
    if (r > RT_MAX_DIMS)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "rank %d", r);
    bool inserted[RT_MAX_DIMS] = {false};
    for (int i = 0; i < na; i++) {
        int a = 0;
        st = sleapc__rt_axis(c, axes[i], r, &a);
        if (st)
            return st;
        if (inserted[a])
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "axis %d twice", a);
        inserted[a] = true;
    }
    int64_t shape[RT_MAX_DIMS];
    for (int i = 0, k = 0; i < r; i++)
        shape[i] = inserted[i] ? 1 : x->shape[k++];
    return reshaped(c, x, r, shape, out);
}

sleapc_status sleapc__rt_op_squeeze(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axes[RT_MAX_DIMS];
    int na = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    if (!st)
        st = axes_of(c, in, n_in, axes, &na);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    bool drop[RT_MAX_DIMS] = {false};
    for (int i = 0; i < na; i++) {
        int a = 0;
        st = sleapc__rt_axis(c, axes[i], x->ndim, &a);
        if (st)
            return st;
        if (x->shape[a] != 1)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "axis %d has size %lld", a,
                                   (long long)x->shape[a]);
        drop[a] = true;
    }
    int64_t shape[RT_MAX_DIMS];
    int r = 0;
    for (int i = 0; i < x->ndim; i++)
        if (!(na ? drop[i] : x->shape[i] == 1))
            shape[r++] = x->shape[i];
    return reshaped(c, x, r, shape, out);
}

/* out = x broadcast to `shape` (any dtype). */
static sleapc_status broadcast_to(const rt_op_ctx *c, const rt_tensor *x, int ndim,
                                  const int64_t *shape, rt_tensor *out)
{
    sleapc_status st = sleapc__rt_alloc(c, out, x->dtype, ndim, shape);
    if (st)
        return st;
    rt_tensor *xs[1] = {(rt_tensor *)x};
    rt_iter it;
    sleapc__rt_iter_init(&it, ndim, shape, xs, 1);
    size_t es = sleapc__rt_esize(x);
    for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it))
        memcpy((uint8_t *)out->data + (size_t)i * es,
               (const uint8_t *)x->data + (size_t)it.off[0] * es, es);
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_expand(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t dims[RT_MAX_DIMS];
    int nd = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 2);
    if (!st)
        st = sleapc__rt_ints(c, in[1], RT_MAX_DIMS, dims, &nd);
    if (st)
        return st;
    rt_tensor target = {.dtype = SLEAPC_ONNX_DTYPE_UINT8, .ndim = nd};
    memcpy(target.shape, dims, (size_t)nd * sizeof *dims);
    for (int i = 0; i < nd; i++)
        if (dims[i] < 0)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "dimension %lld", (long long)dims[i]);
    rt_tensor *both[2] = {in[0], &target};
    int ndim = 0;
    int64_t shape[RT_MAX_DIMS];
    st = sleapc__rt_broadcast(c, both, 2, &ndim, shape);
    return st ? st : broadcast_to(c, in[0], ndim, shape, out);
}

sleapc_status sleapc__rt_op_constant_of_shape(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                              rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t dims[RT_MAX_DIMS];
    int nd = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    if (!st)
        st = sleapc__rt_ints(c, in[0], RT_MAX_DIMS, dims, &nd);
    if (st)
        return st;
    const sleapc_onnx_attr *v = sleapc__onnx_node_attr(c->node, "value");
    float zero = 0.0f;
    const void *fill = &zero;
    sleapc_onnx_dtype dt = SLEAPC_ONNX_DTYPE_FLOAT;
    if (v) {
        if (v->type != SLEAPC_ONNX_ATTR_TENSOR || !v->t || v->t->numel != 1)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "value is not a one-element tensor");
        fill = v->t->data;
        dt = v->t->dtype;
    }
    st = sleapc__rt_alloc(c, out, dt, nd, dims);
    if (st)
        return st;
    size_t es = sleapc__rt_esize(out);
    for (int64_t i = 0; i < out->numel; i++)
        memcpy((uint8_t *)out->data + (size_t)i * es, fill, es);
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_range(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out)
{
    (void)n_out;
    double start = 0, limit = 0, delta = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 3);
    if (!st)
        st = sleapc__rt_scalar(c, in[0], &start);
    if (!st)
        st = sleapc__rt_scalar(c, in[1], &limit);
    if (!st)
        st = sleapc__rt_scalar(c, in[2], &delta);
    if (st)
        return st;
    sleapc_onnx_dtype dt = in[0]->dtype;
    bool ints = dt == SLEAPC_ONNX_DTYPE_INT64;
    if (delta == 0 || (dt != SLEAPC_ONNX_DTYPE_FLOAT && !ints) || in[1]->dtype != dt ||
        in[2]->dtype != dt)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "delta 0 or a %s range",
                               sleapc__onnx_dtype_name(dt));
    double n = ceil((limit - start) / delta);
    if (!(n <= (double)RT_MAX_NUMEL))
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "range of %g elements", n);
    int64_t len = n > 0 ? (int64_t)n : 0;
    st = sleapc__rt_alloc(c, out, dt, 1, &len);
    /* Integers exactly (unsigned: no overflow), floats as start + i * delta. */
    uint64_t i0 = ints ? (uint64_t)((const int64_t *)in[0]->data)[0] : 0;
    uint64_t di = ints ? (uint64_t)((const int64_t *)in[2]->data)[0] : 0;
    for (int64_t i = 0; !st && i < len; i++) {
        if (ints)
            ((int64_t *)out->data)[i] = (int64_t)(i0 + (uint64_t)i * di);
        else
            ((float *)out->data)[i] = (float)(start + (double)i * delta);
    }
    return st;
}
