/* sleap-nn ONNX export folders (export.md §1): model.onnx / model_raw.onnx,
 * export_metadata.json and the copied training_config.yaml. */
#ifndef SLEAPC_MODEL_MODEL_EXPORT_H
#define SLEAPC_MODEL_MODEL_EXPORT_H

#include <stdbool.h>

#include "model/model.h"

/* A folder without best.ckpt that holds model_raw.onnx or model.onnx. */
bool sleapc__model_is_export(const char *dir);

/* Fill m (m->dir set, everything else empty) from the export in m->dir: the
 * config from training_config.yaml, checked against export_metadata.json when
 * present (model type, input channels; a missing crop size is taken from it);
 * graph and weights from model_raw.onnx (the network without post-processing,
 * run like a checkpoint's). A folder with only model.onnx (post-processing
 * baked into the graph) is SLEAPC_ERR_UNSUPPORTED. On failure the caller
 * destroys m. */
sleapc_status sleapc__model_load_export(sleapc_model *m);

#endif
