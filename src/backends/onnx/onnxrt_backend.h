/* The baked-post-processing backend over an export's model.onnx. */
#ifndef SLEAPC_BACKENDS_ONNX_ONNXRT_BACKEND_H
#define SLEAPC_BACKENDS_ONNX_ONNXRT_BACKEND_H

#include "backends/backend.h"
#include "backends/onnx/onnxrt.h"

/* A backend whose forward runs om (borrowed: it must outlive the backend)
 * with the runner of onnxrt.h: the networks on the backend named `network`
 * ("native", "auto", ...) with opts, the rest on the host. baked_postproc is
 * true: outputs are the graph's own (export.md §3: "peaks", "peak_vals",
 * masks as uint8 0/1, ...), not head maps. device is "cpu" (the host part runs
 * there whatever the inner backend is). warmup runs once on zeros. Checked
 * like every backend (sleapc__backend_check). */
sleapc_status sleapc__onnxrt_backend_create(const sleapc_onnx_model *om, const char *network,
                                            const sleapc_backend_opts *opts, sleapc_backend **out);

#endif
