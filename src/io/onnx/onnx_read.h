/* ONNX model files (sleap-nn exports: model.onnx, model_raw.onnx): the parts
 * of an ONNX ModelProto that sleapc uses, copied out of the protobuf into
 * plain structs. Only this folder's .c files see protobuf-c. */
#ifndef SLEAPC_IO_ONNX_ONNX_READ_H
#define SLEAPC_IO_ONNX_ONNX_READ_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* TensorProto.DataType (onnx.proto). */
typedef enum sleapc_onnx_dtype {
    SLEAPC_ONNX_DTYPE_UNDEFINED = 0,
    SLEAPC_ONNX_DTYPE_FLOAT = 1,
    SLEAPC_ONNX_DTYPE_UINT8 = 2,
    SLEAPC_ONNX_DTYPE_INT8 = 3,
    SLEAPC_ONNX_DTYPE_UINT16 = 4,
    SLEAPC_ONNX_DTYPE_INT16 = 5,
    SLEAPC_ONNX_DTYPE_INT32 = 6,
    SLEAPC_ONNX_DTYPE_INT64 = 7,
    SLEAPC_ONNX_DTYPE_STRING = 8,
    SLEAPC_ONNX_DTYPE_BOOL = 9,
    SLEAPC_ONNX_DTYPE_FLOAT16 = 10,
    SLEAPC_ONNX_DTYPE_DOUBLE = 11,
    SLEAPC_ONNX_DTYPE_UINT32 = 12,
    SLEAPC_ONNX_DTYPE_UINT64 = 13
} sleapc_onnx_dtype;

/* AttributeProto.AttributeType (onnx.proto). */
typedef enum sleapc_onnx_attr_type {
    SLEAPC_ONNX_ATTR_UNDEFINED = 0,
    SLEAPC_ONNX_ATTR_FLOAT = 1,
    SLEAPC_ONNX_ATTR_INT = 2,
    SLEAPC_ONNX_ATTR_STRING = 3,
    SLEAPC_ONNX_ATTR_TENSOR = 4,
    SLEAPC_ONNX_ATTR_GRAPH = 5,
    SLEAPC_ONNX_ATTR_FLOATS = 6,
    SLEAPC_ONNX_ATTR_INTS = 7,
    SLEAPC_ONNX_ATTR_STRINGS = 8
} sleapc_onnx_attr_type;

#define SLEAPC_ONNX_MAX_DIMS 8

/* A constant: an initializer or a Constant node's / attribute's tensor. */
typedef struct sleapc_onnx_tensor {
    char *name; /* owned; "" when unnamed */
    sleapc_onnx_dtype dtype;
    int ndim; /* 0 for a scalar */
    int64_t shape[SLEAPC_ONNX_MAX_DIMS];
    int64_t numel;
    void *data; /* owned (sleapc__aligned_alloc): numel elements of
                   sleapc__onnx_dtype_size(dtype) bytes in host byte order;
                   BOOL is one byte 0/1, FLOAT16 its raw bits */
} sleapc_onnx_tensor;

typedef struct sleapc_onnx_graph sleapc_onnx_graph;

typedef struct sleapc_onnx_attr {
    char *name; /* owned */
    sleapc_onnx_attr_type type;
    float f;   /* FLOAT */
    int64_t i; /* INT */
    char *s;   /* owned, NUL-terminated (STRING); NULL otherwise */
    int n_floats;
    float *floats; /* owned (FLOATS: never NULL, also when empty) */
    int n_ints;
    int64_t *ints;         /* owned (INTS: never NULL, also when empty) */
    sleapc_onnx_tensor *t; /* owned (TENSOR) */
    sleapc_onnx_graph *g;  /* owned (GRAPH): the branches of If */
} sleapc_onnx_attr;

typedef struct sleapc_onnx_node {
    char *name;    /* owned; "" when absent */
    char *op_type; /* owned */
    char *domain;  /* owned; "" = the default ai.onnx domain */
    int n_inputs;
    char **inputs; /* owned; "" = an optional input left out */
    int n_outputs;
    char **outputs; /* owned */
    int n_attrs;
    sleapc_onnx_attr *attrs;
} sleapc_onnx_node;

/* A graph input or output (ValueInfoProto). */
typedef struct sleapc_onnx_value {
    char *name;                          /* owned */
    sleapc_onnx_dtype dtype;             /* UNDEFINED when not a tensor type */
    int ndim;                            /* -1 when the shape is not given */
    int64_t shape[SLEAPC_ONNX_MAX_DIMS]; /* -1 = symbolic (dim_param) or unknown */
} sleapc_onnx_value;

struct sleapc_onnx_graph {
    char *name; /* owned */
    int n_nodes;
    sleapc_onnx_node *nodes; /* in file order (topological in valid files) */
    int n_initializers;
    sleapc_onnx_tensor *initializers;
    int n_inputs;
    sleapc_onnx_value *inputs; /* may also list initializers (IR version < 4) */
    int n_outputs;
    sleapc_onnx_value *outputs;
};

/* The default-domain opsets whose operator semantics sleapc implements:
 * from 11 (Clip, Pad, Slice, TopK take their bounds as inputs, which the
 * interpreter reads) to 21 (later sets change operators it runs, or add
 * types it has not been checked against). A model importing another set is
 * refused when it is read. */
#define SLEAPC_ONNX_MIN_OPSET 11
#define SLEAPC_ONNX_MAX_OPSET 21

typedef struct sleapc_onnx_model {
    char *path; /* owned; the file, for messages */
    int64_t ir_version;
    int64_t opset;  /* default-domain opset, SLEAPC_ONNX_MIN_OPSET..SLEAPC_ONNX_MAX_OPSET */
    char *producer; /* owned: "pytorch 1.13.0", "" when absent */
    sleapc_onnx_graph graph;
    int n_props;
    char **prop_keys; /* owned metadata_props: "sleap_nn_metadata", ... */
    char **prop_values;
} sleapc_onnx_model;

/* Read and parse an ONNX file. The size is checked first (empty or over 2 GiB:
 * SLEAPC_ERR_FORMAT); every nesting level and length is checked against the
 * buffer before protobuf-c sees it, so a truncated, flipped or hostile file is
 * SLEAPC_ERR_FORMAT naming the file, never a crash. Tensors with external data
 * or an unknown data type, and a default-domain opset outside
 * SLEAPC_ONNX_MIN_OPSET..SLEAPC_ONNX_MAX_OPSET, are SLEAPC_ERR_UNSUPPORTED; a
 * model that imports no default-domain opset is SLEAPC_ERR_FORMAT. *out is NULL on failure;
 * free a result with sleapc__onnx_destroy. */
sleapc_status sleapc__onnx_read(const char *path, sleapc_onnx_model **out);

/* The same on a buffer (borrowed); path only names it in messages. */
sleapc_status sleapc__onnx_parse(const uint8_t *data, size_t size, const char *path,
                                 sleapc_onnx_model **out);

/* Accepts NULL. */
void sleapc__onnx_destroy(sleapc_onnx_model *m);

/* metadata_props value for key; NULL when absent. */
const char *sleapc__onnx_metadata(const sleapc_onnx_model *m, const char *key);

/* Attribute by name; NULL when the node does not set it. */
const sleapc_onnx_attr *sleapc__onnx_node_attr(const sleapc_onnx_node *n, const char *name);

/* Initializer by name; NULL when absent. */
const sleapc_onnx_tensor *sleapc__onnx_initializer(const sleapc_onnx_graph *g, const char *name);

/* Bytes per element; 0 for STRING, UNDEFINED and unknown values. */
size_t sleapc__onnx_dtype_size(sleapc_onnx_dtype dtype);

/* "float32", "int64", ...; static text. */
const char *sleapc__onnx_dtype_name(sleapc_onnx_dtype dtype);

#endif
