/* The memory planner every planning backend shares: for a graph and an input
 * shape, where each node's value lives in one arena. Values live from the
 * step that writes them to the last step that reads them (a graph output
 * past the forward); two values live at one step never overlap, and a step
 * never writes over its own inputs. An in-place alias takes its input's
 * storage; a value of parts has none, its readers reading its inputs where
 * they are. Offsets are packed greedily, largest value first, into the
 * smallest gap left by the values it meets. The arena's size is the peak
 * the memory check (sleapc__backend_mem_need) reads. */
#ifndef SLEAPC_MODEL_GRAPH_PLAN_H
#define SLEAPC_MODEL_GRAPH_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "model/graph.h"

/* How a node's value is stored. */
typedef enum sleapc_plan_kind {
    SLEAPC_PLAN_OWN = 0, /* storage of its own */
    SLEAPC_PLAN_ALIAS,   /* input 0's storage, where it has the same shape and
                            storage (a resize to its own size); OWN otherwise */
    SLEAPC_PLAN_PARTS,   /* none: readers read its inputs (a concat read in parts) */
} sleapc_plan_kind;

typedef struct sleapc_plan_opts {
    size_t elem;                  /* bytes per element: 4 (float32) or 2 (fp16) */
    int64_t align;                /* offsets' alignment in bytes, a power of two */
    const sleapc_plan_kind *kind; /* per node; NULL: sleapc__graph_plan_kind_default */
} sleapc_plan_opts;

typedef struct sleapc_graph_plan {
    int n_nodes;
    int64_t (*shapes)[4]; /* sleapc__graph_infer_shapes */
    int *home;            /* the node whose storage holds node i's value; -1: parts */
    int *last;            /* last step reading home i's storage; n_nodes: kept after */
    int64_t *offset;      /* byte offset of node i's value (its home's); -1: parts */
    int64_t arena;        /* bytes of the arena: the plan's peak */
    int64_t live_bound;   /* most (aligned) bytes live at one step: no packing does better */
} sleapc_graph_plan;

/* ALIAS for a resize (the identity where sizes agree), OWN otherwise. */
sleapc_plan_kind sleapc__graph_plan_kind_default(const sleapc_graph *g, int i);

/* Plan g on a (b, c_in, h, w) input. Fails as sleapc__graph_infer_shapes
 * does, or with SLEAPC_ERR_NOMEM. Free with sleapc__graph_plan_free (also
 * on a zeroed or failed plan). */
sleapc_status sleapc__graph_plan(const sleapc_graph *g, int64_t b, int64_t h, int64_t w,
                                 const sleapc_plan_opts *opts, sleapc_graph_plan *out);
void sleapc__graph_plan_free(sleapc_graph_plan *p);

/* The packing alone, for values a backend defines itself (oneDNN's reorders):
 * value v of bytes[v] (0: none, offset -1) lives over steps first[v]..last[v]
 * (inclusive). Writes offset[v] and the arena's size. */
sleapc_status sleapc__plan_pack(int n, const int64_t *bytes, const int *first, const int *last,
                                int64_t align, int64_t *offset, int64_t *arena);

/* The memory check's number: the arena of g's default float32 plan, 64-byte
 * aligned. -1 when the shapes do not infer, -2 when the plan could not be
 * allocated (SLEAPC_ERR_NOMEM set). */
int64_t sleapc__graph_peak_bytes(const sleapc_graph *g, int64_t b, int64_t h, int64_t w);

#endif
