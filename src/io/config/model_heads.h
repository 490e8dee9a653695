/* The heads a model type has (sleap-nn heads.py, model.py), decided by the
 * config alone: the checkpoint builder and the Keras .h5 reader both name and
 * check tensors by it. */
#ifndef SLEAPC_IO_CONFIG_MODEL_HEADS_H
#define SLEAPC_IO_CONFIG_MODEL_HEADS_H

#include "io/config/model_config.h"

/* The activation fused into a head's last layer (and into graph nodes). */
typedef enum sleapc_act {
    SLEAPC_ACT_NONE = 0,
    SLEAPC_ACT_RELU,
    SLEAPC_ACT_SIGMOID,
    SLEAPC_ACT_SOFTMAX, /* over channels of a (B,C) vector */
    SLEAPC_ACT_GELU     /* exact erf form, as torch.nn.GELU() */
} sleapc_act;

/* How a head's output is made: a 1x1 conv on the feature map of its stride
 * (every head but these), or one of an SSDHead level's two 3x3 predictors
 * after that level's tower (heads.py _SSDPredictor). */
typedef enum sleapc_head_kind {
    SLEAPC_HEAD_CONV1X1 = 0,
    SLEAPC_HEAD_SSD_CLS,
    SLEAPC_HEAD_SSD_BOX
} sleapc_head_kind;

/* One network output, in sleap-nn's head order (architectures.md §2). An
 * SSDHead is one output per level and predictor, cls then box, finest
 * level first: "SSDHead.cls.<l>" (anchors * (categories + 1) channels) and
 * "SSDHead.box.<l>" (anchors * 4), each at its level's stride; per cell,
 * channel a * n + j is anchor a's value j (sleap-nn's permute/reshape). */
typedef struct sleapc_head_spec {
    const char *name;  /* static: "CentroidConfmapsHead", ... */
    int channels;
    int stride;        /* 0 for ClassVectorsHead and EmbeddingHead (vectors) */
    sleapc_act act;
    sleapc_head_kind kind;
    int level;         /* SSD: the pyramid level */
} sleapc_head_spec;

/* 2 per SSD level (SLEAPC_BBOX_LIST_MAX levels). */
#define SLEAPC_MAX_HEADS 16

/* The heads a model type has, with channels and strides from the config.
 * Returns the count (0 for an unknown type). */
int sleapc__heads_for_config(const sleapc_model_config *cfg, sleapc_head_spec *heads);

#endif
