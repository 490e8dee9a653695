#include "backends/model_backend.h"

#include "backends/onnx/onnxrt_backend.h"

sleapc_status sleapc__model_backend_create(const sleapc_model *m, const char *name,
                                           const sleapc_backend_opts *opts, sleapc_backend **out)
{
    if (m->baked)
        return sleapc__onnxrt_backend_create(m->baked, name, opts, out);
    return sleapc__backend_create(name, &m->graph, opts, out);
}
