/* Gemm on the host: Y = alpha * A' B' + beta * C, A' and B' transposed when
 * transA / transB say so, C broadcast to (M, N). For the small layers the
 * host meets (an embedding export's fully connected head after its GeM
 * pool); a Gemm fed by a network runs in that network's segment. */
#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"

sleapc_status sleapc__rt_op_gemm(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                 rt_tensor *out, int n_out)
{
    (void)n_out;
    int64_t ta = 0, tb = 0;
    float alpha = 1.0f, beta = 1.0f;
    sleapc_status st = sleapc__rt_need(c, in, n_in, 2);
    if (!st)
        st = sleapc__rt_attr_int(c, "transA", 0, &ta);
    if (!st)
        st = sleapc__rt_attr_int(c, "transB", 0, &tb);
    if (!st)
        st = sleapc__rt_attr_float(c, "alpha", 1.0f, &alpha);
    if (!st)
        st = sleapc__rt_attr_float(c, "beta", 1.0f, &beta);
    if (st)
        return st;
    const rt_tensor *a = in[0], *b = in[1], *bias = n_in > 2 ? in[2] : NULL;
    if (a->dtype != SLEAPC_ONNX_DTYPE_FLOAT || b->dtype != SLEAPC_ONNX_DTYPE_FLOAT ||
        (bias && bias->dtype != SLEAPC_ONNX_DTYPE_FLOAT))
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "inputs other than float");
    if (a->ndim != 2 || b->ndim != 2)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "A and B must be 2-D (%d-D, %d-D)", a->ndim,
                               b->ndim);
    const int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
    const int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
    if (k != kb)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "A has %lld columns, B %lld rows",
                               (long long)k, (long long)kb);
    /* C: a scalar, (N), (1, N), (M, 1) or (M, N). */
    int64_t cs_m = 0, cs_n = 0;
    if (bias) {
        const int64_t cm = bias->ndim == 2 ? bias->shape[0] : 1;
        const int64_t cn = bias->ndim >= 1 ? bias->shape[bias->ndim - 1] : 1;
        if (bias->ndim > 2 || (cm != 1 && cm != m) || (cn != 1 && cn != n))
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "C does not broadcast to (%lld, %lld)",
                                   (long long)m, (long long)n);
        cs_m = cm == 1 ? 0 : cn;
        cs_n = cn == 1 ? 0 : 1;
    }
    st = sleapc__rt_alloc(c, out, SLEAPC_ONNX_DTYPE_FLOAT, 2, (int64_t[]){m, n});
    if (st)
        return st;
    const float *pa = a->data, *pb = b->data, *pc = bias ? bias->data : NULL;
    float *y = out->data;
    /* Element (i, p) of A' and (p, j) of B'. */
    const int64_t a_i = ta ? 1 : k, a_p = ta ? m : 1;
    const int64_t b_p = tb ? 1 : n, b_j = tb ? k : 1;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t p = 0; p < k; p++)
                acc += pa[i * a_i + p * a_p] * pb[p * b_p + j * b_j];
            float v = alpha * acc;
            if (pc)
                v += beta * pc[i * cs_m + j * cs_n];
            y[i * n + j] = v;
        }
    }
    return SLEAPC_OK;
}
