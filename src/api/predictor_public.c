/* Public predictor functions: check arguments, call the pipeline. */
#include "api/opts_size.h"
#include "backends/backend.h"
#include "core/alloc.h"
#include "core/dtype.h"
#include "core/error.h"
#include "model/model_impl.h"
#include "pipeline/frame_view.h"
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
    sleapc_predictor_opts o, d = sleapc__predictor_opts_default();
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_predictor_opts);
    return st ? st : sleapc__predictor_create(model_paths, n_models, &o, out);
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
    sleapc_predictor_opts o, d = sleapc__predictor_opts_default();
    sleapc_status st = SLEAPC__OPTS_READ(&o, d, opts, sleapc_predictor_opts);
    return st ? st : sleapc__predictor_create_from_models(models, n_models, &o, out);
}

sleapc_status sleapc_predictor_warmup(sleapc_predictor *p, int64_t n_frames, int64_t height,
                                      int64_t width, int64_t channels)
{
    if (!p)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "warm up: predictor is required");
    return sleapc__predictor_warmup(p, n_frames, height, width, channels);
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

sleapc_status sleapc_predictor_skeleton(const sleapc_predictor *p, sleapc_skeleton *out)
{
    if (!p || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "predictor skeleton: predictor and out are required");
    sleapc__model_skeleton(p->pose, out);
    return SLEAPC_OK;
}

int sleapc_predictor_batch_size(const sleapc_predictor *p)
{
    return p ? sleapc__predictor_batch_size(p) : 0;
}

sleapc_status sleapc_predictor_run(sleapc_predictor *p, const sleapc_frame *frames)
{
    if (!p)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: predictor is required");
    sleapc_frame f;
    sleapc_status st = sleapc__frame_resolve(frames, "predict", &f);
    if (st)
        return st;
    int64_t c = sleapc__frame_channels(&f);
    if (sleapc__frame_is_packed(&f))
        return sleapc__predictor_run(p, f.data, false, f.n_frames, f.height, f.width, c);
    /* Padded or BGR rows: packed into RGB / gray first, as the stream does. */
    size_t frame_bytes = (size_t)(f.height * f.width * c);
    uint8_t *packed = sleapc__malloc(frame_bytes * (size_t)f.n_frames);
    if (!packed)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory for %lld frames",
                            (long long)f.n_frames);
    for (int64_t i = 0; i < f.n_frames; i++)
        sleapc__frame_pack(&f, i, packed + (size_t)i * frame_bytes);
    st = sleapc__predictor_run(p, packed, false, f.n_frames, f.height, f.width, c);
    sleapc__free(packed);
    return st;
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
