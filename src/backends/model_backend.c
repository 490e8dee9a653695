#include "backends/model_backend.h"

#include "backends/onnx/onnxrt_backend.h"
#include "core/error.h"

sleapc_status sleapc__model_backend_create(const sleapc_model *m, const char *name,
                                           const sleapc_backend_opts *opts, sleapc_backend **out)
{
    /* An export's own graph runs on sleapc's ONNX interpreter: its host
     * steps on the CPU, its networks on the named backend and device, as a
     * checkpoint's graph would (the same refusals where they cannot). */
    if (m->baked)
        return sleapc__onnxrt_backend_create(m->baked, name, opts, out);
    return sleapc__backend_create(name, &m->graph, opts, out);
}
