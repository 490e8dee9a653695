/* Private to the ONNX importer (from_onnx*.c): what every ONNX value is while
 * the graph is walked in order. */
#ifndef SLEAPC_MODEL_FROM_ONNX_IMPL_H
#define SLEAPC_MODEL_FROM_ONNX_IMPL_H

#include "model/from_onnx.h"

typedef enum onnx_val_kind {
    ONNX_VAL_UNDEFINED = 0, /* produced by a node not reached yet */
    ONNX_VAL_CONST,         /* an initializer or Constant output: t */
    ONNX_VAL_RAW_INPUT,     /* the uint8 graph input, before its Cast */
    ONNX_VAL_SCALED_INPUT,  /* the input as float32 in [0, 255] */
    ONNX_VAL_NODE,          /* the output of IR node `node` */
    ONNX_VAL_SHAPE          /* int64 shape arithmetic, tracked symbolically */
} onnx_val_kind;

/* One element of a symbolic shape: a constant, or dimension `axis` of the
 * output of IR node `node`. */
typedef struct onnx_sym {
    bool is_dim;
    int node;
    int axis;
    int64_t value;
} onnx_sym;

#define ONNX_SYM_MAX 8

typedef struct onnx_val {
    const char *name; /* borrowed from the ONNX model */
    onnx_val_kind kind;
    int n_uses;                  /* node inputs + graph outputs that read it */
    const sleapc_onnx_tensor *t; /* CONST */
    int node;                    /* NODE */
    int rank;                    /* NODE: 4 (B,C,H,W) or 2 (B,C) */
    bool pooled;                 /* NODE: GlobalMaxPool's (B,C,1,1), not flattened yet */
    bool scalar;                 /* SHAPE: a 0-d value (one element) */
    int n_sym;                   /* SHAPE */
    onnx_sym sym[ONNX_SYM_MAX];
} onnx_val;

typedef struct onnx_importer {
    const sleapc_onnx_model *om;
    const char *path;
    sleapc_weights *w;
    sleapc_graph *g;
    onnx_val *vals;
    int n_vals;
} onnx_importer;

/* The node's name for messages (its first output when it has none). */
const char *sleapc__onnx_imp_label(const sleapc_onnx_node *n);

/* Value by name; NULL when nothing declares it. */
onnx_val *sleapc__onnx_imp_val(onnx_importer *im, const char *name);

/* Input i of n, which must be defined (SLEAPC_ERR_FORMAT otherwise); an
 * omitted optional input ("" or past the end) gives *out = NULL. */
sleapc_status sleapc__onnx_imp_input(onnx_importer *im, const sleapc_onnx_node *n, int i,
                                     onnx_val **out);

/* Set output i of n to what v describes (name and use count are kept). */
sleapc_status sleapc__onnx_imp_define(onnx_importer *im, const sleapc_onnx_node *n, int i,
                                      const onnx_val *v);

/* SLEAPC_ERR_UNSUPPORTED "ONNX node <name> (<op>) is not supported[: reason]". */
sleapc_status sleapc__onnx_imp_unsupported(const onnx_importer *im, const sleapc_onnx_node *n,
                                           const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Integer and string attributes with their defaults; a present attribute of
 * another type is SLEAPC_ERR_FORMAT. ints: *n_out values (at most cap). */
sleapc_status sleapc__onnx_imp_attr_int(const onnx_importer *im, const sleapc_onnx_node *n,
                                        const char *name, int64_t def, int64_t *out);
sleapc_status sleapc__onnx_imp_attr_ints(const onnx_importer *im, const sleapc_onnx_node *n,
                                         const char *name, int cap, int64_t *out, int *n_out);
sleapc_status sleapc__onnx_imp_attr_str(const onnx_importer *im, const sleapc_onnx_node *n,
                                        const char *name, const char *def, const char **out);

/* A CONST value's integer elements (int64 or int32), at most cap. */
sleapc_status sleapc__onnx_imp_const_ints(const onnx_importer *im, const sleapc_onnx_node *n,
                                          const onnx_val *v, int cap, int64_t *out, int *n_out);

/* Append an IR node named after n and define output 0 of n as its result. */
sleapc_status sleapc__onnx_imp_add(onnx_importer *im, const sleapc_onnx_node *n, sleapc_node *node,
                                   int rank, bool pooled);

/* Channels of IR node i's output. */
sleapc_status sleapc__onnx_imp_channels(const onnx_importer *im, int i, int64_t *out);

/* Per-op handlers. from_onnx_glue.c: glue, normalisation, activations. */
sleapc_status sleapc__onnx_op_constant(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_identity(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_cast(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_normalise(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_activation(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_global_maxpool(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_flatten(onnx_importer *im, const sleapc_onnx_node *n);

/* from_onnx_ops.c: the network ops. */
sleapc_status sleapc__onnx_op_conv(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_conv_transpose(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_maxpool(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_resize(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_gemm(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_concat(onnx_importer *im, const sleapc_onnx_node *n);

/* from_onnx_shape.c: Shape/Gather/Slice/Unsqueeze/Squeeze/Concat on shapes,
 * and reading a Resize `sizes` value as "the size of another map". */
sleapc_status sleapc__onnx_op_shape(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_gather(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_slice(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_unsqueeze(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_op_squeeze(onnx_importer *im, const sleapc_onnx_node *n);
sleapc_status sleapc__onnx_shape_concat(onnx_importer *im, const sleapc_onnx_node *n, int64_t axis);

/* sizes (4 elements, or 2 with axes {2,3}) == [B, C of node x, H, W of some
 * map]: *like is that map's IR node. Anything else is unsupported. */
sleapc_status sleapc__onnx_sizes_like(onnx_importer *im, const sleapc_onnx_node *n,
                                      const onnx_val *sizes, int x, bool hw_only, int *like);

#endif
