/* BBoxLayer (sleap-nn 0.3.5 inference/layers/bbox.py): preprocess as every
 * layer, one forward, the decoder of the model type (ops/bbox_decode.h) on
 * each frame in model-input pixels, then the two corners down the
 * coordinate ladder (input scale, size-matcher scale) and the clip to the
 * frame (clip_boxes_to_frame). */
#include "layers/bbox.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "layers/stage.h"

/* inference/bbox.py DEFAULT_MAX_DETECTIONS: max_instances None (0 here). */
#define DEFAULT_MAX_DETECTIONS 100

typedef struct bbox_layer {
    sleapc_layer base;
    sleapc_stage stage;
    bool ssd;
    int n_logits;                  /* SSD: categories + background */
    sleapc_bbox_decode_opts dopts; /* score threshold, max detections, NMS */
    sleapc_ssd_anchors anchors;    /* SSD */
    float *raw;                    /* SSD: one frame's (A, n_logits + 4) */
    int64_t raw_rows;
} bbox_layer;

float sleapc__bbox_default_nms_iou(sleapc_model_type type)
{
    return type == SLEAPC_MODEL_TYPE_BBOX_SSD ? 0.45f : -1.0f;
}

int64_t sleapc__bbox_ssd_gather(const sleapc_tensor *const *cls, const sleapc_tensor *const *box,
                                int n_levels, int n_logits, int64_t k, float *raw, int64_t cap)
{
    int64_t row = 0;
    const int64_t width = n_logits + 4;
    for (int l = 0; l < n_levels; l++) {
        const sleapc_tensor *c = cls[l], *b = box[l];
        int64_t a = b->shape[1] / 4, h = b->shape[2], w = b->shape[3];
        if (c->ndim != 4 || b->ndim != 4 || b->shape[1] != a * 4 || c->shape[1] != a * n_logits ||
            c->shape[2] != h || c->shape[3] != w || k >= b->shape[0] || k >= c->shape[0]) {
            sleapc__fail(SLEAPC_ERR_BACKEND, "SSDHead level %d: class and box maps do not fit "
                         "together", l);
            return -1;
        }
        int64_t hw = h * w;
        const float *cl = (const float *)c->data + k * c->shape[1] * hw;
        const float *bx = (const float *)b->data + k * b->shape[1] * hw;
        if (raw && row + hw * a > cap) {
            sleapc__fail(SLEAPC_ERR_INVALID_ARG, "SSDHead: more anchors than room");
            return -1;
        }
        for (int64_t p = 0; raw && p < hw; p++) {
            for (int64_t j = 0; j < a; j++) {
                float *r = raw + (row + p * a + j) * width;
                for (int q = 0; q < n_logits; q++)
                    r[q] = cl[(j * n_logits + q) * hw + p];
                for (int q = 0; q < 4; q++)
                    r[n_logits + q] = bx[(j * 4 + q) * hw + p];
            }
        }
        row += hw * a;
    }
    return row;
}

/* Frame k's boxes in model-input pixels, into out (room for max_detections). */
static sleapc_status decode_frame(bbox_layer *bl, int64_t k, sleapc_box *out, int *n)
{
    const sleapc_stage *s = &bl->stage;
    const sleapc_model *m = s->model;
    const sleapc_tensor *maps[SLEAPC_MAX_HEADS] = {0};
    for (int h = 0; h < m->n_heads; h++) {
        sleapc_status st = sleapc__stage_head(s, m->heads[h].name, false, &maps[h]);
        if (st)
            return st;
    }
    if (!bl->ssd) {
        const sleapc_tensor *heat = maps[0], *size = maps[1], *off = maps[2];
        int64_t c = heat->shape[1], h = heat->shape[2], w = heat->shape[3], hw = h * w;
        return sleapc__bbox_decode_centernet((const float *)heat->data + k * c * hw, (int)c,
                                             (const float *)size->data + k * 2 * hw,
                                             (const float *)off->data + k * 2 * hw,
                                             (int)h, (int)w, m->heads[0].stride, &bl->dopts, out,
                                             n);
    }
    /* Heads alternate cls, box per level (model_heads.h). */
    const sleapc_tensor *cls[SLEAPC_BBOX_LIST_MAX], *box[SLEAPC_BBOX_LIST_MAX];
    int levels = m->n_heads / 2;
    for (int l = 0; l < levels; l++) {
        cls[l] = maps[2 * l];
        box[l] = maps[2 * l + 1];
    }
    int64_t rows = sleapc__bbox_ssd_gather(cls, box, levels, bl->n_logits, k, NULL, 0);
    if (rows < 0)
        return SLEAPC_ERR_BACKEND;
    if (rows > bl->raw_rows) {
        sleapc__free(bl->raw);
        bl->raw = sleapc__malloc((size_t)rows * (size_t)(bl->n_logits + 4) * sizeof(float));
        bl->raw_rows = bl->raw ? rows : 0;
        if (!bl->raw)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    sleapc__bbox_ssd_gather(cls, box, levels, bl->n_logits, k, bl->raw, bl->raw_rows);
    return sleapc__bbox_decode_ssd(bl->raw, rows, bl->n_logits, &bl->anchors, &bl->dopts, out,
                                   n);
}

void sleapc__bbox_to_frame(sleapc_box *bx, int n, const sleapc_preprocess_plan *pl)
{
    for (int i = 0; i < n; i++) {
        float xy[4] = {bx[i].x1, bx[i].y1, bx[i].x2, bx[i].y2};
        sleapc__coords_undo_input_scale(xy, 2, pl->opts.scale);
        sleapc__coords_undo_eff_scale(xy, 2, pl->eff_scale);
        bx[i].x1 = xy[0];
        bx[i].y1 = xy[1];
        bx[i].x2 = xy[2];
        bx[i].y2 = xy[3];
    }
}

static sleapc_status bbox_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out)
{
    bbox_layer *bl = l->impl;
    const sleapc_preprocess_plan *pl = &bl->stage.plan;
    bl->dopts.in_h = (int)pl->out_h;
    bl->dopts.in_w = (int)pl->out_w;
    sleapc_status st = sleapc__layer_outputs_reset(out, b, 0, 0, 0);
    if (!st)
        st = sleapc__layer_outputs_reset_boxes(out, b, bl->dopts.max_detections);
    for (int64_t k = 0; !st && k < b; k++) {
        sleapc_box *bx = out->boxes + k * out->box_slots;
        int n = 0;
        st = decode_frame(bl, k, bx, &n);
        if (st)
            break;
        sleapc__bbox_to_frame(bx, n, pl);
        sleapc__bbox_clip_to_frame(bx, &n, (int)pl->src_h, (int)pl->src_w);
        out->n_boxes[k] = n;
        out->eff_scale[k] = (float)pl->eff_scale;
    }
    return st;
}

static sleapc_status bbox_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                              int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    bbox_layer *bl = l->impl;
    sleapc_status st = sleapc__stage_run(&bl->stage, frames, b, c, h, w);
    return st ? st : bbox_finish(l, b, out);
}

static void bbox_destroy(sleapc_layer *l)
{
    bbox_layer *bl = l->impl;
    sleapc__stage_free(&bl->stage);
    sleapc__free(bl->raw);
    sleapc__free(bl);
}

static int bbox_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const bbox_layer *bl = l->impl;
    out[0] = sleapc__stage_info(&bl->stage);
    return 1;
}

static const struct sleapc_layer_ops bbox_ops = {
    .name = "BBoxLayer", .run = bbox_run, .destroy = bbox_destroy, .stages = bbox_stages};

void sleapc__bbox_ssd_anchors(const sleapc_bbox_config *c, sleapc_ssd_anchors *a)
{
    memset(a, 0, sizeof *a);
    a->n_levels = c->ssd_levels;
    a->n_scales = c->n_anchor_scales;
    a->n_ratios = c->n_aspect_ratios;
    for (int l = 0; l < c->ssd_levels; l++) {
        a->strides[l] = c->stride << l;
        a->sizes[l] = c->anchor_sizes[l];
    }
    for (int i = 0; i < c->n_anchor_scales; i++)
        a->scales[i] = c->anchor_scales[i];
    for (int i = 0; i < c->n_aspect_ratios; i++)
        a->ratios[i] = c->aspect_ratios[i];
    for (int i = 0; i < 4; i++)
        a->variances[i] = (float)c->box_variances[i];
}

sleapc_status sleapc__bbox_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                        double iou_threshold, sleapc_layer **out)
{
    bbox_layer *bl = sleapc__calloc(1, sizeof *bl);
    if (!bl)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    bl->base.ops = &bbox_ops;
    bl->base.impl = bl;
    bl->ssd = m->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_SSD;
    bl->n_logits = m->cfg.bbox.n_categories + 1;
    bl->dopts.score_threshold = (float)o->peak_threshold;
    bl->dopts.max_detections = o->max_instances > 0 ? o->max_instances : DEFAULT_MAX_DETECTIONS;
    bl->dopts.iou_threshold = isnan(iou_threshold) ? sleapc__bbox_default_nms_iou(m->cfg.model_type)
                                                   : (float)iou_threshold;
    if (bl->ssd)
        sleapc__bbox_ssd_anchors(&m->cfg.bbox, &bl->anchors);
    sleapc_preprocess_opts pp = sleapc__layer_preprocess_opts(m, o, true);
    sleapc_status st = sleapc__stage_init(&bl->stage, m, o, &pp);
    if (st) {
        bbox_destroy(&bl->base);
        return st;
    }
    *out = &bl->base;
    return SLEAPC_OK;
}
