/* Private to the XNNPACK backend: the lowering of the graph IR to an XNNPACK
 * subgraph (xnnpack_lower.c) as the executor (xnnpack_backend.c) calls it.
 * XNNPACK's types appear only as incomplete structs, so that xnnpack.h stays
 * inside those two files. */
#ifndef SLEAPC_BACKENDS_XNNPACK_IMPL_H
#define SLEAPC_BACKENDS_XNNPACK_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"

struct xnn_subgraph;

/* External value ids of a lowered subgraph: the input is 0, graph output o is
 * XNNPACK_OUTPUT_ID(o). */
#define XNNPACK_INPUT_ID 0u
#define XNNPACK_OUTPUT_ID(o) (1u + (uint32_t)(o))

/* Largest spatial side and element count the lowering accepts: XNNPACK's
 * resize keeps coordinates in float (exact below 2^24), and every byte size
 * must fit in size_t with room to spare. */
#define XNNPACK_MAX_SIDE ((1 << 24) - 1)
#define XNNPACK_MAX_ELEMS ((int64_t)1 << 40)

/* Weights in XNNPACK's layouts, made once at create and immutable after. */
typedef struct xnnpack_consts {
    int n_nodes;
    float **weight; /* per node: OHWI conv / (out,kh,kw,in) transposed conv
                       filter; NULL where the IR's own array is used as is */
    float *zeros;   /* bias for nodes without one: max channels of zeros */
} xnnpack_consts;

/* The host tail of an embedding graph (xnnpack_tail.c): nodes start.. run in
 * plain C on the map of node `cut`, which the runtime writes as its only
 * external output, XNNPACK_OUTPUT_ID(0). start == n_nodes: no tail. */
typedef struct xnnpack_tail {
    int start;
    int cut;
} xnnpack_tail;

/* Find the tail: the nodes from the first GLOBAL_GEMPOOL / L2NORM on, which
 * must be such nodes or linears (ReLU or none) reading one map before them
 * (or each other), with every graph output among them.
 * SLEAPC_ERR_UNSUPPORTED naming the node otherwise. */
sleapc_status sleapc__xnnpack_tail_find(const sleapc_graph *g, xnnpack_tail *out);

/* One buffer for every tail node's (B, C) value, node i at offsets[i]
 * (offsets has n_nodes entries); free *buf with sleapc__aligned_free. */
sleapc_status sleapc__xnnpack_tail_plan(const sleapc_graph *g, const xnnpack_tail *t,
                                        const int64_t (*shapes)[4], float **buf,
                                        int64_t *offsets);

/* Run the tail on the runtime's NHWC output cut_nhwc. */
void sleapc__xnnpack_tail_run(const sleapc_graph *g, const xnnpack_tail *t,
                              const int64_t (*shapes)[4], const float *cut_nhwc, float *buf,
                              const int64_t *offsets);

/* Whether every node can be expressed: SLEAPC_ERR_UNSUPPORTED naming the first
 * node that cannot (with fp16, also every node XNNPACK cannot run in fp16). */
sleapc_status sleapc__xnnpack_check(const sleapc_graph *g, bool fp16);

/* Convert the weights of g into *out (zeroed first). SLEAPC_ERR_NOMEM on
 * failure, with nothing left allocated. */
sleapc_status sleapc__xnnpack_consts_create(const sleapc_graph *g, xnnpack_consts *out);
/* Free what consts_create made; accepts a zeroed struct. */
void sleapc__xnnpack_consts_free(xnnpack_consts *c);

/* Define g's values and nodes in sg (created with XNNPACK_OUTPUT_ID(n_outputs)
 * external ids; with a host tail, only the nodes before it, the cut being
 * the one output) for the node shapes of one input shape (from
 * sleapc__graph_infer_shapes). The subgraph borrows c and g's weights: both
 * must outlive every runtime created from it. SLEAPC_ERR_BACKEND naming the
 * node and the XNNPACK status when XNNPACK refuses a definition. */
sleapc_status sleapc__xnnpack_lower(const sleapc_graph *g, const xnnpack_consts *c,
                                    const xnnpack_tail *tail, const int64_t (*shapes)[4],
                                    struct xnn_subgraph *sg);

/* XNNPACK's status name ("invalid_parameter"); "unknown" for others. */
const char *sleapc__xnnpack_status_str(int status);

#endif
