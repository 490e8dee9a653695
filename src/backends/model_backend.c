#include "backends/model_backend.h"

#include <string.h>

#include "backends/onnx/onnxrt_backend.h"
#include "core/error.h"

sleapc_status sleapc__model_backend_create(const sleapc_model *m, const char *name,
                                           const sleapc_backend_opts *opts, sleapc_backend **out)
{
    if (m->baked) {
        /* An export's own graph runs on sleapc's ONNX interpreter, on the CPU. */
        const char *dev = opts ? opts->device : NULL;
        if (dev && *dev && strcmp(dev, "auto") != 0 && strcmp(dev, "cpu") != 0)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "device %s: an ONNX export's graph runs on the CPU only (its "
                                "training folder's checkpoint runs on GPUs)",
                                dev);
        return sleapc__onnxrt_backend_create(m->baked, name, opts, out);
    }
    return sleapc__backend_create(name, &m->graph, opts, out);
}
