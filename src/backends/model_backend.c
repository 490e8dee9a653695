#include "backends/model_backend.h"

#include "backends/onnx/onnxrt_backend.h"
#include "core/error.h"

sleapc_status sleapc__model_backend_create(const sleapc_model *m, const char *name,
                                           const sleapc_backend_opts *opts, sleapc_backend **out)
{
    /* An export's own graph runs on sleapc's ONNX interpreter: its host
     * steps on the CPU, its networks on the named backend and device, as a
     * checkpoint's graph would (the same refusals where they cannot). */
    if (m->baked) {
        /* An embedding export standardizes its crops in the graph: its
         * network takes those values as they are, not as an image. */
        sleapc_backend_opts o = opts ? *opts : (sleapc_backend_opts){0};
        o.input_as_is = m->export_meta.kind == SLEAPC_EXPORT_EMBEDDING;
        return sleapc__onnxrt_backend_create(m->baked, name, &o, out);
    }
    return sleapc__backend_create(name, &m->graph, opts, out);
}
