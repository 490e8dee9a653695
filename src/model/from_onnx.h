/* ONNX network graphs -> graph IR: sleap-nn's backbone + heads as exported to
 * ONNX (model_raw.onnx; export.md §3b lists the ops). */
#ifndef SLEAPC_MODEL_FROM_ONNX_H
#define SLEAPC_MODEL_FROM_ONNX_H

#include "core/weights.h"
#include "io/onnx/onnx_read.h"
#include "model/build.h"
#include "model/graph.h"

/* Import om's graph into g. The float constants the network uses (conv and
 * linear weights, biases) are copied into w, which must be empty; the IR
 * points into w. Activations are fused into the node that produces their
 * input, and a uint8 -> float -> /255 prefix is folded into the IR input
 * (which divides uint8 by 255 itself).
 *
 * heads (n_heads > 0): the model's heads from its config; each must be a graph
 * output of that name, channel count and stride, and the IR outputs follow
 * their order (SLEAPC_ERR_FORMAT otherwise). n_heads == 0: every graph output
 * becomes an IR output under its ONNX name. Strides come from the graph.
 *
 * An op or attribute the IR cannot express is SLEAPC_ERR_UNSUPPORTED
 * "ONNX node <name> (<op_type>) is not supported[: reason]"; a graph that is
 * not valid ONNX is SLEAPC_ERR_FORMAT. On failure g and w are cleared. */
sleapc_status sleapc__graph_from_onnx(const sleapc_onnx_model *om, const sleapc_head_spec *heads,
                                      int n_heads, sleapc_weights *w, sleapc_graph *g);

/* A network segment of a larger graph (model.onnx: the network, then the
 * post-processing, perhaps a second network on crops): the main-graph nodes
 * at `nodes` (indices, in order) reading `input`, a float32
 * (B, in_channels, H, W) value in [0, 1] computed outside the segment. IR
 * output k is the ONNX value outputs[k], named "k" ("0", "1", ...). Constant
 * nodes anywhere in the graph may be read; strides are relative to the
 * segment input. Errors and ownership as for sleapc__graph_from_onnx. */
typedef struct sleapc_onnx_segment {
    const char *input;
    int in_channels;
    const int *nodes;
    int n_nodes;
    const char *const *outputs;
    int n_outputs;
} sleapc_onnx_segment;

sleapc_status sleapc__graph_from_onnx_segment(const sleapc_onnx_model *om,
                                              const sleapc_onnx_segment *seg, sleapc_weights *w,
                                              sleapc_graph *g);

#endif
