/* The embedding route's crops and batches (see embedder.h). Only pose mode
 * is run: detections with points, an all-ones mask, so burn-in changes
 * nothing (sleap-nn warns about a burn-in model there, as sleapc does). */
#include "layers/embedder.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/exported.h"
#include "layers/ops/crop_skia.h"
#include "layers/ops/preprocess.h"
#include "layers/stage.h"

/* sleap-nn data/normalization.py EMBEDDING_STD_FLOOR, and _standardize's eps. */
#define STD_FLOOR 1.0f
#define STD_EPS 1e-5f

struct sleapc_embedder {
    const sleapc_model *model;
    sleapc_stage stage;
    bool stage_ready;
    /* An export (model.onnx): the graph standardizes each crop itself and
     * takes it as uint8, so the crops go in as cut, never standardized here. */
    bool exported;
    sleapc_exported_stage xs;
    uint8_t *crops_u8;         /* (batch, c, size, size) */
    sleapc_preprocess_opts pp; /* channels and size matcher only */
    sleapc_preprocess_plan plan;
    bool have_plan;
    int64_t in_c, h, w;        /* the frames the plan is for */
    uint8_t *sized;            /* the last frame, prepared (plan.c, sized_h, sized_w) */
    size_t sized_cap;
    void *scratch;
    size_t scratch_cap;
    int64_t size, c, dim, batch;
    float *crops;              /* (batch, c, size, size) */
    float **dst;               /* (batch) where each queued crop's vector goes */
    int64_t n_queued;
};

static sleapc_status grow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SLEAPC_OK;
    void *q = sleapc__aligned_alloc(n);
    if (!q)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory (%zu bytes)", n);
    sleapc__aligned_free(*p);
    *p = q;
    *cap = n;
    return SLEAPC_OK;
}

static sleapc_status check_model(const sleapc_model *m)
{
    const sleapc_model_config *cfg = &m->cfg;
    if (cfg->model_type != SLEAPC_MODEL_TYPE_EMBEDDING)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s is a %s model, not an embedding (re-ID) model",
                            m->dir, sleapc__model_type_name(cfg->model_type));
    if (cfg->embedding.mask_mode)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: the model embeds masks (detection_mode: mask); sleapc reads no "
                            "segmentation masks, so it embeds pose detections only",
                            m->dir);
    if (cfg->embedding.custom_centroid)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: anchor_part / centroid_method other than the centre of mass "
                            "are not supported by sleapc's embedding crops yet",
                            m->dir);
    if (cfg->crop_size < 1 || cfg->crop_size > SLEAPC_CROP_SKIA_MAX_SIDE)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: crop_size %d (sleapc crops 1 to %d)",
                            m->dir, cfg->crop_size, SLEAPC_CROP_SKIA_MAX_SIDE);
    if (m->graph.in_channels != 1 && m->graph.in_channels != 3)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: a model of %d input channels", m->dir,
                            m->graph.in_channels);
    return SLEAPC_OK;
}

sleapc_status sleapc__embedder_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                      sleapc_embedder **out)
{
    *out = NULL;
    sleapc_status st = check_model(m);
    if (st)
        return st;
    sleapc_embedder *e = sleapc__calloc(1, sizeof *e);
    if (!e)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    e->model = m;
    e->size = m->cfg.crop_size;
    e->c = m->graph.in_channels;
    e->dim = m->cfg.embedding.dim;
    e->batch = o->batch_size > 0 ? o->batch_size : 64;
    /* _resolve_embedding_channels: grey unless the config asks for RGB. */
    e->pp.ensure_rgb = m->cfg.ensure_rgb;
    e->pp.ensure_grayscale = !m->cfg.ensure_rgb;
    e->pp.max_height = m->cfg.max_height;
    e->pp.max_width = m->cfg.max_width;
    e->pp.scale = 1.0;
    e->pp.max_stride = 1;
    e->pp.u8_int_resize = true;
    if (m->cfg.embedding.burn_in)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s was trained with mask burn-in, but these detections carry no masks: "
                    "the crops use a whole-crop standardize with the background left in, "
                    "which degrades the embeddings (as in sleap-nn)",
                    m->dir);
    sleapc_predictor_opts so = *o;
    so.precision = SLEAPC_PRECISION_FP32;
    const size_t crop_floats = (size_t)(e->c * e->size * e->size);
    e->exported = m->baked != NULL;
    e->crops = sleapc__aligned_alloc(sizeof(float) * crop_floats * (size_t)e->batch);
    e->dst = sleapc__calloc((size_t)e->batch, sizeof *e->dst);
    if (e->exported)
        e->crops_u8 = sleapc__malloc(crop_floats * (size_t)e->batch);
    if (!e->crops || !e->dst || (e->exported && !e->crops_u8))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    static const char *const outputs[] = {"embedding", NULL};
    if (!st && e->exported)
        st = sleapc__exported_stage_init(&e->xs, m, &so, outputs);
    else if (!st)
        st = sleapc__stage_init(&e->stage, m, &so, &e->pp);
    e->stage_ready = !st;
    if (st) {
        sleapc__embedder_destroy(e);
        return st;
    }
    *out = e;
    return SLEAPC_OK;
}

void sleapc__embedder_destroy(sleapc_embedder *e)
{
    if (!e)
        return;
    if (e->stage_ready && !e->exported)
        sleapc__stage_free(&e->stage);
    sleapc__exported_stage_free(&e->xs);
    sleapc__free(e->crops_u8);
    sleapc__aligned_free(e->sized);
    sleapc__aligned_free(e->scratch);
    sleapc__aligned_free(e->crops);
    sleapc__free(e->dst);
    sleapc__free(e);
}

int sleapc__embedder_dim(const sleapc_embedder *e)
{
    return (int)e->dim;
}

bool sleapc__embedder_centroid(const float *points, int n, float *cx, float *cy)
{
    /* torch.nanmean in float32: the finite points' sum over their count. */
    float sx = 0.0f, sy = 0.0f;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const float x = points[2 * i], y = points[2 * i + 1];
        if (isnan(x) || isnan(y))
            continue;
        sx += x;
        sy += y;
        k++;
    }
    if (k == 0)
        return false;
    *cx = sx / (float)k;
    *cy = sy / (float)k;
    return isfinite(*cx) && isfinite(*cy);
}

sleapc_status sleapc__embedder_frame(sleapc_embedder *e, const uint8_t *frame, int64_t c,
                                     int64_t h, int64_t w)
{
    sleapc_status st = SLEAPC_OK;
    if (!e->have_plan || c != e->in_c || h != e->h || w != e->w) {
        if ((st = sleapc__preprocess_plan_make(&e->pp, c, h, w, &e->plan)))
            return st;
        if (e->plan.c != e->c)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "%s: frames of %lld channels for a model of %lld",
                                e->model->dir, (long long)e->plan.c, (long long)e->c);
        e->have_plan = true;
        e->in_c = c;
        e->h = h;
        e->w = w;
    }
    size_t n = (size_t)(e->plan.c * e->plan.out_h * e->plan.out_w);
    if ((st = grow((void **)&e->sized, &e->sized_cap, n)) ||
        (st = grow(&e->scratch, &e->scratch_cap, e->plan.scratch_bytes)))
        return st;
    return sleapc__preprocess_run_u8(&e->plan, frame, e->sized, e->scratch);
}

void sleapc__embedder_standardize(float *crops, int64_t n, int64_t c, int64_t size)
{
    const int64_t px = size * size;
    for (int64_t k = 0; k < n * c; k++) {
        float *g = crops + k * px;
        /* Whole grey levels: the sum is exact in any order, and the mean is
         * the float32 quotient torch takes. */
        double sum = 0.0;
        for (int64_t i = 0; i < px; i++)
            sum += g[i];
        const float mu = (float)sum / (float)px;
        double ss = 0.0;
        for (int64_t i = 0; i < px; i++) {
            const float d = g[i] - mu;
            ss += (double)(d * d);
        }
        float sd = sqrtf((float)(ss / (double)px)) + STD_EPS;
        sd = sd < STD_FLOOR ? STD_FLOOR : sd;
        for (int64_t i = 0; i < px; i++)
            g[i] = (g[i] - mu) / sd;
    }
}

sleapc_status sleapc__embedder_add(sleapc_embedder *e, float cx, float cy, float *dst)
{
    if (!e->have_plan)
        return sleapc__fail(SLEAPC_ERR_STATE, "embedder: a crop before any frame");
    /* _crop_pose: the centroid times the size matcher's ratio, in double. */
    const double r = e->plan.eff_scale;
    const float x = r == 1.0 ? cx : (float)((double)cx * r);
    const float y = r == 1.0 ? cy : (float)((double)cy * r);
    const int64_t crop = e->c * e->size * e->size;
    sleapc__crop_skia(e->sized, e->plan.c, e->plan.out_h, e->plan.out_w, x, y, e->size,
                      e->crops + e->n_queued * crop);
    e->dst[e->n_queued++] = dst;
    return e->n_queued == e->batch ? sleapc__embedder_flush(e) : SLEAPC_OK;
}

/* The export's graph on n crops: their grey levels as uint8 (the crops are
 * cut from uint8 frames), standardized and embedded inside the graph. */
static sleapc_status forward_exported(sleapc_embedder *e, int64_t n, const sleapc_tensor **v)
{
    const int64_t len = n * e->c * e->size * e->size;
    for (int64_t i = 0; i < len; i++) {
        const float x = roundf(e->crops[i]);
        e->crops_u8[i] = (uint8_t)(x < 0.0f ? 0.0f : x > 255.0f ? 255.0f : x);
    }
    sleapc_status st = sleapc__exported_stage_run(&e->xs, e->crops_u8, n, e->c, e->size, e->size);
    return st ? st : sleapc__exported_stage_output(&e->xs, "embedding", SLEAPC_DTYPE_F32, 2,
                                                   (int64_t[]){n, e->dim}, v);
}

sleapc_status sleapc__embedder_flush(sleapc_embedder *e)
{
    const int64_t n = e->n_queued;
    if (n == 0)
        return SLEAPC_OK;
    e->n_queued = 0;
    const sleapc_tensor *v = NULL;
    sleapc_status st;
    if (e->exported) {
        st = forward_exported(e, n, &v);
    } else {
        sleapc__embedder_standardize(e->crops, n, e->c, e->size);
        st = sleapc__stage_forward_f32(&e->stage, e->crops, n, e->c, e->size, e->size);
        if (!st)
            st = sleapc__stage_head(&e->stage, "EmbeddingHead", true, &v);
    }
    if (!st && (v->shape[0] != n || v->shape[1] != e->dim))
        st = sleapc__fail(SLEAPC_ERR_BACKEND, "%s: the network gave %lldx%lld vectors for %lld "
                          "crops of %lld floats",
                          e->model->dir, (long long)v->shape[0], (long long)v->shape[1],
                          (long long)n, (long long)e->dim);
    for (int64_t k = 0; !st && k < n; k++)
        memcpy(e->dst[k], (const float *)v->data + k * e->dim, sizeof(float) * (size_t)e->dim);
    return st;
}
