/* A tiny protobuf writer for building ONNX models inside tests (synthetic
 * graphs, hostile nesting). Field numbers are onnx.proto's. Test code: plain
 * malloc, aborts on out of memory. */
#ifndef SLEAPC_TEST_ONNX_PB_WRITER_H
#define SLEAPC_TEST_ONNX_PB_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
    uint8_t *d;
    size_t n, cap;
} pb;

static inline void pb_raw(pb *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
        if (!b->d)
            abort();
    }
    if (n)
        memcpy(b->d + b->n, p, n);
    b->n += n;
}

static inline void pb_varint(pb *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pb_raw(b, tmp, n);
}

static inline void pb_key(pb *b, int field, int wire_type)
{
    pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire_type);
}

static inline void pb_int(pb *b, int field, int64_t v)
{
    pb_key(b, field, 0);
    pb_varint(b, (uint64_t)v);
}

static inline void pb_float(pb *b, int field, float v)
{
    uint8_t le[4];
    uint32_t u;
    memcpy(&u, &v, 4);
    for (int i = 0; i < 4; i++)
        le[i] = (uint8_t)(u >> (8 * i));
    pb_key(b, field, 5);
    pb_raw(b, le, 4);
}

static inline void pb_bytes(pb *b, int field, const void *p, size_t n)
{
    pb_key(b, field, 2);
    pb_varint(b, n);
    pb_raw(b, p, n);
}

static inline void pb_str(pb *b, int field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* Append sub as a length-delimited field and free it. */
static inline void pb_sub(pb *b, int field, pb *sub)
{
    pb_bytes(b, field, sub->d, sub->n);
    free(sub->d);
    memset(sub, 0, sizeof *sub);
}

/* TensorProto with little-endian raw_data (a little-endian test host). */
static inline pb onnx_tensor(const char *name, int dtype, int ndim, const int64_t *dims,
                             const void *raw, size_t raw_n)
{
    pb t = {0};
    for (int i = 0; i < ndim; i++)
        pb_int(&t, 1, dims[i]);
    pb_int(&t, 2, dtype);
    pb_str(&t, 8, name);
    pb_bytes(&t, 9, raw, raw_n);
    return t;
}

static inline pb onnx_float_tensor(const char *name, int ndim, const int64_t *dims, const float *v)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)dims[i];
    return onnx_tensor(name, 1, ndim, dims, v, n * sizeof(float));
}

static inline pb onnx_int64_tensor(const char *name, int ndim, const int64_t *dims,
                                   const int64_t *v)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)dims[i];
    return onnx_tensor(name, 7, ndim, dims, v, n * sizeof(int64_t));
}

/* AttributeProto: name 1, f 2, i 3, s 4, t 5, ints 8, type 20. */
static inline pb onnx_attr_int(const char *name, int64_t v)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 3, v);
    pb_int(&a, 20, 2);
    return a;
}

static inline pb onnx_attr_float(const char *name, float v)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_float(&a, 2, v);
    pb_int(&a, 20, 1);
    return a;
}

static inline pb onnx_attr_ints(const char *name, int n, const int64_t *v)
{
    pb a = {0};
    pb_str(&a, 1, name);
    for (int i = 0; i < n; i++)
        pb_int(&a, 8, v[i]);
    pb_int(&a, 20, 7);
    return a;
}

static inline pb onnx_attr_str(const char *name, const char *s)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_str(&a, 4, s);
    pb_int(&a, 20, 3);
    return a;
}

static inline pb onnx_attr_tensor(const char *name, pb *t)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_sub(&a, 5, t);
    pb_int(&a, 20, 4);
    return a;
}

/* NodeProto: input 1, output 2, name 3, op_type 4, attribute 5. ins/outs are
 * NULL-terminated; "" is an omitted optional input. attrs are consumed. */
static inline pb onnx_node(const char *op, const char *name, const char *const *ins,
                           const char *const *outs, pb *attrs, int n_attrs)
{
    pb n = {0};
    for (int i = 0; ins && ins[i]; i++)
        pb_str(&n, 1, ins[i]);
    for (int i = 0; outs && outs[i]; i++)
        pb_str(&n, 2, outs[i]);
    pb_str(&n, 3, name);
    pb_str(&n, 4, op);
    for (int i = 0; i < n_attrs; i++)
        pb_sub(&n, 5, &attrs[i]);
    return n;
}

/* ValueInfoProto with a tensor type; a negative dim is symbolic ("N"). */
static inline pb onnx_value(const char *name, int elem_type, int ndim, const int64_t *dims)
{
    pb shape = {0};
    for (int i = 0; i < ndim; i++) {
        pb d = {0};
        if (dims[i] >= 0)
            pb_int(&d, 1, dims[i]);
        else
            pb_str(&d, 2, "N");
        pb_sub(&shape, 1, &d);
    }
    pb tensor = {0};
    pb_int(&tensor, 1, elem_type);
    pb_sub(&tensor, 2, &shape);
    pb type = {0};
    pb_sub(&type, 1, &tensor);
    pb v = {0};
    pb_str(&v, 1, name);
    pb_sub(&v, 2, &type);
    return v;
}

/* GraphProto fields: node 1, name 2, initializer 5, input 11, output 12. */
enum { ONNX_GRAPH_NODE = 1, ONNX_GRAPH_INIT = 5, ONNX_GRAPH_INPUT = 11, ONNX_GRAPH_OUTPUT = 12 };

/* ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8. */
static inline pb onnx_model(pb *graph, int opset)
{
    pb m = {0};
    pb_int(&m, 1, 8);
    pb_str(&m, 2, "sleapc-test");
    pb_sub(&m, 7, graph);
    pb op = {0};
    pb_str(&op, 1, "");
    pb_int(&op, 2, opset);
    pb_sub(&m, 8, &op);
    return m;
}

#endif
