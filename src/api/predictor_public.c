/* Public predictor functions: check arguments, call the pipeline. */
#include "backends/backend.h"
#include "core/dtype.h"
#include "core/error.h"
#include "pipeline/predictor_impl.h"

sleapc_predictor_opts sleapc_predictor_opts_default(void)
{
    return sleapc__predictor_opts_default();
}

sleapc_status sleapc_predictor_create(const char *const *model_paths, int n_models,
                                      const sleapc_predictor_opts *opts, sleapc_predictor **out)
{
    if (!out || !model_paths)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: model paths and out are required");
    *out = NULL;
    if (n_models < 1 || n_models > 2)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: give one or two model folders, not %d",
                            n_models);
    /* Every struct_size this library knows (one so far) is the current size. */
    if (opts && opts->struct_size != sizeof *opts)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create predictor: opts.struct_size is %u, expected %zu (start from "
                            "sleapc_predictor_opts_default())", opts->struct_size, sizeof *opts);
    return sleapc__predictor_create(model_paths, n_models, opts, out);
}

void sleapc_predictor_destroy(sleapc_predictor *p)
{
    sleapc__predictor_destroy(p);
}

sleapc_status sleapc_predictor_create_from_models(sleapc_model *const *models, int n_models,
                                                  const sleapc_predictor_opts *opts,
                                                  sleapc_predictor **out)
{
    if (!out || !models)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: models and out are required");
    *out = NULL;
    if (n_models < 1 || n_models > 2)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: give one or two models, not %d",
                            n_models);
    for (int i = 0; i < n_models; i++)
        if (!models[i])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: model %d is NULL", i);
    if (opts && opts->struct_size != sizeof *opts)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create predictor: opts.struct_size is %u, expected %zu (start from "
                            "sleapc_predictor_opts_default())", opts->struct_size, sizeof *opts);
    return sleapc__predictor_create_from_models(models, n_models, opts, out);
}

sleapc_status sleapc_predictor_warmup(sleapc_predictor *p, int64_t n_frames, int64_t height,
                                      int64_t width, int64_t channels)
{
    if (!p)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "warm up: predictor is required");
    return sleapc__predictor_warmup(p, n_frames, height, width, channels);
}

void sleapc_predictor_set_abort(sleapc_predictor *p, sleapc_abort_fn fn, void *user)
{
    if (p)
        sleapc__predictor_set_abort(p, fn, user);
}

const char *sleapc_predictor_layer_name(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_layer_name(p) : "";
}

int sleapc_predictor_n_stages(const sleapc_predictor *p)
{
    sleapc_stage_info s[2];
    return p ? sleapc__predictor_stages(p, s) : 0;
}

sleapc_status sleapc_predictor_stage_info(const sleapc_predictor *p, int i,
                                          sleapc_stage_info *out)
{
    sleapc_stage_info s[2];
    int n = p ? sleapc__predictor_stages(p, s) : 0;
    if (!out || i < 0 || i >= n)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predictor stage info: no stage %d", i);
    *out = s[i];
    return SLEAPC_OK;
}

const char *sleapc_precision_name(sleapc_precision precision)
{
    return sleapc__precision_name(precision);
}

const char *sleapc_predictor_skeleton_name(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_skeleton_name(p) : "";
}

int sleapc_predictor_n_nodes(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_n_nodes(p) : 0;
}

const char *sleapc_predictor_node_name(const sleapc_predictor *p, int i)
{
    return p ? sleapc__predictor_node_name(p, i) : NULL;
}

int sleapc_predictor_n_edges(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_n_edges(p) : 0;
}

void sleapc_predictor_edge(const sleapc_predictor *p, int i, int *src, int *dst)
{
    if (p) {
        sleapc__predictor_edge(p, i, src, dst);
        return;
    }
    if (src)
        *src = -1;
    if (dst)
        *dst = -1;
}

int sleapc_predictor_n_symmetries(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_n_symmetries(p) : 0;
}

void sleapc_predictor_symmetry(const sleapc_predictor *p, int i, int *a, int *b)
{
    if (p) {
        sleapc__predictor_symmetry(p, i, a, b);
        return;
    }
    if (a)
        *a = -1;
    if (b)
        *b = -1;
}

int sleapc_predictor_n_classes(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_n_classes(p) : 0;
}

const char *sleapc_predictor_class_name(const sleapc_predictor *p, int i)
{
    return p ? sleapc__predictor_class_name(p, i) : NULL;
}

int sleapc_predictor_batch_size(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_batch_size(p) : 0;
}

sleapc_status sleapc_predictor_run(sleapc_predictor *p, const sleapc_tensor *frames)
{
    if (!p || !frames || !frames->data)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: predictor and frames are required");
    if (frames->dtype != SLEAPC_DTYPE_U8)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: frames must be uint8, got %s",
                            sleapc__dtype_name(frames->dtype));
    int64_t n, h, w, c;
    const int64_t *s = frames->shape;
    switch (frames->ndim) {
    case 2: n = 1; h = s[0]; w = s[1]; c = 1; break;
    case 3: n = 1; h = s[0]; w = s[1]; c = s[2]; break;
    case 4: n = s[0]; h = s[1]; w = s[2]; c = s[3]; break;
    default:
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "predict: frames must be (H,W), (H,W,C) or (N,H,W,C), got %d dimensions",
                            frames->ndim);
    }
    return sleapc__predictor_run(p, frames->data, false, n, h, w, c);
}

sleapc_predictor_stats sleapc_predictor_get_stats(const sleapc_predictor *p)
{
    sleapc_predictor_stats s = {0};
    return p ? sleapc__predictor_get_stats(p) : s;
}

void sleapc_predictor_reset_stats(sleapc_predictor *p)
{
    if (p)
        sleapc__predictor_reset_stats(p);
}

int sleapc_predictor_n_frames(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_n_frames(p) : 0;
}

int sleapc_predictor_n_instances(const sleapc_predictor *p, int frame)
{
    return p ? sleapc__predictor_n_instances(p, frame) : 0;
}

sleapc_status sleapc_predictor_instance(const sleapc_predictor *p, int frame, int i,
                                        sleapc_instance *out)
{
    if (!p || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predictor instance %d of frame %d: no such instance",
                            i, frame);
    return sleapc__predictor_instance(p, frame, i, out);
}
