/* TensorProto -> sleapc_onnx_tensor: shape checks, then the values from
 * raw_data (little-endian bytes) or from the typed repeated field the ONNX
 * spec assigns to the data type. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/onnx/onnx_impl.h"

/* Tensors larger than this are not model constants sleapc can use. */
#define TENSOR_MAX_BYTES ((uint64_t)1 << 34)

size_t sleapc__onnx_dtype_size(sleapc_onnx_dtype dtype)
{
    switch (dtype) {
    case SLEAPC_ONNX_DTYPE_UINT8:
    case SLEAPC_ONNX_DTYPE_INT8:
    case SLEAPC_ONNX_DTYPE_BOOL:
        return 1;
    case SLEAPC_ONNX_DTYPE_UINT16:
    case SLEAPC_ONNX_DTYPE_INT16:
    case SLEAPC_ONNX_DTYPE_FLOAT16:
        return 2;
    case SLEAPC_ONNX_DTYPE_FLOAT:
    case SLEAPC_ONNX_DTYPE_INT32:
    case SLEAPC_ONNX_DTYPE_UINT32:
        return 4;
    case SLEAPC_ONNX_DTYPE_INT64:
    case SLEAPC_ONNX_DTYPE_DOUBLE:
    case SLEAPC_ONNX_DTYPE_UINT64:
        return 8;
    case SLEAPC_ONNX_DTYPE_UNDEFINED:
    case SLEAPC_ONNX_DTYPE_STRING:
        break;
    }
    return 0;
}

const char *sleapc__onnx_dtype_name(sleapc_onnx_dtype dtype)
{
    switch (dtype) {
    case SLEAPC_ONNX_DTYPE_UNDEFINED:
        return "undefined";
    case SLEAPC_ONNX_DTYPE_FLOAT:
        return "float32";
    case SLEAPC_ONNX_DTYPE_UINT8:
        return "uint8";
    case SLEAPC_ONNX_DTYPE_INT8:
        return "int8";
    case SLEAPC_ONNX_DTYPE_UINT16:
        return "uint16";
    case SLEAPC_ONNX_DTYPE_INT16:
        return "int16";
    case SLEAPC_ONNX_DTYPE_INT32:
        return "int32";
    case SLEAPC_ONNX_DTYPE_INT64:
        return "int64";
    case SLEAPC_ONNX_DTYPE_STRING:
        return "string";
    case SLEAPC_ONNX_DTYPE_BOOL:
        return "bool";
    case SLEAPC_ONNX_DTYPE_FLOAT16:
        return "float16";
    case SLEAPC_ONNX_DTYPE_DOUBLE:
        return "float64";
    case SLEAPC_ONNX_DTYPE_UINT32:
        return "uint32";
    case SLEAPC_ONNX_DTYPE_UINT64:
        return "uint64";
    }
    return "unknown";
}

/* n elements of esize bytes, little-endian in src, to host order. */
static void copy_le(void *dst, const uint8_t *src, int64_t n, size_t esize)
{
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe == 1 || esize == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    uint8_t *d = dst;
    for (int64_t i = 0; i < n; i++)
        for (size_t k = 0; k < esize; k++)
            d[(size_t)i * esize + k] = src[(size_t)i * esize + esize - 1 - k];
}

/* The types ONNX stores in int32_data: each value narrowed to the element. */
static void copy_from_int32(void *dst, const int32_t *src, int64_t n, sleapc_onnx_dtype dtype)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dtype) {
        case SLEAPC_ONNX_DTYPE_INT32:
            ((int32_t *)dst)[i] = src[i];
            break;
        case SLEAPC_ONNX_DTYPE_INT16:
            ((int16_t *)dst)[i] = (int16_t)src[i];
            break;
        case SLEAPC_ONNX_DTYPE_UINT16:
        case SLEAPC_ONNX_DTYPE_FLOAT16:
            ((uint16_t *)dst)[i] = (uint16_t)src[i];
            break;
        case SLEAPC_ONNX_DTYPE_INT8:
            ((int8_t *)dst)[i] = (int8_t)src[i];
            break;
        case SLEAPC_ONNX_DTYPE_BOOL:
            ((uint8_t *)dst)[i] = src[i] != 0;
            break;
        default:
            ((uint8_t *)dst)[i] = (uint8_t)src[i];
            break;
        }
    }
}

/* The typed repeated field for dtype: its element count and, through copy,
 * the values. Returns false when the type has no such field. */
static bool typed_values(const Onnx__TensorProto *tp, sleapc_onnx_dtype dtype, void *dst,
                         int64_t numel, size_t *count)
{
    switch (dtype) {
    case SLEAPC_ONNX_DTYPE_FLOAT:
        *count = tp->n_float_data;
        if (dst && numel > 0 && *count == (size_t)numel)
            memcpy(dst, tp->float_data, (size_t)numel * sizeof(float));
        return true;
    case SLEAPC_ONNX_DTYPE_DOUBLE:
        *count = tp->n_double_data;
        if (dst && numel > 0 && *count == (size_t)numel)
            memcpy(dst, tp->double_data, (size_t)numel * sizeof(double));
        return true;
    case SLEAPC_ONNX_DTYPE_INT64:
        *count = tp->n_int64_data;
        if (dst && numel > 0 && *count == (size_t)numel)
            memcpy(dst, tp->int64_data, (size_t)numel * sizeof(int64_t));
        return true;
    case SLEAPC_ONNX_DTYPE_UINT32:
    case SLEAPC_ONNX_DTYPE_UINT64:
        *count = tp->n_uint64_data;
        if (dst && numel > 0 && *count == (size_t)numel) {
            for (int64_t i = 0; i < numel; i++) {
                if (dtype == SLEAPC_ONNX_DTYPE_UINT32)
                    ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
                else
                    ((uint64_t *)dst)[i] = tp->uint64_data[i];
            }
        }
        return true;
    case SLEAPC_ONNX_DTYPE_INT32:
    case SLEAPC_ONNX_DTYPE_INT16:
    case SLEAPC_ONNX_DTYPE_UINT16:
    case SLEAPC_ONNX_DTYPE_FLOAT16:
    case SLEAPC_ONNX_DTYPE_INT8:
    case SLEAPC_ONNX_DTYPE_UINT8:
    case SLEAPC_ONNX_DTYPE_BOOL:
        *count = tp->n_int32_data;
        if (dst && numel > 0 && *count == (size_t)numel)
            copy_from_int32(dst, tp->int32_data, numel, dtype);
        return true;
    default:
        return false;
    }
}

sleapc_status sleapc__onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *path,
                                             sleapc_onnx_tensor *out)
{
    memset(out, 0, sizeof *out);
    const char *name = tp->name ? tp->name : "";
    sleapc_status st = SLEAPC_OK;
    if (tp->n_dims > SLEAPC_ONNX_MAX_DIMS)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "read ONNX: %s: tensor \"%s\" has %zu dimensions", path, name,
                            tp->n_dims);
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "read ONNX: %s: tensor \"%s\" keeps its data in an external file", path,
                            name);
    if (tp->segment)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "read ONNX: %s: tensor \"%s\" is segmented",
                            path, name);
    sleapc_onnx_dtype dtype =
        tp->has_data_type ? (sleapc_onnx_dtype)tp->data_type : SLEAPC_ONNX_DTYPE_UNDEFINED;
    size_t esize = sleapc__onnx_dtype_size(dtype);
    if (esize == 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "read ONNX: %s: tensor \"%s\" has data type %d",
                            path, name, (int)dtype);
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        int64_t d = tp->dims[i];
        if (d < 0 || (d > 0 && (uint64_t)numel > TENSOR_MAX_BYTES / esize / (uint64_t)d))
            return sleapc__fail(SLEAPC_ERR_FORMAT,
                                "read ONNX: %s: tensor \"%s\" has dimension %lld", path, name,
                                (long long)d);
        numel *= d;
        out->shape[i] = d;
    }
    out->ndim = (int)tp->n_dims;
    out->dtype = dtype;
    out->numel = numel;
    size_t nbytes = (size_t)numel * esize;
    size_t count = 0;
    bool raw = tp->has_raw_data && tp->raw_data.len > 0;
    if (raw && tp->raw_data.len != nbytes)
        st = sleapc__fail(SLEAPC_ERR_FORMAT,
                          "read ONNX: %s: tensor \"%s\" has %zu data bytes, its shape needs %zu",
                          path, name, tp->raw_data.len, nbytes);
    else if (!raw && (!typed_values(tp, dtype, NULL, numel, &count) || count != (size_t)numel))
        st = sleapc__fail(SLEAPC_ERR_FORMAT,
                          "read ONNX: %s: tensor \"%s\" holds %zu values, its shape needs %lld",
                          path, name, count, (long long)numel);
    if (st)
        return st;
    out->name = sleapc__strdup(name);
    out->data = sleapc__aligned_alloc(nbytes ? nbytes : 1);
    if (!out->name || !out->data) {
        sleapc__onnx_tensor_clear(out);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read ONNX: %s: out of memory", path);
    }
    if (raw)
        copy_le(out->data, tp->raw_data.data, numel, esize);
    else
        typed_values(tp, dtype, out->data, numel, &count);
    return SLEAPC_OK;
}
