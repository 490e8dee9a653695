/* A content hash of a graph: its structure and every weight, so two loads of
 * the same model give the same hash and any change to the weights or the
 * network (a retrained checkpoint, another input scale baked in) another. */
#ifndef SLEAPC_MODEL_GRAPH_HASH_H
#define SLEAPC_MODEL_GRAPH_HASH_H

#include <stdint.h>

#include "model/graph.h"

uint64_t sleapc__graph_hash(const sleapc_graph *g);

#endif
