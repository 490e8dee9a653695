/* Public runner functions: a model's graph on one backend. */
#include <string.h>

#include "api/opts_size.h"
#include "backends/backend.h"
#include "backends/model_backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "model/model_impl.h"
#include "sleapc/runner.h"

struct sleapc_runner {
    const sleapc_model *model;  /* borrowed */
    sleapc_backend *be;
    sleapc_tensor_map outputs;  /* views into the backend's buffers */
};

sleapc_runner_opts sleapc_runner_opts_default(void)
{
    sleapc_runner_opts o = {
        .struct_size = sizeof o, .backend = "auto", .n_threads = 0, .conv = SLEAPC_CONV_AUTO};
    return o;
}

sleapc_status sleapc_runner_create(const sleapc_model *model, const sleapc_runner_opts *opts,
                                   sleapc_runner **out)
{
    if (!model || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create runner: model and out are required");
    *out = NULL;
    sleapc_runner_opts o, d = sleapc_runner_opts_default();
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_runner_opts);
    if (st)
        return st;
    sleapc_runner *r = sleapc__calloc(1, sizeof *r);
    if (!r)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create runner: out of memory");
    r->model = model;
    sleapc_backend_opts bo = {.n_threads = o.n_threads, .precision = o.precision,
                              .device = o.device, .conv = o.conv};
    st = sleapc__model_backend_create(model, o.backend, &bo, &r->be);
    if (st) {
        sleapc__free(r);
        return st;
    }
    *out = r;
    return SLEAPC_OK;
}

void sleapc_runner_destroy(sleapc_runner *r)
{
    if (!r)
        return;
    sleapc__backend_destroy(r->be);
    sleapc__free(r);
}

const char *sleapc_runner_backend_name(const sleapc_runner *r)
{
    return r ? sleapc__backend_name(r->be) : "";
}

const char *sleapc_runner_device(const sleapc_runner *r)
{
    return r ? sleapc__backend_device(r->be) : "";
}

sleapc_status sleapc_runner_warmup(sleapc_runner *r, const int64_t shape[4])
{
    if (!r || !shape)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "warmup: runner and shape are required");
    return sleapc__backend_warmup(r->be, shape);
}

sleapc_status sleapc_runner_forward(sleapc_runner *r, const sleapc_tensor *x)
{
    if (!r || !x)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward: runner and input are required");
    sleapc_status st = sleapc__backend_forward(r->be, x, &r->outputs);
    if (st)
        sleapc__tensor_map_clear(&r->outputs);
    return st;
}

int sleapc_runner_n_outputs(const sleapc_runner *r)
{
    return r ? r->outputs.n : 0;
}

sleapc_status sleapc_runner_output(const sleapc_runner *r, int i, const char **name,
                                   sleapc_tensor *out)
{
    if (!r || !out || i < 0 || i >= r->outputs.n)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "runner output %d: no such output", i);
    if (name)
        *name = r->outputs.names[i];
    *out = r->outputs.tensors[i];
    return SLEAPC_OK;
}

double sleapc_runner_gflops(const sleapc_runner *r, const int64_t shape[4])
{
    if (!r || !shape)
        return 0.0;
    return sleapc__graph_flops(&r->model->graph, shape[0], shape[2], shape[3]) * 1e-9;
}

int sleapc_backend_count(void)
{
    return sleapc__backend_count();
}

const char *sleapc_backend_name(int i)
{
    const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
    return f ? f->name : NULL;
}

bool sleapc_backend_available(int i)
{
    const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
    return f && f->score() > 0;
}

int sleapc_devices_list(sleapc_device_info *out, int cap)
{
    int total = 0;
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (!f->list_devices)
            continue;
        int room = out && cap > total ? cap - total : 0;
        total += f->list_devices(room ? out + total : NULL, room);
    }
    return total;
}
