/* Declarations shared by the oneDNN backend's files (and only them).
 *
 * A plan is built for one input shape: the graph's nodes are lowered in order
 * to a list of steps (oneDNN primitives) reading and writing values (tensors
 * in whatever layout the primitives chose). Reorders are added only where a
 * consumer wants another layout than its producer wrote, which in practice is
 * at the edges: the plain NCHW input and the plain NCHW outputs. Values lie
 * in one arena at offsets from the shared planner's packing
 * (model/graph_plan.h), and the arena, every memory object and primitive
 * exist before the first forward of the shape. */
#ifndef SLEAPC_BACKENDS_ONEDNN_IMPL_H
#define SLEAPC_BACKENDS_ONEDNN_IMPL_H

#include <dnnl.h>
#include <limits.h>
#include <stdbool.h>

#include "backends/backend.h"
#include "backends/bf16_policy.h"

#define ONEDNN_MAX_ARGS 8
#define ONEDNN_KEEP INT_MAX  /* last_step of a graph output: alive until the next forward */

/* One tensor of the plan. */
typedef struct onednn_value {
    dnnl_memory_desc_t md;
    size_t bytes;
    int def_step;     /* step writing it; -1: written before the steps (the input) */
    int last_step;    /* last step reading it, or ONEDNN_KEEP */
    int reorder_of;   /* the value this one is a reordered copy of; -1 if none */
    int64_t off;      /* byte offset in the plan's arena */
    dnnl_memory_t mem;
} onednn_value;

/* One primitive execution, or (prim NULL) the host sigmoid over value[0],
 * a plain float32 value. Arguments are either plan values or fixed
 * memories (packed weights, bias) owned by the node's pack. */
typedef struct onednn_step {
    dnnl_primitive_t prim;          /* NULL: the host sigmoid step */
    const char *name;               /* node name, for messages; static or the graph's */
    int n_args;
    int arg[ONEDNN_MAX_ARGS];       /* DNNL_ARG_* */
    int value[ONEDNN_MAX_ARGS];     /* plan value, or -1 for fixed[k] */
    dnnl_memory_t fixed[ONEDNN_MAX_ARGS];
    dnnl_memory_desc_t scratch_md;  /* user scratchpad the primitive needs */
    size_t scratch_bytes;
    dnnl_memory_t scratch_mem;      /* over the plan's shared scratch buffer */
    int n_exec;
    dnnl_exec_arg_t exec[ONEDNN_MAX_ARGS + 1];
} onednn_step;

/* Weights (or bias) of one node in the layout its primitive asked for. Kept
 * across plans while a re-planned primitive asks for the same layout. */
typedef struct onednn_pack {
    dnnl_memory_desc_t md;
    void *data;         /* owned; NULL when mem wraps the graph's own buffer */
    dnnl_memory_t mem;  /* NULL: not packed yet */
} onednn_pack;

typedef struct onednn_plan {
    int64_t shape[4];      /* (B, in_channels, H, W); zeros: no plan */
    int64_t (*shapes)[4];  /* per node, from sleapc__graph_infer_shapes */
    int *node_value;       /* node -> value holding its output */
    int out_value[SLEAPC_GRAPH_MAX_OUTPUTS];  /* plain float32 copy of each graph output */
    onednn_value *values;
    int n_values, cap_values;
    onednn_step *steps;
    int n_steps, cap_steps;
    void *arena;           /* every value, at its offset (model/graph_plan.h packs them) */
    int64_t arena_bytes;
    void *scratch;
} onednn_plan;

static inline float *onednn_value_data(const onednn_plan *p, int v)
{
    return (float *)((char *)p->arena + p->values[v].off);
}

typedef void (*onednn_omp_set_fn)(int);
typedef int (*onednn_omp_get_fn)(void);

typedef struct onednn_state {
    const sleapc_graph *g;  /* borrowed: the model outlives the backend */
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    sleapc_bf16_plan bf16;     /* --precision bf16: per-node types; n == 0 for fp32 */
    int n_threads;             /* <= 0: OpenMP's default (one per core) */
    onednn_omp_set_fn omp_set; /* NULL when OpenMP is not found at run time */
    onednn_omp_get_fn omp_get;
    onednn_pack *wpack;        /* per node */
    onednn_pack *bpack;        /* per node */
    onednn_plan plan;
} onednn_state;

/* SLEAPC_OK for dnnl_success; otherwise SLEAPC_ERR_BACKEND with the message
 * "<action>: node <name>: <oneDNN status>". */
sleapc_status sleapc__onednn_check(dnnl_status_t s, const char *action, const char *name);

/* SLEAPC_OK when node i can be lowered; SLEAPC_ERR_UNSUPPORTED naming it. */
sleapc_status sleapc__onednn_node_supported(const sleapc_graph *g, int i);

/* Lower node i (i > 0) into steps of the plan being built. */
sleapc_status sleapc__onednn_lower_node(onednn_state *s, int i);

/* Lower a GLOBAL_GEMPOOL or L2NORM node (onednn_embed.c). */
sleapc_status sleapc__onednn_lower_embed(onednn_state *s, int i);

/* Build the plan for (B, in_channels, H, W), replacing any previous one. On
 * failure no plan is left. */
sleapc_status sleapc__onednn_plan_build(onednn_state *s, const int64_t shape[4]);
void sleapc__onednn_plan_free(onednn_state *s);

/* Run every step of the plan (the input value already filled). */
sleapc_status sleapc__onednn_plan_run(onednn_state *s);

/* --- used by the lowering while a plan is built --- */

/* A primitive attribute with the user scratchpad mode (so that executing
 * never allocates) and, for act RELU, that eltwise post-op (any other act
 * adds none). Destroy with dnnl_primitive_attr_destroy. */
sleapc_status sleapc__onednn_attr(sleapc_act act, const char *name, dnnl_primitive_attr_t *out);

/* Create the primitive of pd as a new step; *out_step is its index. */
sleapc_status sleapc__onednn_step_add(onednn_state *s, const_dnnl_primitive_desc_t pd,
                                      const char *name, int *out_step);

/* Step argument reading value v (extends its life to this step). */
void sleapc__onednn_step_read(onednn_state *s, int step, int arg, int v);

/* Step argument with a fixed memory (packed weights or bias). */
void sleapc__onednn_step_fixed(onednn_state *s, int step, int arg, dnnl_memory_t mem);

/* New value of layout md written by step as argument arg; *out_value. */
sleapc_status sleapc__onednn_step_write(onednn_state *s, int step, int arg,
                                        const dnnl_memory_desc_t *md, int *out_value);

/* Node i's sigmoid, after the primitive that wrote its value: that value as
 * plain float32 (reordered if needed), then a host step applying the shared
 * sigmoid (backends/sigmoid.h) in place; it becomes node i's value. */
sleapc_status sleapc__onednn_sigmoid_add(onednn_state *s, int i);

/* Value v in layout want: v itself when the layouts agree, else a reordered
 * copy (made once per value and layout). */
sleapc_status sleapc__onednn_value_as(onednn_state *s, int v, const dnnl_memory_desc_t *want,
                                      const char *name, int *out_value);

/* Pack float32 data in layout user_md into the layout want (reordered once
 * at plan time, or wrapped without a copy when they agree). data is the
 * graph's weight buffer; it is only read. */
sleapc_status sleapc__onednn_pack(onednn_state *s, onednn_pack *pk, const dnnl_memory_desc_t *want,
                                  const dnnl_memory_desc_t *user_md, const float *data,
                                  const char *name);
void sleapc__onednn_pack_free(onednn_pack *pk);

#endif
