/* sleap-nn 0.3.5's re-ID embedding of existing detections
 * (inference/embedding.py _embed_detections with EmbeddingDataset in pose
 * mode, layers/embedding.py EmbeddingLayer): each detection's crop around
 * its centroid, cut from the frame coerced and size-matched as the model was
 * trained (crop_skia.h), standardized per crop and channel
 * (EmbeddingLightningModule._standardize), then batched through the network.
 * One vector of the model's dim floats per detection. */
#ifndef SLEAPC_LAYERS_EMBEDDER_H
#define SLEAPC_LAYERS_EMBEDDER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model_impl.h"
#include "sleapc/predictor.h"

typedef struct sleapc_embedder sleapc_embedder;

/* For an embedding model m (borrowed, must outlive it): o gives the backend,
 * threads and batch_size (crops a forward). The network runs in float32 (a
 * reduced precision has no judge for vectors yet). SLEAPC_ERR_UNSUPPORTED
 * names what sleapc does not run: mask-mode models (no masks here), crop
 * centres other than the centre of mass, crops over
 * SLEAPC_CROP_SKIA_MAX_SIDE. */
sleapc_status sleapc__embedder_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                      sleapc_embedder **out);
void sleapc__embedder_destroy(sleapc_embedder *e);

/* The vector length. */
int sleapc__embedder_dim(const sleapc_embedder *e);

/* The crop centre of a detection of n points (n, 2) in frame pixels, as
 * generate_centroids gives it for this model: the mean of its finite
 * points in float32. False when it has none (sleap-nn leaves it out). */
bool sleapc__embedder_centroid(const float *points, int n, float *cx, float *cy);

/* Frames of one size come in (c, h, w) uint8; each is prepared once
 * (channels, size matcher), then its detections are cropped. */
sleapc_status sleapc__embedder_frame(sleapc_embedder *e, const uint8_t *frame, int64_t c,
                                     int64_t h, int64_t w);
/* Queue the crop around (cx, cy) (frame pixels) of the last frame; its
 * vector lands in dst (dim floats, kept valid by the caller) when the batch
 * runs: here once batch_size crops wait, or at sleapc__embedder_flush. */
sleapc_status sleapc__embedder_add(sleapc_embedder *e, float cx, float cy, float *dst);
sleapc_status sleapc__embedder_flush(sleapc_embedder *e);

/* Per-crop standardize of n crops (n, c, size, size) in place: each channel
 * minus its mean over the crop, over its standard deviation + 1e-5 floored
 * at one grey level (inputs on the 0..255 scale). */
void sleapc__embedder_standardize(float *crops, int64_t n, int64_t c, int64_t size);

#endif
