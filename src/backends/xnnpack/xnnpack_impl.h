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

/* Whether every node can be expressed: SLEAPC_ERR_UNSUPPORTED naming the first
 * node that cannot (with fp16, also every node XNNPACK cannot run in fp16). */
sleapc_status sleapc__xnnpack_check(const sleapc_graph *g, bool fp16);

/* Convert the weights of g into *out (zeroed first). SLEAPC_ERR_NOMEM on
 * failure, with nothing left allocated. */
sleapc_status sleapc__xnnpack_consts_create(const sleapc_graph *g, xnnpack_consts *out);
/* Free what consts_create made; accepts a zeroed struct. */
void sleapc__xnnpack_consts_free(xnnpack_consts *c);

/* Define g's values and nodes in sg (created with XNNPACK_OUTPUT_ID(n_outputs)
 * external ids) for the node shapes of one input shape (from
 * sleapc__graph_infer_shapes). The subgraph borrows c and g's weights: both
 * must outlive every runtime created from it. SLEAPC_ERR_BACKEND naming the
 * node and the XNNPACK status when XNNPACK refuses a definition. */
sleapc_status sleapc__xnnpack_lower(const sleapc_graph *g, const xnnpack_consts *c,
                                    const int64_t (*shapes)[4], struct xnn_subgraph *sg);

/* XNNPACK's status name ("invalid_parameter"); "unknown" for others. */
const char *sleapc__xnnpack_status_str(int status);

#endif
