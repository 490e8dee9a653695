/* ExportedBBoxLayer (sleap-nn 0.3.5 inference/layers/bbox.py): a box
 * detector's export holds the network only (export/wrappers/bbox.py), so the
 * preprocessing (channels, size matcher, the export's input scale, stride
 * padding, as uint8) and the decoder are the checkpoint layer's. As in
 * sleap-nn's _select_export_layer, the score threshold is the metadata's
 * (its CLI drops --peak_threshold for exports) and the NMS the style's
 * default; max_instances applies. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/bbox.h"
#include "layers/exported.h"

/* inference/bbox.py DEFAULT_MAX_DETECTIONS: max_instances None (0 here). */
#define DEFAULT_MAX_DETECTIONS 100

typedef struct exported_bbox {
    sleapc_layer base;
    sleapc_exported_stage stage;
    bool ssd;
    int n_logits;                  /* categories (+ background for SSD) */
    int stride;                    /* CenterNet's output stride */
    sleapc_bbox_decode_opts dopts;
    sleapc_ssd_anchors anchors;
    sleapc_preprocess_opts pp;
    sleapc_preprocess_plan plan;
    bool have_plan;
    int64_t in_c, in_h, in_w;      /* the frames the plan is for */
    uint8_t *input;                /* (b, plan.c, out_h, out_w) */
    size_t input_cap;
    void *scratch;
    size_t scratch_cap;
} exported_bbox;

static sleapc_status grow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SLEAPC_OK;
    void *q = sleapc__aligned_alloc(n);
    if (!q)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "exported box layer: out of memory (%zu bytes)", n);
    sleapc__aligned_free(*p);
    *p = q;
    *cap = n;
    return SLEAPC_OK;
}

/* The graph's input: every frame through the plan, as uint8. */
static sleapc_status preprocess(exported_bbox *e, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w)
{
    sleapc_status st;
    if (!e->have_plan || c != e->in_c || h != e->in_h || w != e->in_w) {
        if ((st = sleapc__preprocess_plan_make(&e->pp, c, h, w, &e->plan)))
            return st;
        e->have_plan = true;
        e->in_c = c;
        e->in_h = h;
        e->in_w = w;
    }
    const sleapc_preprocess_plan *p = &e->plan;
    size_t one = (size_t)(p->c * p->out_h * p->out_w), src = (size_t)(c * h * w);
    if ((st = grow((void **)&e->input, &e->input_cap, one * (size_t)b)) ||
        (st = grow(&e->scratch, &e->scratch_cap, p->scratch_bytes)))
        return st;
    for (int64_t k = 0; k < b; k++)
        if ((st = sleapc__preprocess_run_u8(p, frames + (size_t)k * src,
                                            e->input + (size_t)k * one, e->scratch)))
            return st;
    return SLEAPC_OK;
}

static sleapc_status decode_frame(exported_bbox *e, int64_t b, int64_t k, sleapc_box *out, int *n)
{
    const sleapc_exported_stage *s = &e->stage;
    sleapc_status st;
    if (e->ssd) {
        const sleapc_tensor *raw = NULL;
        if ((st = sleapc__exported_stage_output(s, "SSDHead", SLEAPC_DTYPE_F32, 3,
                                                (int64_t[]){b, -1, e->n_logits + 4}, &raw)))
            return st;
        int64_t a = raw->shape[1];
        return sleapc__bbox_decode_ssd((const float *)raw->data + k * a * (e->n_logits + 4), a,
                                       e->n_logits, &e->anchors, &e->dopts, out, n);
    }
    const sleapc_tensor *heat = NULL, *size = NULL, *off = NULL;
    if ((st = sleapc__exported_stage_output(s, "BBoxCenterHead", SLEAPC_DTYPE_F32, 4,
                                            (int64_t[]){b, e->n_logits, -1, -1}, &heat)))
        return st;
    int64_t h = heat->shape[2], w = heat->shape[3], hw = h * w;
    if ((st = sleapc__exported_stage_output(s, "BBoxSizeHead", SLEAPC_DTYPE_F32, 4,
                                            (int64_t[]){b, 2, h, w}, &size)) ||
        (st = sleapc__exported_stage_output(s, "BBoxOffsetHead", SLEAPC_DTYPE_F32, 4,
                                            (int64_t[]){b, 2, h, w}, &off)))
        return st;
    return sleapc__bbox_decode_centernet((const float *)heat->data + k * e->n_logits * hw,
                                         e->n_logits, (const float *)size->data + k * 2 * hw,
                                         (const float *)off->data + k * 2 * hw, (int)h, (int)w,
                                         e->stride, &e->dopts, out, n);
}

static sleapc_status exported_bbox_run(sleapc_layer *l, const uint8_t *frames, int64_t b,
                                       int64_t c, int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    exported_bbox *e = l->impl;
    sleapc_status st = preprocess(e, frames, b, c, h, w);
    const sleapc_preprocess_plan *p = &e->plan;
    if (!st)
        st = sleapc__exported_stage_run(&e->stage, e->input, b, p->c, p->out_h, p->out_w);
    e->dopts.in_h = (int)p->out_h;
    e->dopts.in_w = (int)p->out_w;
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, 0, 0, 0);
    if (!st)
        st = sleapc__layer_outputs_reset_boxes(out, b, e->dopts.max_detections);
    for (int64_t k = 0; !st && k < b; k++) {
        sleapc_box *bx = out->boxes + k * out->box_slots;
        int n = 0;
        if ((st = decode_frame(e, b, k, bx, &n)))
            break;
        sleapc__bbox_to_frame(bx, n, p);
        sleapc__bbox_clip_to_frame(bx, &n, (int)p->src_h, (int)p->src_w);
        out->n_boxes[k] = n;
        out->eff_scale[k] = (float)p->eff_scale;
    }
    return st;
}

static void exported_bbox_destroy(sleapc_layer *l)
{
    exported_bbox *e = l->impl;
    sleapc__exported_stage_free(&e->stage);
    sleapc__aligned_free(e->input);
    sleapc__aligned_free(e->scratch);
    sleapc__free(e);
}

static int exported_bbox_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const exported_bbox *e = l->impl;
    out[0] = sleapc__exported_stage_info(&e->stage);
    return 1;
}

static const struct sleapc_layer_ops exported_bbox_ops = {.name = "ExportedBBoxLayer",
                                                          .run = exported_bbox_run,
                                                          .destroy = exported_bbox_destroy,
                                                          .stages = exported_bbox_stages};

/* The backbone's max stride as its config writes it (sleap-nn pads to it). */
static int written_max_stride(const sleapc_model_config *c)
{
    return c->backbone_type == SLEAPC_BACKBONE_UNET ? c->unet.max_stride : c->vit.max_stride;
}

sleapc_status sleapc__exported_bbox_layer_create(const sleapc_model *m,
                                                 const sleapc_predictor_opts *o,
                                                 sleapc_layer **out)
{
    *out = NULL;
    const sleapc_model_config *cfg = &m->cfg;
    bool ssd = m->export_meta.kind == SLEAPC_EXPORT_BBOX_SSD;
    if (cfg->model_type != (ssd ? SLEAPC_MODEL_TYPE_BBOX_SSD : SLEAPC_MODEL_TYPE_BBOX_CENTERNET))
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "%s: a %s export needs its training_config.yaml next to the graph "
                            "to rebuild the box decoder",
                            m->dir, m->export_meta.model_type);
    exported_bbox *e = sleapc__calloc(1, sizeof *e);
    if (!e)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    e->base.ops = &exported_bbox_ops;
    e->base.impl = e;
    e->ssd = ssd;
    e->n_logits = cfg->bbox.n_categories + (ssd ? 1 : 0);
    e->stride = m->export_meta.output_stride;
    e->dopts.score_threshold = (float)sleapc__exported_peak_gate(m);
    e->dopts.max_detections = o->max_instances > 0 ? o->max_instances : DEFAULT_MAX_DETECTIONS;
    e->dopts.iou_threshold = sleapc__bbox_default_nms_iou(cfg->model_type);
    if (ssd)
        sleapc__bbox_ssd_anchors(&cfg->bbox, &e->anchors);
    e->pp = sleapc__layer_preprocess_opts(m, o, true);
    e->pp.scale = m->export_meta.input_scale; /* the export's own (--input-scale) */
    e->pp.max_stride = written_max_stride(cfg);
    static const char *const centernet_outputs[] = {"BBoxCenterHead", "BBoxSizeHead",
                                                    "BBoxOffsetHead", NULL};
    static const char *const ssd_outputs[] = {"SSDHead", NULL};
    sleapc_status st =
        sleapc__exported_stage_init(&e->stage, m, o, ssd ? ssd_outputs : centernet_outputs);
    if (st) {
        exported_bbox_destroy(&e->base);
        return st;
    }
    *out = &e->base;
    return SLEAPC_OK;
}
