/* Indexing host kernels: Concat, Slice, Gather, GatherElements, Transpose,
 * Pad. They move
 * elements without looking at them, so every dtype works; every index is
 * checked against its tensor. */
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"

sleapc_status sleapc__rt_op_concat(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axis_attr = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, n_in > 0 ? n_in : 1);
    if (!st)
        st = sleapc__rt_attr_int(c, "axis", 0, &axis_attr);
    if (st)
        return st;
    const rt_tensor *x0 = in[0];
    int a = 0;
    st = sleapc__rt_axis(c, axis_attr, x0->ndim, &a);
    if (st)
        return st;
    int64_t shape[RT_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[a] = 0;
    for (int k = 0; k < n_in; k++) {
        bool ok = in[k]->ndim == x0->ndim && in[k]->dtype == x0->dtype;
        for (int i = 0; ok && i < x0->ndim; i++)
            ok = i == a || in[k]->shape[i] == x0->shape[i];
        if (!ok)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "input %d does not fit", k);
        shape[a] += in[k]->shape[a];
    }
    st = sleapc__rt_alloc(c, out, x0->dtype, x0->ndim, shape);
    if (st)
        return st;
    /* Outer rows (dims before the axis) of contiguous blocks. */
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++)
        outer *= shape[i];
    for (int i = a + 1; i < x0->ndim; i++)
        inner *= shape[i];
    size_t es = sleapc__rt_esize(out);
    uint8_t *d = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int k = 0; k < n_in; k++) {
            size_t len = (size_t)(in[k]->shape[a] * inner) * es;
            memcpy(d, (const uint8_t *)in[k]->data + (size_t)o * len, len);
            d += len;
        }
    return SLEAPC_OK;
}

/* ONNX Slice bounds for one axis of length n (negative: from the end; clamped
 * to [0, n] for a positive step, [-1, n-1] for a negative one). */
static void slice_bounds(int64_t n, int64_t step, int64_t *start, int64_t *end, int64_t *count)
{
    int64_t s = *start, e = *end;
    s = s < 0 ? s + n : s;
    e = e < 0 ? e + n : e;
    if (step > 0) {
        s = s < 0 ? 0 : s > n ? n : s;
        e = e < 0 ? 0 : e > n ? n : e;
        *count = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
        s = s < 0 ? -1 : s > n - 1 ? n - 1 : s;
        e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
        *count = s > e ? (s - e - 1) / -step + 1 : 0;
    }
    *start = s;
    *end = e;
}

sleapc_status sleapc__rt_op_slice(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t starts[RT_MAX_DIMS], ends[RT_MAX_DIMS], axes[RT_MAX_DIMS], steps[RT_MAX_DIMS];
    int ns = 0, ne = 0, na = 0, nt = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 3);
    if (!st)
        st = sleapc__rt_ints(c, in[1], RT_MAX_DIMS, starts, &ns);
    if (!st)
        st = sleapc__rt_ints(c, in[2], RT_MAX_DIMS, ends, &ne);
    if (!st && n_in > 3 && in[3])
        st = sleapc__rt_ints(c, in[3], RT_MAX_DIMS, axes, &na);
    if (!st && n_in > 4 && in[4])
        st = sleapc__rt_ints(c, in[4], RT_MAX_DIMS, steps, &nt);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    if (ne != ns || (na && na != ns) || (nt && nt != ns))
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "starts, ends, axes, steps differ in length");
    int64_t first[RT_MAX_DIMS], step[RT_MAX_DIMS], shape[RT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        first[i] = 0;
        step[i] = 1;
        shape[i] = x->shape[i];
    }
    bool seen[RT_MAX_DIMS] = {false};
    for (int k = 0; k < ns; k++) {
        int a = k;
        st = sleapc__rt_axis(c, na ? axes[k] : k, x->ndim, &a);
        if (st)
            return st;
        int64_t s = starts[k], e = ends[k], t = nt ? steps[k] : 1, count = 0;
        if (t == 0 || t == INT64_MIN || seen[a])
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "step 0 or axis %d twice", a);
        seen[a] = true;
        slice_bounds(x->shape[a], t, &s, &e, &count);
        first[a] = s;
        step[a] = t;
        shape[a] = count;
    }
    st = sleapc__rt_alloc(c, out, x->dtype, x->ndim, shape);
    if (st)
        return st;
    int64_t xs[RT_MAX_DIMS];
    int64_t s = 1;
    for (int i = x->ndim - 1; i >= 0; i--) {
        xs[i] = s;
        s *= x->shape[i];
    }
    size_t es = sleapc__rt_esize(x);
    int64_t idx[RT_MAX_DIMS] = {0};
    for (int64_t o = 0; o < out->numel; o++) {
        int64_t src = 0;
        for (int i = 0; i < x->ndim; i++)
            src += (first[i] + idx[i] * step[i]) * xs[i];
        memcpy((uint8_t *)out->data + (size_t)o * es, (const uint8_t *)x->data + (size_t)src * es,
               es);
        for (int i = x->ndim - 1; i >= 0 && ++idx[i] == shape[i]; i--)
            idx[i] = 0;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_gather(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axis_attr = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 2);
    if (!st)
        st = sleapc__rt_attr_int(c, "axis", 0, &axis_attr);
    if (st)
        return st;
    const rt_tensor *x = in[0], *ix = in[1];
    int a = 0;
    st = sleapc__rt_axis(c, axis_attr, x->ndim, &a);
    if (st)
        return st;
    if (ix->dtype != SLEAPC_ONNX_DTYPE_INT64 && ix->dtype != SLEAPC_ONNX_DTYPE_INT32)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "indices are not integers");
    int r = x->ndim - 1 + ix->ndim;
    if (r > RT_MAX_DIMS)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "rank %d", r);
    int64_t shape[RT_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < a; i++)
        shape[k++] = x->shape[i];
    for (int i = 0; i < ix->ndim; i++)
        shape[k++] = ix->shape[i];
    for (int i = a + 1; i < x->ndim; i++)
        shape[k++] = x->shape[i];
    st = sleapc__rt_alloc(c, out, x->dtype, r, shape);
    if (st)
        return st;
    int64_t outer = 1, inner = 1, n = x->shape[a];
    for (int i = 0; i < a; i++)
        outer *= x->shape[i];
    for (int i = a + 1; i < x->ndim; i++)
        inner *= x->shape[i];
    size_t row = (size_t)inner * sleapc__rt_esize(x);
    uint8_t *d = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < ix->numel; j++) {
            int64_t v = ix->dtype == SLEAPC_ONNX_DTYPE_INT64 ? ((const int64_t *)ix->data)[j]
                                                             : ((const int32_t *)ix->data)[j];
            v = v < 0 ? v + n : v;
            if (v < 0 || v >= n)
                return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "index %lld out of [0, %lld)",
                                       (long long)v, (long long)n);
            memcpy(d, (const uint8_t *)x->data + (size_t)(o * n + v) * row, row);
            d += row;
        }
    return SLEAPC_OK;
}

/* out[i] = x[i with its `axis` index replaced by indices[i]]: out has the
 * indices' shape, which must fit inside x's on every other axis (ONNX
 * Runtime's check; the spec leaves larger ones undefined). */
sleapc_status sleapc__rt_op_gather_elements(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                            rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t axis_attr = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 2);
    if (!st)
        st = sleapc__rt_attr_int(c, "axis", 0, &axis_attr);
    if (st)
        return st;
    const rt_tensor *x = in[0], *ix = in[1];
    int a = 0;
    st = sleapc__rt_axis(c, axis_attr, x->ndim, &a);
    if (st)
        return st;
    if (ix->dtype != SLEAPC_ONNX_DTYPE_INT64 && ix->dtype != SLEAPC_ONNX_DTYPE_INT32)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "indices are not integers");
    if (ix->ndim != x->ndim)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "indices of rank %d for data of rank %d",
                               ix->ndim, x->ndim);
    for (int i = 0; i < x->ndim; i++)
        if (i != a && ix->shape[i] > x->shape[i])
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT,
                                   "indices dimension %d is %lld, data's only %lld", i,
                                   (long long)ix->shape[i], (long long)x->shape[i]);
    st = sleapc__rt_alloc(c, out, x->dtype, ix->ndim, ix->shape);
    if (st || out->numel == 0)
        return st;
    int64_t xs[RT_MAX_DIMS], idx[RT_MAX_DIMS] = {0}, n = x->shape[a], s = 1;
    for (int i = x->ndim - 1; i >= 0; i--) {
        xs[i] = s;
        s *= x->shape[i];
    }
    size_t es = sleapc__rt_esize(x);
    for (int64_t j = 0; j < out->numel; j++) {
        int64_t v = ix->dtype == SLEAPC_ONNX_DTYPE_INT64 ? ((const int64_t *)ix->data)[j]
                                                         : ((const int32_t *)ix->data)[j];
        v = v < 0 ? v + n : v;
        if (v < 0 || v >= n)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "index %lld out of [0, %lld)",
                                   (long long)v, (long long)n);
        int64_t off = 0;
        for (int i = 0; i < x->ndim; i++)
            off += (i == a ? v : idx[i]) * xs[i];
        memcpy((uint8_t *)out->data + (size_t)j * es, (const uint8_t *)x->data + (size_t)off * es,
               es);
        /* The next index of the indices' shape, in C order. */
        for (int i = ix->ndim - 1; i >= 0 && ++idx[i] == ix->shape[i]; i--)
            idx[i] = 0;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_transpose(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                      rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t perm[RT_MAX_DIMS];
    int np = 0;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 1);
    if (!st)
        st = sleapc__rt_attr_ints(c, "perm", RT_MAX_DIMS, perm, &np);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    int r = x->ndim;
    bool used[RT_MAX_DIMS] = {false};
    if (np == 0)
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    else if (np != r)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "perm of %d axes for rank %d", np, r);
    int64_t shape[RT_MAX_DIMS], xs[RT_MAX_DIMS], ps[RT_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r || used[perm[i]])
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "perm is not a permutation");
        used[perm[i]] = true;
    }
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        xs[i] = s;
        s *= x->shape[i];
    }
    for (int i = 0; i < r; i++) {
        shape[i] = x->shape[perm[i]];
        ps[i] = xs[perm[i]];
    }
    st = sleapc__rt_alloc(c, out, x->dtype, r, shape);
    if (st)
        return st;
    size_t es = sleapc__rt_esize(x);
    int64_t idx[RT_MAX_DIMS] = {0};
    for (int64_t o = 0; o < out->numel; o++) {
        int64_t src = 0;
        for (int i = 0; i < r; i++)
            src += idx[i] * ps[i];
        memcpy((uint8_t *)out->data + (size_t)o * es, (const uint8_t *)x->data + (size_t)src * es,
               es);
        for (int i = r - 1; i >= 0 && ++idx[i] == shape[i]; i--)
            idx[i] = 0;
    }
    return SLEAPC_OK;
}

/* Pad, mode "constant" (negative pads crop). */
sleapc_status sleapc__rt_op_pad(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                int n_out)
{
    (void)n_out;
    int64_t pads[2 * RT_MAX_DIMS];
    int np = 0;
    const char *mode = NULL;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 2);
    if (!st)
        st = sleapc__rt_ints(c, in[1], 2 * RT_MAX_DIMS, pads, &np);
    if (!st)
        st = sleapc__rt_attr_str(c, "mode", "constant", &mode);
    if (st)
        return st;
    const rt_tensor *x = in[0];
    int r = x->ndim;
    if (strcmp(mode, "constant") != 0 || np != 2 * r || (n_in > 3 && in[3]))
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED,
                               "mode %s with %d pads (constant, all axes)", mode, np);
    uint8_t fill[8] = {0};
    size_t es = sleapc__rt_esize(x);
    if (n_in > 2 && in[2] && in[2]->numel > 0) {
        if (in[2]->dtype != x->dtype || in[2]->numel != 1)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "constant_value does not match the data");
        memcpy(fill, in[2]->data, es);
    }
    int64_t shape[RT_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        bool ok = pads[i] >= -RT_MAX_NUMEL && pads[i] <= RT_MAX_NUMEL &&
                  pads[i + r] >= -RT_MAX_NUMEL && pads[i + r] <= RT_MAX_NUMEL;
        shape[i] = ok ? x->shape[i] + pads[i] + pads[i + r] : -1;
        if (shape[i] < 0)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "pads on axis %d", i);
    }
    st = sleapc__rt_alloc(c, out, x->dtype, r, shape);
    if (st)
        return st;
    int64_t xs[RT_MAX_DIMS];
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        xs[i] = s;
        s *= x->shape[i];
    }
    int64_t idx[RT_MAX_DIMS] = {0};
    for (int64_t o = 0; o < out->numel; o++) {
        int64_t src = 0;
        bool inside = true;
        for (int i = 0; i < r && inside; i++) {
            int64_t p = idx[i] - pads[i];
            inside = p >= 0 && p < x->shape[i];
            src += p * xs[i];
        }
        memcpy((uint8_t *)out->data + (size_t)o * es,
               inside ? (const uint8_t *)x->data + (size_t)src * es : fill, es);
        for (int i = r - 1; i >= 0 && ++idx[i] == shape[i]; i--)
            idx[i] = 0;
    }
    return SLEAPC_OK;
}
