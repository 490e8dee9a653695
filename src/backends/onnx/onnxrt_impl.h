/* Private to src/backends/onnx: host tensors, the plan (steps over value slots) and
 * the host op kernels. */
#ifndef SLEAPC_BACKENDS_ONNX_ONNXRT_IMPL_H
#define SLEAPC_BACKENDS_ONNX_ONNXRT_IMPL_H

#include <stdbool.h>

#include "backends/backend.h"
#include "backends/onnx/onnxrt.h"
#include "core/weights.h"
#include "model/graph.h"

#define RT_MAX_DIMS SLEAPC_ONNX_MAX_DIMS
/* Elements in one host tensor: far above any frame's maps (8 x 3 x 4096 x
 * 4096 uint8 is 2^28.6), low enough that byte counts and index arithmetic
 * never overflow. */
#define RT_MAX_NUMEL ((int64_t)1 << 29)

/* A host value: FLOAT, INT64, INT32, BOOL or UINT8. */
typedef struct rt_tensor {
    sleapc_onnx_dtype dtype;
    int ndim;
    int64_t shape[RT_MAX_DIMS];
    int64_t numel;
    void *data; /* buf when `owned`; else a view of a constant or the input */
    bool owned;
    bool set; /* holds a value in this run */
    /* Storage (aligned), kept when the value is released (it is still this
     * tensor's) and given back to the pool after the value's last read. */
    void *buf;
    size_t cap;        /* bytes */
    int pooled;        /* the pool buffer buf is (index + 1); 0: its own or none */
    int pref;          /* the pool buffer it took last (index + 1): tried first */
    size_t last_bytes; /* bytes of the last value it held (for measuring) */
} rt_tensor;

/* Storage the values of a run share: a value takes a free buffer when it is
 * computed and gives it back after its last read (onnxrt_pool.c). Buffers
 * are never freed before destroy, only grown, so once a run has sized them
 * for a shape, that shape takes the same buffers again without allocating. */
typedef struct rt_pool_buf {
    void *data;
    size_t cap; /* bytes */
    bool busy;
} rt_pool_buf;

typedef struct rt_pool {
    int n, cap_bufs;
    rt_pool_buf *bufs;
    int busy; /* buffers held by values now */
    int peak; /* most held at once since the run began */
} rt_pool;

/* Storage of at least `bytes` for t: its own when large enough, else its
 * pool buffer grown, else (pool given, t without storage) a pool buffer:
 * the one it took last time when free and large enough, else the smallest
 * free one that fits, else its last or the largest free one grown, else a
 * new one. SLEAPC_ERR_NOMEM without a message. */
sleapc_status sleapc__rt_storage(rt_pool *pool, rt_tensor *t, size_t bytes);

/* Unset t and give its pool buffer back (a tensor with its own storage
 * keeps it). */
void sleapc__rt_pool_put(rt_pool *pool, rt_tensor *t);

void sleapc__rt_pool_free(rt_pool *pool);

/* Scratch memory a kernel uses within one call; kept across runs. */
typedef struct rt_scratch {
    void *data;
    size_t cap; /* bytes */
} rt_scratch;

/* What a kernel knows of its node, for attributes and messages. */
typedef struct rt_op_ctx {
    const sleapc_onnx_node *node;
    const char *path;
    int64_t *budget;     /* host bytes this run may still allocate; NULL: no limit */
    rt_scratch *scratch; /* the runner's; required by sleapc__rt_scratch */
    rt_pool *pool;       /* where results take storage; NULL: their own */
} rt_op_ctx;

/* A host kernel: in[i] NULL for an omitted optional input; it fills out[0..n_out-1]
 * (released and unset on entry) with sleapc__rt_alloc. */
typedef sleapc_status (*rt_op_fn)(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);

/* SLEAPC_ERR_FORMAT etc. "run ONNX: <file>: node <name> (<op>): <reason>". */
sleapc_status sleapc__rt_fail(const rt_op_ctx *c, sleapc_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Make t an owned value of dtype and shape (numel and the run's budget
 * checked), in its own storage when that is large enough, else in a new
 * buffer. The contents are not cleared. */
sleapc_status sleapc__rt_alloc(const rt_op_ctx *c, rt_tensor *t, sleapc_onnx_dtype dtype, int ndim,
                               const int64_t *shape);

/* Unset t, keeping its storage for the next value. */
void sleapc__rt_release(rt_tensor *t);

/* Unset t and free its storage (a pool buffer stays the pool's). */
void sleapc__rt_free(rt_tensor *t);

/* *out: at least `bytes` of scratch, valid until the kernel returns (the
 * runner's buffer, grown when needed). */
sleapc_status sleapc__rt_scratch(const rt_op_ctx *c, size_t bytes, void **out);

/* A view of a constant (not owned). */
void sleapc__rt_view(rt_tensor *t, const sleapc_onnx_tensor *src);

/* Copy src into a new owned t (same dtype and shape). */
sleapc_status sleapc__rt_copy(const rt_op_ctx *c, const rt_tensor *src, rt_tensor *t);

size_t sleapc__rt_esize(const rt_tensor *t);

/* Inputs 0..n-1 present and computed (SLEAPC_ERR_FORMAT naming the first
 * missing one). */
sleapc_status sleapc__rt_need(const rt_op_ctx *c, rt_tensor *const *in, int n_in, int n);

/* Integer elements of a 0-d or 1-d INT64/INT32 tensor, at most cap. */
sleapc_status sleapc__rt_ints(const rt_op_ctx *c, const rt_tensor *t, int cap, int64_t *out,
                              int *n_out);

/* The single element of a numeric tensor, as a double. */
sleapc_status sleapc__rt_scalar(const rt_op_ctx *c, const rt_tensor *t, double *out);

/* Attributes with defaults; a present attribute of another type is
 * SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__rt_attr_int(const rt_op_ctx *c, const char *name, int64_t def, int64_t *out);
sleapc_status sleapc__rt_attr_float(const rt_op_ctx *c, const char *name, float def, float *out);
sleapc_status sleapc__rt_attr_ints(const rt_op_ctx *c, const char *name, int cap, int64_t *out,
                                   int *n_out);
sleapc_status sleapc__rt_attr_str(const rt_op_ctx *c, const char *name, const char *def,
                                  const char **out);

/* Axis a of a rank-r tensor, negative from the end, checked. */
sleapc_status sleapc__rt_axis(const rt_op_ctx *c, int64_t a, int r, int *out);

/* NumPy broadcasting: the shape of n tensors together, and per tensor the
 * element strides of that shape (0 along broadcast dimensions). */
sleapc_status sleapc__rt_broadcast(const rt_op_ctx *c, rt_tensor *const *ts, int n, int *ndim,
                                   int64_t *shape);
void sleapc__rt_bcast_strides(const rt_tensor *t, int ndim, const int64_t *shape, int64_t *strides);

/* Walks the elements of `shape` in C order, keeping up to 4 broadcast offsets. */
typedef struct rt_iter {
    int ndim;
    int n;
    int64_t shape[RT_MAX_DIMS];
    int64_t idx[RT_MAX_DIMS];
    int64_t strides[4][RT_MAX_DIMS];
    int64_t off[4];
} rt_iter;

void sleapc__rt_iter_init(rt_iter *it, int ndim, const int64_t *shape, rt_tensor *const *ts, int n);
void sleapc__rt_iter_next(rt_iter *it);

/* Host kernels, by file. onnxrt_elementwise.c: */
sleapc_status sleapc__rt_op_binary(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_compare(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_logic(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_max(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                int n_out);
sleapc_status sleapc__rt_op_where(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_unary(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_cast(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                 int n_out);
sleapc_status sleapc__rt_op_clip(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                 int n_out);

/* onnxrt_shape.c and onnxrt_index.c: */
sleapc_status sleapc__rt_op_shape(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_reshape(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_unsqueeze(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                      rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_squeeze(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_concat(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_slice(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_gather(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_gather_elements(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                            rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_expand(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_constant_of_shape(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                              rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_range(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                  rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_transpose(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                      rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_pad(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                int n_out);
sleapc_status sleapc__rt_op_identity(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                     rt_tensor *out, int n_out);

/* onnxrt_reduce.c: */
sleapc_status sleapc__rt_op_flatten(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                    rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_gemm(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                 rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_reduce(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_argmax(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_topk(const rt_op_ctx *c, rt_tensor *const *in, int n_in, rt_tensor *out,
                                 int n_out);

/* onnxrt_sample.c: */
sleapc_status sleapc__rt_op_grid_sample(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                        rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_resize(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out);
sleapc_status sleapc__rt_op_scatter_nd(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                       rt_tensor *out, int n_out);

/* The host kernel for an op type (onnxrt_kernels.c); NULL when there is none. */
rt_op_fn sleapc__rt_kernel(const char *op_type);

/* ---- The plan (onnxrt_plan.c) and its execution (onnxrt_run.c). ---- */

typedef struct rt_value {
    const char *name; /* borrowed from the model */
    rt_tensor t;
    bool is_const; /* bound at plan time, never released by a run */
} rt_value;

typedef enum rt_step_kind { RT_STEP_HOST, RT_STEP_SEGMENT, RT_STEP_IF } rt_step_kind;

typedef struct rt_block rt_block;

typedef struct rt_step {
    rt_step_kind kind;
    const sleapc_onnx_node *node; /* HOST, IF */
    rt_op_fn fn;                  /* HOST */
    int seg;                      /* SEGMENT */
    int n_in;
    int *in; /* value slots; -1 = omitted */
    int n_out;
    int *out;
    rt_block *branch[2]; /* IF: then, else */
    /* Main block: values whose last read (or, never read, whose definition)
     * is this step, a read inside a branch counting as the If's; their
     * storage goes back to the pool after it. Graph outputs are never here. */
    int n_release;
    int *release;
} rt_step;

struct rt_block {
    int n_steps;
    int cap_steps;
    rt_step *steps;
    int n_outputs;
    int *outputs; /* value slots a branch yields */
};

typedef struct rt_segment {
    sleapc_graph g;
    sleapc_weights w;
    sleapc_backend *be;
    int input; /* value slot */
    int n_outputs;
    int *outputs; /* value slot of IR output "k" */
    int n_nodes;
    int *nodes; /* ONNX node indices (plan time) */
} rt_segment;

struct sleapc_onnxrt {
    const sleapc_onnx_model *om;
    const char *path;
    int n_vals;
    rt_value *vals;
    int input; /* the graph input's slot */
    rt_block main;
    int n_segs;
    rt_segment *segs;
    int n_outputs;
    int *outputs;       /* graph outputs' slots */
    int64_t budget;     /* host bytes left to this run (onnxrt_run.c) */
    rt_scratch scratch; /* kernels' scratch, kept across runs */
    rt_pool pool;       /* the values' storage */
};

/* Host memory the runner holds now (value storage and scratch), and how the
 * last run used it (onnxrt_pool.c; for tests and measurements). */
typedef struct rt_mem_stats {
    size_t held;    /* value storage + scratch, bytes */
    size_t scratch; /* of which kernel scratch */
    int n_bufs;     /* pool buffers */
    int peak_live;  /* most pool buffers held by values at once in the last run */
} rt_mem_stats;

void sleapc__onnxrt_mem_stats(const sleapc_onnxrt *rt, rt_mem_stats *out);

/* rt_mem_stats.held. */
size_t sleapc__onnxrt_bytes_held(const sleapc_onnxrt *rt);

/* Run a block's steps in order (onnxrt_run.c). */
sleapc_status sleapc__rt_run_block(sleapc_onnxrt *rt, const rt_block *b);

void sleapc__rt_block_free(rt_block *b);

#endif
