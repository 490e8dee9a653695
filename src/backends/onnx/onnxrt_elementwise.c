/* Element-wise host kernels with NumPy broadcasting: arithmetic, comparisons,
 * Pow, logic, Max/Min, Where, unary maths, Cast, Clip. Integer arithmetic wraps
 * (computed unsigned) and division by zero is an error, so no input can hit
 * undefined behaviour. */
#include <math.h>
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"

static bool is_op(const rt_op_ctx *c, const char *op)
{
    return strcmp(c->node->op_type, op) == 0;
}

static bool numeric(const rt_tensor *t)
{
    return t->dtype == SLEAPC_ONNX_DTYPE_FLOAT || t->dtype == SLEAPC_ONNX_DTYPE_INT64;
}

/* Inputs present, of one dtype; the broadcast result allocated as out_dtype
 * (0: the inputs' dtype) and an iterator over it. */
static sleapc_status prepare(const rt_op_ctx *c, rt_tensor *const *in, int n, int first,
                             sleapc_onnx_dtype out_dtype, rt_tensor *out, rt_iter *it)
{
    for (int k = 0; k < n; k++)
        if (!in[k] || !in[k]->set)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "input %d is missing", k);
    for (int k = first + 1; k < n; k++)
        if (in[k]->dtype != in[first]->dtype)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "inputs of types %s and %s",
                                   sleapc__onnx_dtype_name(in[first]->dtype),
                                   sleapc__onnx_dtype_name(in[k]->dtype));
    int ndim = 0;
    int64_t shape[RT_MAX_DIMS];
    sleapc_status st = sleapc__rt_broadcast(c, in, n, &ndim, shape);
    if (!st)
        st = sleapc__rt_alloc(c, out, out_dtype ? out_dtype : in[first]->dtype, ndim, shape);
    if (!st)
        sleapc__rt_iter_init(it, ndim, shape, in, n);
    return st;
}

/* Python's %: the result takes the divisor's sign (ONNX Mod, fmod=0). */
static int64_t py_mod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

sleapc_status sleapc__rt_op_binary(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    if (n_in != 2)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects 2 inputs");
    rt_iter it;
    sleapc_status st = prepare(c, in, 2, 0, 0, out, &it);
    if (st)
        return st;
    if (!numeric(in[0]))
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%s inputs",
                               sleapc__onnx_dtype_name(in[0]->dtype));
    int64_t fmod_attr = 0;
    st = sleapc__rt_attr_int(c, "fmod", 0, &fmod_attr);
    if (st)
        return st;
    char op = is_op(c, "Add")   ? '+'
              : is_op(c, "Sub") ? '-'
              : is_op(c, "Mul") ? '*'
              : is_op(c, "Div") ? '/'
              : is_op(c, "Pow") ? '^'
                                : '%';
    /* Pow: float only (an embedding export's standardize and GeM pool). */
    if (op == '^' && in[0]->dtype != SLEAPC_ONNX_DTYPE_FLOAT)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%s inputs",
                               sleapc__onnx_dtype_name(in[0]->dtype));
    if (in[0]->dtype == SLEAPC_ONNX_DTYPE_FLOAT) {
        const float *a = in[0]->data, *b = in[1]->data;
        float *d = out->data;
        if (op == '%' && !fmod_attr)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "float Mod needs fmod=1");
        for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it)) {
            float x = a[it.off[0]], y = b[it.off[1]];
            d[i] = op == '+'   ? x + y
                   : op == '-' ? x - y
                   : op == '*' ? x * y
                   : op == '/' ? x / y
                   : op == '^' ? powf(x, y)
                               : fmodf(x, y);
        }
        return SLEAPC_OK;
    }
    const int64_t *a = in[0]->data, *b = in[1]->data;
    int64_t *d = out->data;
    for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it)) {
        int64_t x = a[it.off[0]], y = b[it.off[1]];
        uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
        if ((op == '/' || op == '%') && y == 0)
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "integer division by zero");
        switch (op) {
        case '+':
            d[i] = (int64_t)(ux + uy);
            break;
        case '-':
            d[i] = (int64_t)(ux - uy);
            break;
        case '*':
            d[i] = (int64_t)(ux * uy);
            break;
        case '/':
            d[i] = y == -1 ? (int64_t)(0 - ux) : x / y; /* truncation, as ONNX Runtime */
            break;
        default:
            d[i] = fmod_attr ? (y == -1 ? 0 : x % y) : py_mod(x, y);
            break;
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_compare(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out)
{
    (void)n_out;
    if (n_in != 2)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects 2 inputs");
    rt_iter it;
    sleapc_status st = prepare(c, in, 2, 0, SLEAPC_ONNX_DTYPE_BOOL, out, &it);
    if (st)
        return st;
    /* x < y, x == y, or both (LessOrEqual); Greater* swap the operands. */
    bool ge = is_op(c, "GreaterOrEqual"), le = is_op(c, "LessOrEqual");
    bool eq = is_op(c, "Equal"), swap = ge || is_op(c, "Greater");
    bool lt = !eq, eq_too = eq || ge || le;
    uint8_t *d = out->data;
    for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it)) {
        double x, y;
        switch (in[0]->dtype) {
        case SLEAPC_ONNX_DTYPE_FLOAT:
            x = ((const float *)in[0]->data)[it.off[0]];
            y = ((const float *)in[1]->data)[it.off[1]];
            break;
        case SLEAPC_ONNX_DTYPE_INT64: {
            int64_t a = ((const int64_t *)in[0]->data)[it.off[0]];
            int64_t b = ((const int64_t *)in[1]->data)[it.off[1]];
            if (swap) {
                int64_t t = a;
                a = b;
                b = t;
            }
            d[i] = (lt && a < b) || (eq_too && a == b);
            continue;
        }
        case SLEAPC_ONNX_DTYPE_BOOL:
            x = ((const uint8_t *)in[0]->data)[it.off[0]];
            y = ((const uint8_t *)in[1]->data)[it.off[1]];
            break;
        default:
            return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%s inputs",
                                   sleapc__onnx_dtype_name(in[0]->dtype));
        }
        if (swap) {
            double t = x;
            x = y;
            y = t;
        }
        d[i] = (lt && x < y) || (eq_too && x == y);
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_logic(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out)
{
    (void)n_out;
    if (n_in != 2)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects 2 inputs");
    rt_iter it;
    sleapc_status st = prepare(c, in, 2, 0, 0, out, &it);
    if (st)
        return st;
    if (in[0]->dtype != SLEAPC_ONNX_DTYPE_BOOL)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects bool inputs");
    bool and_op = is_op(c, "And"), or_op = is_op(c, "Or");
    const uint8_t *a = in[0]->data, *b = in[1]->data;
    uint8_t *d = out->data;
    for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it)) {
        bool x = a[it.off[0]] != 0, y = b[it.off[1]] != 0;
        d[i] = and_op ? (x && y) : or_op ? (x || y) : (x != y);
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_max(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                int n_out)
{
    (void)n_out;
    if (n_in < 1 || n_in > 4)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%d inputs (1 to 4)", n_in);
    rt_iter it;
    sleapc_status st = prepare(c, in, n_in, 0, 0, out, &it);
    if (st)
        return st;
    if (!numeric(in[0]))
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%s inputs",
                               sleapc__onnx_dtype_name(in[0]->dtype));
    bool is_max = is_op(c, "Max");
    for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it)) {
        if (in[0]->dtype == SLEAPC_ONNX_DTYPE_FLOAT) {
            float m = ((const float *)in[0]->data)[it.off[0]];
            for (int k = 1; k < n_in; k++) {
                float v = ((const float *)in[k]->data)[it.off[k]];
                /* NaN propagates, as in ONNX Runtime. */
                if (isnan(v) || (is_max ? v > m : v < m))
                    m = v;
            }
            ((float *)out->data)[i] = m;
        } else {
            int64_t m = ((const int64_t *)in[0]->data)[it.off[0]];
            for (int k = 1; k < n_in; k++) {
                int64_t v = ((const int64_t *)in[k]->data)[it.off[k]];
                if (is_max ? v > m : v < m)
                    m = v;
            }
            ((int64_t *)out->data)[i] = m;
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_where(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out)
{
    (void)n_out;
    if (n_in != 3)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects 3 inputs");
    rt_iter it;
    sleapc_status st = prepare(c, in, 3, 1, 0, out, &it);
    if (st)
        return st;
    if (in[0]->dtype != SLEAPC_ONNX_DTYPE_BOOL)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "the condition is not bool");
    size_t es = sleapc__rt_esize(out);
    const uint8_t *cond = in[0]->data;
    const uint8_t *x = in[1]->data, *y = in[2]->data;
    uint8_t *d = out->data;
    for (int64_t i = 0; i < out->numel; i++, sleapc__rt_iter_next(&it)) {
        const uint8_t *src =
            cond[it.off[0]] ? x + (size_t)it.off[1] * es : y + (size_t)it.off[2] * es;
        memcpy(d + (size_t)i * es, src, es);
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_unary(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out)
{
    (void)n_out;
    if (n_in < 1 || !in[0])
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects an input");
    const rt_tensor *x = in[0];
    bool not_op = is_op(c, "Not");
    if (not_op != (x->dtype == SLEAPC_ONNX_DTYPE_BOOL) ||
        (!not_op && x->dtype != SLEAPC_ONNX_DTYPE_FLOAT))
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "%s input",
                               sleapc__onnx_dtype_name(x->dtype));
    sleapc_status st = sleapc__rt_alloc(c, out, x->dtype, x->ndim, x->shape);
    if (st)
        return st;
    if (not_op) {
        for (int64_t i = 0; i < x->numel; i++)
            ((uint8_t *)out->data)[i] = !((const uint8_t *)x->data)[i];
        return SLEAPC_OK;
    }
    const float *s = x->data;
    float *d = out->data;
    const char *op = c->node->op_type;
    for (int64_t i = 0; i < x->numel; i++) {
        float v = s[i];
        if (strcmp(op, "Sqrt") == 0)
            d[i] = sqrtf(v);
        else if (strcmp(op, "Reciprocal") == 0)
            d[i] = 1.0f / v;
        else if (strcmp(op, "Neg") == 0)
            d[i] = -v;
        else if (strcmp(op, "Abs") == 0)
            d[i] = fabsf(v);
        else if (strcmp(op, "Floor") == 0)
            d[i] = floorf(v);
        else if (strcmp(op, "Ceil") == 0)
            d[i] = ceilf(v);
        else if (strcmp(op, "Relu") == 0)
            d[i] = v > 0.0f ? v : isnan(v) ? v : 0.0f;
        else
            d[i] = expf(v);
    }
    return SLEAPC_OK;
}

/* One element of t as a double (FLOAT, INT64, INT32, BOOL, UINT8). */
static double get(const rt_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case SLEAPC_ONNX_DTYPE_FLOAT:
        return ((const float *)t->data)[i];
    case SLEAPC_ONNX_DTYPE_INT64:
        return (double)((const int64_t *)t->data)[i];
    case SLEAPC_ONNX_DTYPE_INT32:
        return ((const int32_t *)t->data)[i];
    default:
        return ((const uint8_t *)t->data)[i];
    }
}

/* A float to an integer type: truncation toward zero, saturated (C leaves
 * out-of-range conversions undefined). */
static int64_t to_int64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 9.2233720368547758e18)
        return INT64_MAX;
    if (v <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)v;
}

sleapc_status sleapc__rt_op_cast(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                 int n_out)
{
    (void)n_out;
    int64_t to = 0;
    sleapc_status st = sleapc__rt_attr_int(c, "to", 0, &to);
    if (st)
        return st;
    if (n_in < 1 || !in[0])
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects an input");
    const rt_tensor *x = in[0];
    sleapc_onnx_dtype dt = (sleapc_onnx_dtype)to;
    bool ok_in = numeric(x) || x->dtype == SLEAPC_ONNX_DTYPE_BOOL ||
                 x->dtype == SLEAPC_ONNX_DTYPE_UINT8 || x->dtype == SLEAPC_ONNX_DTYPE_INT32;
    bool ok_out = dt == SLEAPC_ONNX_DTYPE_FLOAT || dt == SLEAPC_ONNX_DTYPE_INT64 ||
                  dt == SLEAPC_ONNX_DTYPE_INT32 || dt == SLEAPC_ONNX_DTYPE_BOOL ||
                  dt == SLEAPC_ONNX_DTYPE_UINT8;
    if (!ok_in || !ok_out)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "cast from %s to type %lld",
                               sleapc__onnx_dtype_name(x->dtype), (long long)to);
    st = sleapc__rt_alloc(c, out, dt, x->ndim, x->shape);
    if (st)
        return st;
    for (int64_t i = 0; i < x->numel; i++) {
        if (x->dtype == SLEAPC_ONNX_DTYPE_INT64 && dt == SLEAPC_ONNX_DTYPE_INT64) {
            ((int64_t *)out->data)[i] = ((const int64_t *)x->data)[i];
            continue;
        }
        double v = get(x, i);
        switch (dt) {
        case SLEAPC_ONNX_DTYPE_FLOAT:
            ((float *)out->data)[i] = (float)v;
            break;
        case SLEAPC_ONNX_DTYPE_INT64:
            ((int64_t *)out->data)[i] = to_int64(v);
            break;
        case SLEAPC_ONNX_DTYPE_INT32: {
            int64_t w = to_int64(v);
            ((int32_t *)out->data)[i] = (int32_t)(uint32_t)(uint64_t)w;
            break;
        }
        case SLEAPC_ONNX_DTYPE_BOOL:
            ((uint8_t *)out->data)[i] = v != 0.0;
            break;
        default:
            ((uint8_t *)out->data)[i] = (uint8_t)(uint64_t)to_int64(v);
            break;
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_clip(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                 int n_out)
{
    (void)n_out;
    if (n_in < 1 || !in[0] || !numeric(in[0]))
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects a numeric input");
    const rt_tensor *x = in[0];
    double lo = -INFINITY, hi = INFINITY;
    sleapc_status st = SLEAPC_OK;
    if (n_in > 1 && in[1])
        st = sleapc__rt_scalar(c, in[1], &lo);
    if (!st && n_in > 2 && in[2])
        st = sleapc__rt_scalar(c, in[2], &hi);
    if (!st)
        st = sleapc__rt_alloc(c, out, x->dtype, x->ndim, x->shape);
    if (st)
        return st;
    for (int64_t i = 0; i < x->numel; i++) {
        if (x->dtype == SLEAPC_ONNX_DTYPE_FLOAT) {
            float v = ((const float *)x->data)[i];
            v = v < (float)lo ? (float)lo : v;
            ((float *)out->data)[i] = v > (float)hi ? (float)hi : v;
        } else {
            int64_t v = ((const int64_t *)x->data)[i];
            v = (double)v < lo ? to_int64(lo) : v;
            ((int64_t *)out->data)[i] = (double)v > hi ? to_int64(hi) : v;
        }
    }
    return SLEAPC_OK;
}
