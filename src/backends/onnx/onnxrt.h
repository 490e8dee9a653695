/* Running a whole sleap-nn export graph (model.onnx, post-processing baked in,
 * export.md §2-3): its network parts are lowered to the graph IR and run by a
 * backend; everything else (peak finding, crops, PAF scoring, ...) is
 * interpreted on the host, op by op, with ONNX semantics. */
#ifndef SLEAPC_BACKENDS_ONNX_ONNXRT_H
#define SLEAPC_BACKENDS_ONNX_ONNXRT_H

#include "core/tensor_map.h"
#include "io/onnx/onnx_read.h"

typedef struct sleapc_onnxrt sleapc_onnxrt;

/* Plan om (borrowed: it must outlive the runner): find the network segments
 * (each starts at a Conv reading a host value and grows through the network
 * ops that read it), import each into the IR and create a `backend` for it
 * with n_threads; check every other node is an op the host interpreter has.
 * SLEAPC_ERR_UNSUPPORTED names the first node that cannot run. */
sleapc_status sleapc__onnxrt_create(const sleapc_onnx_model *om, const char *backend, int n_threads,
                                    sleapc_onnxrt **out);
/* The same with the segments' backends on `device` (backend.h's device
 * string; NULL: the backend's choice). as_is: every segment takes its input
 * as it is (graph.h input_as_is; an embedding export standardizes its crops
 * before the network); else as an image in [0, 1], and a larger value is
 * refused. */
sleapc_status sleapc__onnxrt_create_on(const sleapc_onnx_model *om, const char *backend,
                                       int n_threads, const char *device, bool as_is,
                                       sleapc_onnxrt **out);

/* Run the graph on x, its one input (for sleap-nn exports a uint8
 * (B, C, H, W) image). out receives every graph output under its ONNX name:
 * float32 as F32, int64 as I64, bool and uint8 as U8 (0/1), at most
 * SLEAPC_TENSOR_MAX_DIMS dimensions; owned by rt, valid until the next run or
 * destroy. Shapes or values the graph cannot handle give SLEAPC_ERR_FORMAT or
 * SLEAPC_ERR_INVALID_ARG, never a crash. */
sleapc_status sleapc__onnxrt_run(sleapc_onnxrt *rt, const sleapc_tensor *x, sleapc_tensor_map *out);

/* Number of network segments the plan found (for tests and messages). */
int sleapc__onnxrt_n_segments(const sleapc_onnxrt *rt);

/* Accepts NULL. */
void sleapc__onnxrt_destroy(sleapc_onnxrt *rt);

#endif
