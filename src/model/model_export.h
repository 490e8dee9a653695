/* sleap-nn ONNX export folders (export.md §1): model.onnx / model_raw.onnx,
 * export_metadata.json and the copied training_config.yaml. */
#ifndef SLEAPC_MODEL_MODEL_EXPORT_H
#define SLEAPC_MODEL_MODEL_EXPORT_H

#include <stdbool.h>

#include "model/model_impl.h"

/* A folder without best.ckpt that holds model_raw.onnx or model.onnx. */
bool sleapc__model_is_export(const char *dir);

/* Fill m (m->dir set, everything else empty) from the export in m->dir;
 * path is what the caller named (the folder or a file in it). A folder with
 * model.onnx loads that graph, post-processing baked in (m->baked, the layers'
 * exported path), with its export_metadata.json (or the copy embedded in the
 * graph) and the pose model's training config when present. Naming
 * model_raw.onnx, or a folder with only that file, imports the bare network
 * into the graph IR and runs it like a checkpoint's, with training_config.yaml
 * checked against the metadata. On failure the caller destroys m. */
sleapc_status sleapc__model_load_export(sleapc_model *m, const char *path);

#endif
