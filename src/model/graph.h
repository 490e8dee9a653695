/* The graph IR: every model format (sleap-nn checkpoint, legacy Keras .h5,
 * ONNX export) is lowered to this, and every backend runs it.
 *
 * Nodes are stored in execution order (a node's inputs always come before it).
 * Node 0 is the input: a (B, C, H, W) float32 tensor in [0, 1] with C equal to
 * the graph's in_channels (see graph_input.h for the conversion from what a
 * caller passes). Activations are NCHW float32; vectors are (B, C). */
#ifndef SLEAPC_MODEL_GRAPH_H
#define SLEAPC_MODEL_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "io/config/model_heads.h"
#include "sleapc/sleapc.h"

typedef enum sleapc_op {
    SLEAPC_OP_INPUT = 0,
    SLEAPC_OP_CONV2D,           /* k x k, stride 1, "same" zero pad, bias */
    SLEAPC_OP_CONV_TRANSPOSE2D, /* 3 x 3, stride 2, out 2H x 2W, bias; see keras_placement */
    SLEAPC_OP_MAXPOOL2D,        /* 2 x 2, stride 2, floor */
    SLEAPC_OP_UPSAMPLE2X,       /* bilinear x2, align_corners=False (nn.Upsample) */
    SLEAPC_OP_RESIZE_LIKE,      /* bilinear resize of input 0 to the H x W of input 1;
                                   identity when they already agree */
    SLEAPC_OP_CONCAT,           /* channel concat of inputs in order */
    SLEAPC_OP_GLOBAL_MAXPOOL,   /* (B,C,H,W) -> (B,C) */
    SLEAPC_OP_LINEAR,           /* (B,in) -> (B,out), bias */
    /* ConvNeXt / SwinT (architectures.md §4-5). Their per-token Linear layers
       are 1x1 CONV2Ds on the NCHW map. */
    SLEAPC_OP_PATCHES,          /* (B,C,H,W) -> (B,C*k*k,Ho,Wo): the k x k patches at
                                   `stride`, zero padding `pad` on every side, channel
                                   (c, ky, kx) as a conv weight flattens; a strided conv
                                   is this + a 1x1 CONV2D. patch_merge: k = stride = 2,
                                   odd sizes padded bottom/right, channel (2*kx+ky)*C + c
                                   (torchvision PatchMerging's x0..x3 order) */
    SLEAPC_OP_DWCONV,           /* depthwise k x k, stride 1, pad (k-1)/2, bias;
                                   weight (C,1,k,k) */
    SLEAPC_OP_LAYERNORM,        /* over the channels of each pixel, weight/bias (C), eps */
    SLEAPC_OP_SCALE_ADD,        /* inputs (x, y): x + weight[c] * y (layer scale +
                                   residual); weight NULL: x + y */
    SLEAPC_OP_WINDOW_ATTENTION, /* torchvision shifted_window_attention between its qkv
                                   and proj linears: input the (B,3C,H,W) qkv map, output
                                   (B,C,H,W). Window `kernel`, `heads`, shift `shift` on
                                   each axis (dropped on an axis whose padded size is the
                                   window), maps padded bottom/right to the window (padded
                                   tokens' qkv = bias), weight = relative position bias
                                   table ((2k-1)^2, heads), bias = qkv bias (3C) or NULL */
    /* sleap-nn 0.3.5 EmbeddingHead (heads.py GeM, L2Norm). */
    SLEAPC_OP_GLOBAL_GEMPOOL,   /* (B,C,H,W) -> (B,C): weight NULL: the mean over HxW;
                                   else the generalized mean (mean(max(x,eps)^p))^(1/p)
                                   with p = weight[0] clamped to [1, 6] */
    SLEAPC_OP_L2NORM,           /* (B,C) -> (B,C): x / max(||x||_2, eps) per row */
    SLEAPC_OP_COUNT
} sleapc_op;

#define SLEAPC_NODE_MAX_INPUTS 4
#define SLEAPC_NODE_NAME_CAP 128
#define SLEAPC_GRAPH_MAX_OUTPUTS SLEAPC_MAX_HEADS

typedef struct sleapc_node {
    sleapc_op op;
    char name[SLEAPC_NODE_NAME_CAP];  /* e.g. "stack0_enc1_conv0"; for messages */
    int n_inputs;
    int inputs[SLEAPC_NODE_MAX_INPUTS];  /* node indices, all smaller than this one */
    int c_out;            /* output channels */
    int c_in;             /* input channels (conv, linear): checked against inputs */
    int kernel;           /* conv kernel side */
    sleapc_act act;       /* fused activation */
    bool keras_placement; /* CONV_TRANSPOSE2D: keep full rows/cols 0..2H-1 (TF "same")
                             instead of 1..2H (PyTorch padding=1, output_padding=1) */
    const float *weight;  /* borrowed from the model's weights; PyTorch layout */
    const float *bias;    /* borrowed; NULL = no bias */
    int stride;           /* PATCHES */
    int pad;              /* PATCHES */
    bool patch_merge;     /* PATCHES */
    int heads;            /* WINDOW_ATTENTION */
    int shift;            /* WINDOW_ATTENTION */
    float eps;            /* LAYERNORM */
} sleapc_node;

typedef struct sleapc_graph_output {
    char name[48];  /* sleap-nn head key: "CentroidConfmapsHead", ... */
    int node;
    int stride;     /* output stride of a map; 0 for a vector output */
} sleapc_graph_output;

typedef struct sleapc_graph {
    sleapc_node *nodes;  /* owned */
    int n_nodes;
    int cap;
    int in_channels;     /* channels node 0 carries */
    int max_stride;      /* inputs should be padded to a multiple of this */
    bool input_as_is;    /* node 0 takes the caller's values as they are (an embedding
                            model's standardized crop): no division by 255 */
    int n_outputs;
    sleapc_graph_output outputs[SLEAPC_GRAPH_MAX_OUTPUTS];
} sleapc_graph;

/* Append a node; returns its index in *out_index. Inputs are checked to be
 * existing nodes. */
sleapc_status sleapc__graph_add(sleapc_graph *g, const sleapc_node *node, int *out_index);
sleapc_status sleapc__graph_add_output(sleapc_graph *g, const char *name, int node, int stride);
void sleapc__graph_clear(sleapc_graph *g);

/* Static shape of every node for a (b, c_in, h, w) input: shapes[i] is
 * (B, C, H, W) for maps and (B, C, 0, 0) for vectors. Fails with
 * SLEAPC_ERR_INVALID_ARG when the input does not fit (e.g. too small to pool)
 * and SLEAPC_ERR_FORMAT when the graph itself is inconsistent. shapes has
 * g->n_nodes entries. */
sleapc_status sleapc__graph_infer_shapes(const sleapc_graph *g, int64_t b, int64_t h, int64_t w,
                                         int64_t (*shapes)[4]);

/* Floating-point operations of one forward pass (2 per multiply-add). */
double sleapc__graph_flops(const sleapc_graph *g, int64_t b, int64_t h, int64_t w);
/* FLOPs of node i given its output shape (2 per multiply-add). */
double sleapc__graph_node_flops(const sleapc_graph *g, int i, const int64_t shape[4]);

const char *sleapc__op_name(sleapc_op op);

/* WINDOW_ATTENTION geometry on an h x w map: padded size and the shift each
 * axis really gets (torchvision drops it where the window covers the map). */
void sleapc__window_geometry(const sleapc_node *n, int64_t h, int64_t w, int64_t *ph,
                             int64_t *pw, int *shift_h, int *shift_w);

#endif
