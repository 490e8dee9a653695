/* The exported path's shared parts: the baked graph's stage and the layer
 * choice (sleap-nn predictor.py _select_export_layer). */
#include "layers/exported.h"

#include <string.h>

#include "backends/model_backend.h"
#include "core/alloc.h"
#include "core/channels_u8.h"
#include "core/dtype.h"
#include "core/error.h"
#include "layers/bbox.h"
#include "layers/ops/preprocess.h"

static bool declares_output(const sleapc_onnx_graph *g, const char *name)
{
    for (int i = 0; i < g->n_outputs; i++)
        if (strcmp(g->outputs[i].name, name) == 0)
            return true;
    return false;
}

sleapc_status sleapc__exported_stage_init(sleapc_exported_stage *s, const sleapc_model *m,
                                          const sleapc_predictor_opts *o,
                                          const char *const *outputs)
{
    memset(s, 0, sizeof *s);
    s->model = m;
    s->in_c = m->graph.in_channels;
    if (!m->baked)
        return sleapc__fail(SLEAPC_ERR_STATE, "%s: not an export with model.onnx", m->dir);
    for (int i = 0; outputs[i]; i++)
        if (!declares_output(&m->baked->graph, outputs[i]))
            return sleapc__fail(SLEAPC_ERR_FORMAT,
                                "%s: a %s export must have a \"%s\" output; this graph has none",
                                m->baked->path, m->export_meta.model_type, outputs[i]);
    sleapc_backend_opts bo = {.n_threads = o->n_threads, .precision = o->precision,
                              .device = o->device, .conv = o->conv};
    s->precision = o->precision;
    return sleapc__model_backend_create(m, o->backend, &bo, &s->be);
}

sleapc_stage_info sleapc__exported_stage_info(const sleapc_exported_stage *s)
{
    return (sleapc_stage_info){.model = s->model->dir,
                               .backend = sleapc__backend_name(s->be),
                               .device = sleapc__backend_device(s->be),
                               .device_name = sleapc__backend_device_name(s->be),
                               .precision = s->precision,
                               .bf16_error = -1,
                               .bf16_moved = -1};
}

void sleapc__exported_stage_free(sleapc_exported_stage *s)
{
    if (!s)
        return;
    sleapc__backend_destroy(s->be);
    sleapc__free(s->coerced);
    memset(s, 0, sizeof *s);
}

sleapc_status sleapc__exported_stage_run(sleapc_exported_stage *s, const uint8_t *frames,
                                         int64_t b, int64_t c, int64_t h, int64_t w)
{
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {b, c, h, w},
                       .data = (void *)frames};
    if (c != s->in_c) {
        bool rgb = s->in_c == 3, gray = s->in_c == 1;
        if (sleapc__channels_coerced(c, rgb, gray) != s->in_c)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s: frames have %lld channels, the exported graph takes %lld",
                                s->model->dir, (long long)c, (long long)s->in_c);
        size_t plane = (size_t)(h * w), need = (size_t)b * (size_t)s->in_c * plane;
        if (need > s->coerced_cap) {
            sleapc__free(s->coerced);
            s->coerced = sleapc__malloc(need);
            s->coerced_cap = s->coerced ? need : 0;
            if (!s->coerced)
                return sleapc__fail(SLEAPC_ERR_NOMEM, "exported layer: out of memory");
        }
        for (int64_t i = 0; i < b; i++) {
            sleapc_status st = sleapc__channels_coerce_u8(frames + (size_t)i * (size_t)c * plane,
                                                            c, h, w, rgb, gray,
                                                            s->coerced + (size_t)i * (size_t)s->in_c * plane);
            if (st)
                return st;
        }
        x.shape[1] = s->in_c;
        x.data = s->coerced;
    }
    /* Plan for a new shape (the last batch of a run may be shorter). */
    if (memcmp(s->warm_shape, x.shape, sizeof s->warm_shape) != 0) {
        sleapc_status st = sleapc__backend_warmup(s->be, x.shape);
        if (st)
            return st;
        memcpy(s->warm_shape, x.shape, sizeof s->warm_shape);
    }
    return sleapc__backend_forward(s->be, &x, &s->out);
}

sleapc_status sleapc__exported_stage_output(const sleapc_exported_stage *s, const char *name,
                                            sleapc_dtype dtype, int ndim, const int64_t *dims,
                                            const sleapc_tensor **out)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(&s->out, name);
    bool ok = t && t->dtype == dtype && t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = dims[i] < 0 || t->shape[i] == dims[i];
    if (!ok)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "%s: output \"%s\" %s: expected a %d-D %s array (%lld first)",
                            s->model->baked->path, name, t ? "has another shape or type" : "is missing",
                            ndim, sleapc__dtype_name(dtype), (long long)dims[0]);
    *out = t;
    return SLEAPC_OK;
}

double sleapc__exported_peak_gate(const sleapc_model *m)
{
    return m->export_meta.has_peak_threshold ? m->export_meta.peak_threshold : 0.2;
}

sleapc_status sleapc__exported_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                            sleapc_layer **out)
{
    *out = NULL;
    switch (m->export_meta.kind) {
    case SLEAPC_EXPORT_SINGLE_INSTANCE:
    case SLEAPC_EXPORT_CENTERED_INSTANCE:
    case SLEAPC_EXPORT_CENTROID:
    case SLEAPC_EXPORT_TOPDOWN:
    case SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN:
        return sleapc__exported_points_layer_create(m, o, out);
    case SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN_COMBINED:
        return sleapc__exported_topdown_multiclass_layer_create(m, o, out);
    case SLEAPC_EXPORT_BOTTOMUP:
        return sleapc__exported_bottomup_layer_create(m, o, out);
    case SLEAPC_EXPORT_MULTI_CLASS_BOTTOMUP:
        return sleapc__exported_bottomup_multiclass_layer_create(m, o, out);
    case SLEAPC_EXPORT_BBOX_CENTERNET:
    case SLEAPC_EXPORT_BBOX_SSD:
        return sleapc__exported_bbox_layer_create(m, o, out);
    case SLEAPC_EXPORT_EMBEDDING:
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s is an embedding (re-ID) export: it embeds the detections of a "
                            ".slp (sleapc predict --data_path DETECTIONS.slp -m %s "
                            "--save_embeddings slp, or sleapc_embed_detections)",
                            m->dir, m->dir);
    case SLEAPC_EXPORT_UNKNOWN:
        break;
    }
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: unknown export model type", m->dir);
}

sleapc_status sleapc__exported_stage_peaks(sleapc_exported_stage *s, const uint8_t *frames,
                                           int64_t b, int64_t c, int64_t h, int64_t w, int64_t n,
                                           const sleapc_tensor **peaks, const sleapc_tensor **vals,
                                           const sleapc_tensor **mask, int64_t *k)
{
    *k = 0;
    sleapc_status st = sleapc__exported_stage_run(s, frames, b, c, h, w);
    if (!st)
        st = sleapc__exported_stage_output(s, "peaks", SLEAPC_DTYPE_F32, 4,
                                           (int64_t[]){b, n, -1, 2}, peaks);
    if (st)
        return st;
    *k = (*peaks)->shape[2];
    st = sleapc__exported_stage_output(s, "peak_vals", SLEAPC_DTYPE_F32, 3,
                                       (int64_t[]){b, n, *k}, vals);
    if (!st)
        st = sleapc__exported_stage_output(s, "peak_mask", SLEAPC_DTYPE_U8, 3,
                                           (int64_t[]){b, n, *k}, mask);
    return st;
}
