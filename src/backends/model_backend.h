/* The backend for a loaded model, whatever its format: the graph IR on the
 * named backend, or an export's model.onnx (post-processing baked in) on the
 * ONNX host runner with its networks on the named backend. */
#ifndef SLEAPC_BACKENDS_MODEL_BACKEND_H
#define SLEAPC_BACKENDS_MODEL_BACKEND_H

#include "backends/backend.h"
#include "model/model_impl.h"

/* name: "auto", "native", ... (for a baked graph: the backend of its network
 * parts). The model is borrowed and must outlive the backend. */
sleapc_status sleapc__model_backend_create(const sleapc_model *m, const char *name,
                                           const sleapc_backend_opts *opts, sleapc_backend **out);

#endif
