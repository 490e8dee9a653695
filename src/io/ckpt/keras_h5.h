/* Legacy SLEAP 1.x weights: a Keras 2.x whole-model HDF5 file (best_model.h5)
 * read into sleap-nn's state-dict names and PyTorch layouts, so the same
 * builder runs both (architectures.md §6b, formats.md C.1). */
#ifndef SLEAPC_IO_CKPT_KERAS_H5_H
#define SLEAPC_IO_CKPT_KERAS_H5_H

#include "core/weights.h"
#include "io/config/model_config.h"

/* Read every weighted layer of /model_weights (optimizer state is never
 * read), convert the kernels (conv HWIO -> OIHW, transposed conv
 * (kh,kw,out,in) -> (in,out,kh,kw), dense (in,out) -> (out,in)) and name
 * them as sleap-nn does:
 *   stack0_enc{b}_conv{i}            -> model.backbone.encoders.0.encoder_stack.{b}.blocks.<layer>
 *   stack0_enc{n}_middle_expand_*    -> model.backbone.middle_blocks.0.blocks.<layer>
 *   stack0_enc{n}_middle_contract_*  -> model.backbone.middle_blocks.1.blocks.<layer>
 *   stack0_dec{j}_s{a}_to_s{b}_*     -> model.backbone.decoders.0.decoder_stack.{j}.blocks.<layer>
 *   <Head>[_<n>]                     -> model.head_layers.{h}.<Head>.0 (ClassVectorsHead: no .0)
 *   pre_classification{i}_fc         -> model.head_layers.{h}.pre_classification{i}_fc
 * with h the head's index in cfg's model type (sleapc__heads_for_config).
 * Heads the model type does not have (OffsetRefinementHead) are skipped with
 * a log line. When the file carries Keras' model_config, each weighted
 * layer's class and options are checked against what the builder computes.
 * A layer of unknown name or kind, or a kernel of unexpected shape, is
 * SLEAPC_ERR_FORMAT naming the file and the layer. On failure *out is
 * cleared. */
sleapc_status sleapc__keras_h5_read(const char *path, const sleapc_model_config *cfg,
                                    sleapc_weights *out);

/* What training_config.json does not say, taken from the weights read above
 * (sleap-nn legacy_models.py does the same): unet.in_channels from the first
 * convolution, and for multi_class_topdown the number and width of the
 * pre_classification layers. path names the file in messages. */
sleapc_status sleapc__keras_h5_patch_config(const sleapc_weights *w, const char *path,
                                            sleapc_model_config *cfg);

#endif
