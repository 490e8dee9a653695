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
#include "layers/box_finder.h"
#include "layers/stage.h"

typedef struct bbox_layer {
    sleapc_layer base;
    sleapc_box_finder f;
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

static sleapc_status bbox_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                              int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    bbox_layer *bl = l->impl;
    sleapc_status st = sleapc__layer_outputs_reset(out, b, 0, 0, 0);
    if (!st)
        st = sleapc__box_finder_run(&bl->f, frames, b, c, h, w, out);
    for (int64_t k = 0; !st && k < b; k++)
        out->eff_scale[k] = (float)bl->f.stage.plan.eff_scale;
    return st;
}

static void bbox_destroy(sleapc_layer *l)
{
    bbox_layer *bl = l->impl;
    sleapc__box_finder_free(&bl->f);
    sleapc__free(bl);
}

static int bbox_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const bbox_layer *bl = l->impl;
    out[0] = sleapc__stage_info(&bl->f.stage);
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
    sleapc_status st = sleapc__box_finder_init(&bl->f, m, o, o->peak_threshold, iou_threshold);
    if (st) {
        bbox_destroy(&bl->base);
        return st;
    }
    *out = &bl->base;
    return SLEAPC_OK;
}
