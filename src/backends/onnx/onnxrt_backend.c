/* A backend with post-processing baked in (sleap-nn's ONNX backend on an
 * export's model.onnx, inference/layers/backends/onnx_backend.py): forward
 * runs the whole export graph, networks on an inner backend and the rest on
 * the host, and returns the graph's outputs ("peaks", "peak_vals", ...). */
#include <stdio.h>
#include <string.h>

#include "backends/onnx/onnxrt_backend.h"
#include "backends/onnx/onnxrt_impl.h"
#include "core/alloc.h"
#include "core/dtype.h"
#include "core/error.h"

static sleapc_status baked_forward(sleapc_backend *be, const sleapc_tensor *x,
                                   sleapc_tensor_map *out)
{
    return sleapc__onnxrt_run(be->impl, x, out);
}

/* One run on zeros of this shape, in the dtype the graph takes. */
static sleapc_status baked_warmup(sleapc_backend *be, const int64_t shape[4])
{
    sleapc_onnxrt *rt = be->impl;
    const sleapc_onnx_graph *g = &rt->om->graph;
    sleapc_dtype dtype = SLEAPC_DTYPE_U8;
    for (int i = 0; i < g->n_inputs; i++)
        if (!sleapc__onnx_initializer(g, g->inputs[i].name) &&
            g->inputs[i].dtype == SLEAPC_ONNX_DTYPE_FLOAT)
            dtype = SLEAPC_DTYPE_F32;
    int64_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (shape[i] < 1 || shape[i] > (1 << 20) || n > RT_MAX_NUMEL / shape[i])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "warm up: input dimension %d is %lld", i,
                                (long long)shape[i]);
        n *= shape[i];
    }
    void *zeros = sleapc__calloc((size_t)n, sleapc__dtype_size(dtype));
    if (!zeros)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "warm up: out of memory");
    sleapc_tensor x = {.dtype = dtype, .ndim = 4, .data = zeros};
    memcpy(x.shape, shape, 4 * sizeof *shape);
    sleapc_tensor_map out = {0};
    sleapc_status st = sleapc__onnxrt_run(rt, &x, &out);
    sleapc__free(zeros);
    return st;
}

static void baked_destroy(sleapc_backend *be)
{
    if (!be)
        return;
    sleapc__onnxrt_destroy(be->impl);
    sleapc__free(be);
}

/* No device ops, and no delegate: its outputs are the export graph's, which
 * its networks' heads have already passed through on the host; a device op
 * of a network's backend would act on maps no caller sees. */
static const struct sleapc_backend_ops baked_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "onnx-baked",
    .forward = baked_forward,
    .warmup = baked_warmup,
    .destroy = baked_destroy,
};

sleapc_status sleapc__onnxrt_backend_create(const sleapc_onnx_model *om, const char *network,
                                            const sleapc_backend_opts *opts, sleapc_backend **out)
{
    *out = NULL;
    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    if (!be)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create backend onnx-baked: out of memory");
    be->ops = &baked_ops;
    strcpy(be->device, "cpu");
    be->baked_postproc = true;
    sleapc_onnxrt *rt = NULL;
    sleapc_status st = sleapc__onnxrt_create_on(om, network, opts ? opts->n_threads : 0,
                                                opts ? opts->device : NULL,
                                                opts && opts->input_as_is, &rt);
    be->impl = rt;
    /* The device is its networks': the host steps follow them. */
    if (!st && rt->n_segs > 0) {
        snprintf(be->device, sizeof be->device, "%s", sleapc__backend_device(rt->segs[0].be));
        snprintf(be->device_name, sizeof be->device_name, "%s",
                 sleapc__backend_device_name(rt->segs[0].be));
    }
    if (!st)
        st = sleapc__backend_check(be);
    if (st) {
        baked_destroy(be);
        return sleapc__wrap(st, "create backend onnx-baked");
    }
    *out = be;
    return SLEAPC_OK;
}
