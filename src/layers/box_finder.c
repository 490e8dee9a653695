/* The box-detector stage (box_finder.h): the BBoxLayer's forward and
 * decode, shared with the box-seeded top-down layer. */
#include "layers/box_finder.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/bbox.h"
#include "layers/layer.h"

/* inference/bbox.py DEFAULT_MAX_DETECTIONS: max_instances None (0 here). */
#define DEFAULT_MAX_DETECTIONS 100

/* Frame k's boxes in model-input pixels, into out (room for max_detections). */
static sleapc_status decode_frame(sleapc_box_finder *bl, int64_t k, sleapc_box *out, int *n)
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

static sleapc_status finish(sleapc_box_finder *bl, int64_t b, sleapc_layer_outputs *out)
{
    const sleapc_preprocess_plan *pl = &bl->stage.plan;
    bl->dopts.in_h = (int)pl->out_h;
    bl->dopts.in_w = (int)pl->out_w;
    sleapc_status st = sleapc__layer_outputs_reset_boxes(out, b, bl->dopts.max_detections);
    for (int64_t k = 0; !st && k < b; k++) {
        sleapc_box *bx = out->boxes + k * out->box_slots;
        int n = 0;
        st = decode_frame(bl, k, bx, &n);
        if (st)
            break;
        sleapc__bbox_to_frame(bx, n, pl);
        sleapc__bbox_clip_to_frame(bx, &n, (int)pl->src_h, (int)pl->src_w);
        out->n_boxes[k] = n;
    }
    return st;
}

sleapc_status sleapc__box_finder_run(sleapc_box_finder *f, const uint8_t *frames, int64_t b,
                                     int64_t c, int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    sleapc_status st = sleapc__stage_run(&f->stage, frames, b, c, h, w);
    return st ? st : finish(f, b, out);
}

void sleapc__box_finder_free(sleapc_box_finder *f)
{
    sleapc__stage_free(&f->stage);
    sleapc__free(f->raw);
    memset(f, 0, sizeof *f);
}

sleapc_status sleapc__box_finder_init(sleapc_box_finder *f, const sleapc_model *m,
                                      const sleapc_predictor_opts *o, double threshold,
                                      double iou_threshold)
{
    memset(f, 0, sizeof *f);
    f->ssd = m->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_SSD;
    f->n_logits = m->cfg.bbox.n_categories + 1;
    f->dopts.score_threshold = (float)threshold;
    f->dopts.max_detections = o->max_instances > 0 ? o->max_instances : DEFAULT_MAX_DETECTIONS;
    f->dopts.iou_threshold = isnan(iou_threshold) ? sleapc__bbox_default_nms_iou(m->cfg.model_type)
                                                  : (float)iou_threshold;
    if (f->ssd)
        sleapc__bbox_ssd_anchors(&m->cfg.bbox, &f->anchors);
    sleapc_preprocess_opts pp = sleapc__layer_preprocess_opts(m, o, true);
    return sleapc__stage_init(&f->stage, m, o, &pp);
}

