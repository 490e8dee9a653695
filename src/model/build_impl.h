/* What the backbone builders (build_unet.c, build_convnext.c, build_swint.c)
 * share: tensor binding with strict shape checks, node helpers, the
 * upsampling decoder of encoder_decoder.py and the heads. Private to
 * src/model. */
#ifndef SLEAPC_MODEL_BUILD_IMPL_H
#define SLEAPC_MODEL_BUILD_IMPL_H

#include "model/build.h"

#define SLEAPC_KEY_CAP 256
#define SLEAPC_DECODER_MAX 16

typedef struct sleapc_builder {
    const sleapc_model_config *cfg;
    const sleapc_weights *w;
    const char *path;
    sleapc_graph *g;
    bool *used;          /* per weight: bound to a node */
    bool keras_placement;
} sleapc_builder;

/* Find tensor `key` and check it has exactly the expected shape. */
sleapc_status sleapc__bld_bind(sleapc_builder *bd, const char *key, int ndim,
                               const int64_t *shape, const float **out);
/* Conv (or transposed conv) + bias from "<prefix>.weight" / "<prefix>.bias";
 * has_bias false: no bias tensor. */
sleapc_status sleapc__bld_conv(sleapc_builder *bd, sleapc_op op, const char *prefix,
                               const char *name, int src, int c_in, int c_out, int k,
                               sleapc_act act, bool has_bias, int *out);
sleapc_status sleapc__bld_simple(sleapc_builder *bd, sleapc_op op, const char *name, int n_in,
                                 const int *inputs, int *out);
sleapc_status sleapc__bld_linear(sleapc_builder *bd, const char *prefix, const char *name,
                                 int src, int c_in, int c_out, sleapc_act act, int *out);
/* The config's heads, each with channels and a power-of-two stride. */
sleapc_status sleapc__bld_heads(const sleapc_builder *bd, sleapc_head_spec *heads, int *n_heads);

/* encoder_decoder.py's Decoder: block j upsamples (bilinear, or a ReLU
 * transposed conv to width[j]), concatenates [skip, up] when skip[j] >= 0,
 * then refine[j] ReLU convs to width[j]. Feature maps (the middle output,
 * then each block's) are recorded by stride for the heads. */
typedef struct sleapc_decoder {
    const char *key_fmt;    /* printf(key_fmt, j, layer name): the tensor prefix */
    const char *block_fmt;  /* printf(block_fmt, j, stride, stride / 2): block name */
    int n_blocks;
    int kernel;
    bool up_interpolate;
    int width[SLEAPC_DECODER_MAX];
    int skip[SLEAPC_DECODER_MAX];     /* node, or -1 */
    int skip_ch[SLEAPC_DECODER_MAX];
    int refine[SLEAPC_DECODER_MAX];
    /* Filled by sleapc__bld_decoder: */
    int n_feat;
    int feat_node[SLEAPC_DECODER_MAX + 1], feat_stride[SLEAPC_DECODER_MAX + 1],
        feat_ch[SLEAPC_DECODER_MAX + 1];
} sleapc_decoder;

/* x: the middle output (c channels, stride `stride`). */
sleapc_status sleapc__bld_decoder(sleapc_builder *bd, sleapc_decoder *dec, int x, int c,
                                  int stride);
/* 1x1 conv heads on the decoder maps; ClassVectorsHead on `middle`. */
sleapc_status sleapc__bld_add_heads(sleapc_builder *bd, const sleapc_decoder *dec,
                                    const sleapc_head_spec *heads, int n_heads, int middle,
                                    int middle_ch);

/* Run fn with a fresh builder, then (strict) refuse left-over "model."
 * tensors; clears g on failure. */
typedef sleapc_status (*sleapc_build_fn)(sleapc_builder *bd);
sleapc_status sleapc__bld_run(const sleapc_model_config *cfg, const sleapc_weights *w,
                              const char *weights_path, bool strict, bool keras_placement,
                              sleapc_graph *g, sleapc_build_fn fn);

int sleapc__ilog2_exact(int v);

/* ---- ConvNeXt / SwinT pieces (build_vit.c) ---- */

/* Conv2d(c_in -> c_out, k, stride, padding pad) as PATCHES + a 1x1 conv. */
sleapc_status sleapc__bld_patch_conv(sleapc_builder *bd, const char *prefix, const char *name,
                                     int src, int c_in, int c_out, int k, int stride, int pad,
                                     bool has_bias, int *out);
/* LayerNorm over channels from "<prefix>.weight" / "<prefix>.bias". */
sleapc_status sleapc__bld_layernorm(sleapc_builder *bd, const char *prefix, const char *name,
                                    int src, int c, float eps, int *out);
/* nn.Linear over each pixel's channels: a 1x1 conv of the (out, in) weight. */
sleapc_status sleapc__bld_pointwise(sleapc_builder *bd, const char *prefix, const char *name,
                                    int src, int c_in, int c_out, sleapc_act act, bool has_bias,
                                    int *out);
/* After the encoder: max pool the last stage, sleap-nn's "convnext_middle"
 * expand/contract convs, the decoder over skips[0..3] (strides 16S..2S
 * after the S-stride stem, widths skip_ch), heads. filters: the decoder's
 * base width (C0, or SwinT's embed). */
/* The start both ViT-style encoders share: the heads, the graph's input
 * channels and stride, the input node, and features.0 (a patch conv from
 * "<enc>.0.0", then the LayerNorm at ln_key with eps). *x is the stem's
 * output. */
sleapc_status sleapc__bld_vit_stem(sleapc_builder *bd, const char *enc, const char *ln_key,
                                   float ln_eps, sleapc_head_spec *heads, int *n_heads, int *x);
sleapc_status sleapc__bld_vit_tail(sleapc_builder *bd, const sleapc_vit_config *v, int x, int c,
                                   const int *skips, const int *skip_ch, int filters,
                                   const sleapc_head_spec *heads, int n_heads);

#endif
