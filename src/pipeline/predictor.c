/* The predictor: models + layer + batching (sleap-nn inference/predictor.py).
 * Arguments are checked by the public functions (api/predictor_public.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/compat.h"
#include "backends/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "pipeline/frame_layout.h"
#include "pipeline/predictor_impl.h"

sleapc_predictor_opts sleapc__predictor_opts_default(void)
{
    sleapc_predictor_opts o = {
        .struct_size = sizeof(sleapc_predictor_opts),
        .backend = "auto",
        .n_threads = 0,
        .batch_size = 4,
        .peak_threshold = 0.2,
        .centroid_peak_threshold = NAN,
        .integral_refinement = 1,
        .integral_patch_size = 5,
        .max_instances = 0,
        .max_edge_length_ratio = 0.25,
        .dist_penalty_weight = 1.0,
        .n_points = 10,
        .min_instance_peaks = 0.0,
        .min_line_scores = 0.25,
        .crop_size = 0,
        .max_height = 0,
        .max_width = 0,
        .input_scale = 0.0,
        .ensure_rgb = -1,
        .ensure_grayscale = -1,
        .precision = SLEAPC_PRECISION_FP32,
        .conv = SLEAPC_CONV_AUTO,
        .bbox_nms_iou = NAN,
    };
    return o;
}

/* Contradictions and out-of-range values, refused before any model loads. */
static sleapc_status check_opts(const sleapc_predictor_opts *o)
{
    if (!sleapc__compat_valid(o->compat))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "compat %d: expected a sleapc_compat value",
                            (int)o->compat);
    if (o->batch_size < 1 || o->batch_size > 4096)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "batch_size %d: expected 1..4096", o->batch_size);
    if (!(o->peak_threshold >= 0.0 && o->peak_threshold <= 1.0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "peak_threshold %g: expected 0..1", o->peak_threshold);
    if (!isnan(o->centroid_peak_threshold) &&
        !(o->centroid_peak_threshold >= 0.0 && o->centroid_peak_threshold <= 1.0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "centroid_peak_threshold %g: expected 0..1",
                            o->centroid_peak_threshold);
    if (o->integral_refinement && (o->integral_patch_size < 1 || o->integral_patch_size > 22))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "integral_patch_size %d: expected 1..22",
                            o->integral_patch_size);
    if (o->max_instances < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "max_instances %d is negative", o->max_instances);
    if (o->n_points < 1 || o->n_points > 1000)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "n_points %d: expected 1..1000", o->n_points);
    if (!(o->max_edge_length_ratio > 0.0) || !(o->dist_penalty_weight >= 0.0) ||
        !(o->min_instance_peaks >= 0.0) || isnan(o->min_line_scores))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "max_edge_length_ratio must be > 0; dist_penalty_weight and min_instance_peaks >= 0");
    if (o->crop_size < 0 || o->max_height < 0 || o->max_width < 0 || o->input_scale < 0 ||
        o->input_scale > 16)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop_size, max_height, max_width and input_scale must be positive");
    if (o->ensure_rgb == 1 && o->ensure_grayscale == 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "ensure_rgb and ensure_grayscale contradict each other");
    return SLEAPC_OK;
}

/* The backend name as the registry spells it: the predictor (and its writer,
 * which records it) then keeps no pointer into the caller's memory, e.g. a
 * binding's temporary string. A name no backend has is kept only until the
 * backend's creation refuses it, which fails the predictor's creation. */
static const char *registry_backend_name(const char *name)
{
    if (!name || !*name || strcmp(name, "auto") == 0)
        return "auto";
    for (int i = 0; i < sleapc__backend_count(); i++)
        if (strcmp(sleapc__backend_factory(i)->name, name) == 0)
            return sleapc__backend_factory(i)->name;
    return name;
}

static bool is_detector(const sleapc_model_config *c)
{
    return c->model_type == SLEAPC_MODEL_TYPE_BBOX_CENTERNET ||
           c->model_type == SLEAPC_MODEL_TYPE_BBOX_SSD;
}

/* Layer and skeleton over p->models (loaded or borrowed). */
static sleapc_status predictor_finish(sleapc_predictor *p)
{
    /* A box detector's boxes carry a category only when its model names
     * classes of its own (sleap-nn leaves the default "object" unset). */
    const sleapc_model_config *c0 = &p->models[0]->cfg;
    /* In top-down behind a detector (either order), the detector's. */
    if (p->n_models == 2 && is_detector(&p->models[1]->cfg))
        c0 = &p->models[1]->cfg;
    if (is_detector(c0) &&
        !(c0->bbox.n_categories == 1 && strcmp(c0->bbox.categories[0], "object") == 0)) {
        sleapc_status st = sleapc__results_set_bbox_categories(
            &p->results, (const char *const *)c0->bbox.categories, c0->bbox.n_categories);
        if (st)
            return st;
    }
    sleapc_status st = sleapc__layer_create(p->models, p->n_models, &p->opts, &p->layer);
    if (st)
        return st;
    /* Instances use the pose model's skeleton: the second stage of top-down. */
    p->pose = p->models[0];
    if (p->n_models == 2 && (p->models[0]->cfg.model_type == SLEAPC_MODEL_TYPE_CENTROID ||
                             is_detector(&p->models[0]->cfg)))
        p->pose = p->models[1];
    p->n_nodes = sleapc__model_n_nodes(p->pose);
    if (p->pose->cfg.model_type == SLEAPC_MODEL_TYPE_CENTROID && p->n_nodes < 1)
        p->n_nodes = 1;
    p->results.n_nodes = (int)p->n_nodes;
    return SLEAPC_OK;
}

static sleapc_status predictor_alloc(const sleapc_predictor_opts *opts, sleapc_predictor **out)
{
    *out = NULL;
    sleapc_predictor_opts o = opts ? *opts : sleapc__predictor_opts_default();
    o.backend = registry_backend_name(o.backend);
    if (o.device && strlen(o.device) >= sizeof((sleapc_predictor *)0)->device)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: device \"%s\": expected "
                            "auto, cpu, cuda[:N], mps or gpu[:N]", o.device);
    sleapc_status st = check_opts(&o);
    if (st)
        return st;
    sleapc_predictor *p = sleapc__calloc(1, sizeof *p);
    if (!p)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create predictor: out of memory");
    p->opts = o;
    if (o.device) {
        snprintf(p->device, sizeof p->device, "%s", o.device);
        p->opts.device = p->device;
    }
    *out = p;
    return SLEAPC_OK;
}

sleapc_status sleapc__predictor_create(const char *const *model_paths, int n_models,
                                       const sleapc_predictor_opts *opts, sleapc_predictor **out)
{
    sleapc_predictor *p = NULL;
    sleapc_status st = predictor_alloc(opts, &p);
    if (st)
        return st;
    p->owns_models = true;
    for (int i = 0; i < n_models && !st; i++) {
        if (!model_paths[i])
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create predictor: model path %d is NULL", i);
        else
            st = sleapc__model_load(model_paths[i], &p->models[i]);
        if (!st)
            p->n_models++;
    }
    if (!st)
        st = predictor_finish(p);
    if (st) {
        sleapc__predictor_destroy(p);
        return st;
    }
    *out = p;
    return SLEAPC_OK;
}

/* Layers and backends only read a model (backends compile from its graph
 * into their own buffers), so one loaded model serves many predictors. */
sleapc_status sleapc__predictor_create_from_models(sleapc_model *const *models, int n_models,
                                                   const sleapc_predictor_opts *opts,
                                                   sleapc_predictor **out)
{
    sleapc_predictor *p = NULL;
    sleapc_status st = predictor_alloc(opts, &p);
    if (st)
        return st;
    for (int i = 0; i < n_models; i++)
        p->models[i] = models[i];
    p->n_models = n_models;
    st = predictor_finish(p);
    if (st) {
        sleapc__predictor_destroy(p);
        return st;
    }
    *out = p;
    return SLEAPC_OK;
}

void sleapc__predictor_destroy(sleapc_predictor *p)
{
    if (!p)
        return;
    sleapc__layer_destroy(p->layer);
    sleapc__layer_destroy(p->other);
    for (int i = 0; i < 2 && p->owns_models; i++)
        sleapc__model_destroy(p->models[i]);
    sleapc__layer_outputs_free(&p->outputs);
    sleapc__aligned_free(p->batch);
    sleapc__predictions_free(&p->results);
    sleapc__free(p);
}

const char *sleapc__predictor_layer_name(const sleapc_predictor *p)
{
    return p->layer->ops->name;
}

int sleapc__predictor_stages(const sleapc_predictor *p, sleapc_stage_info out[2])
{
    return p->layer->ops->stages ? p->layer->ops->stages(p->layer, out) : 0;
}

const char *sleapc__predictor_skeleton_name(const sleapc_predictor *p)
{
    return sleapc__model_skeleton_name(p->pose);
}

int sleapc__predictor_n_nodes(const sleapc_predictor *p)
{
    return (int)p->n_nodes;
}

const char *sleapc__predictor_node_name(const sleapc_predictor *p, int i)
{
    const char *name = sleapc__model_node_name(p->pose, i);
    return name ? name : (i == 0 && p->n_nodes == 1 ? "centroid" : NULL);
}

int sleapc__predictor_n_edges(const sleapc_predictor *p)
{
    return sleapc__model_n_edges(p->pose);
}

void sleapc__predictor_edge(const sleapc_predictor *p, int i, int *src, int *dst)
{
    sleapc__model_edge(p->pose, i, src, dst);
}

int sleapc__predictor_n_symmetries(const sleapc_predictor *p)
{
    return p->pose->cfg.skeleton.n_symmetries;
}

void sleapc__predictor_symmetry(const sleapc_predictor *p, int i, int *a, int *b)
{
    int x = -1, y = -1;
    if (i >= 0 && i < p->pose->cfg.skeleton.n_symmetries) {
        x = p->pose->cfg.skeleton.symmetries[i][0];
        y = p->pose->cfg.skeleton.symmetries[i][1];
    }
    if (a)
        *a = x;
    if (b)
        *b = y;
}

int sleapc__predictor_n_classes(const sleapc_predictor *p)
{
    sleapc_model_type t = p->pose->cfg.model_type;
    bool mc = t == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP || t == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
    return mc ? p->pose->cfg.n_classes : 0;
}

bool sleapc__predictor_class_identity(const sleapc_predictor *p)
{
    return sleapc__predictor_n_classes(p) > 0 && p->pose->cfg.class_identity;
}

const char *sleapc__predictor_class_name(const sleapc_predictor *p, int i)
{
    if (i < 0 || i >= sleapc__predictor_n_classes(p))
        return NULL;
    return p->pose->cfg.classes[i];
}

int sleapc__predictor_batch_size(const sleapc_predictor *p)
{
    return p->opts.batch_size;
}

sleapc_status sleapc__predictor_run(sleapc_predictor *p, const uint8_t *frames, bool chw, int64_t n,
                                    int64_t h, int64_t w, int64_t c)
{
    if (n < 1 || h < 1 || w < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: empty frames (%lld frames of %lldx%lld)",
                            (long long)n, (long long)h, (long long)w);
    if (c != 1 && c != 3)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "predict: frames have %lld channels; sleapc takes 1 (grayscale) or 3 (RGB)",
                            (long long)c);
    if (h > 65536 || w > 65536)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: frame size %lldx%lld is too large",
                            (long long)h, (long long)w);
    sleapc_status cst = sleapc__predictor_crops_only(p, h, w, "predict");
    if (cst)
        return cst;
    p->results.n_frames = 0;
    p->results.n_insts = 0;
    p->results.n_boxes = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t net0 = sleapc__backend_forward_ns();
    int64_t bs = p->opts.batch_size;
    size_t frame_px = (size_t)(h * w * c);
    size_t need = frame_px * (size_t)(bs < n ? bs : n);
    if (!chw && need > p->batch_cap) {
        sleapc__aligned_free(p->batch);
        p->batch = sleapc__aligned_alloc(need);
        p->batch_cap = p->batch ? need : 0;
        if (!p->batch)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
    }
    const uint8_t *src = frames;
    for (int64_t start = 0; start < n; start += bs) {
        int64_t b = n - start < bs ? n - start : bs;
        const uint8_t *batch = src + (size_t)start * frame_px;
        if (!chw) {
            for (int64_t k = 0; k < b; k++)
                sleapc__frame_to_chw(src + (size_t)(start + k) * frame_px, h, w, c,
                                     p->batch + (size_t)k * frame_px);
            batch = p->batch;
        }
        if (start > 0 && sleapc__predictor_should_abort(p))
            return sleapc__fail(SLEAPC_ERR_INTERRUPTED, "predict: stopped after %lld of %lld frames",
                                (long long)start, (long long)n);
        sleapc_status st = p->layer->ops->run(p->layer, batch, b, c, h, w, &p->outputs);
        if (!st)
            st = sleapc__predictor_pack(p, &p->outputs);
        if (st)
            return sleapc__wrap(st, "predict (%s)", p->layer->ops->name);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    p->stats.frames += n;
    p->stats.network_s += (double)(sleapc__backend_forward_ns() - net0) * 1e-9;
    p->stats.run_s += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return SLEAPC_OK;
}

/* Instances a frame that a warm-up makes room for, without max_instances. */
#define WARM_INSTANCES 16

/* One pass over blank frames builds what frames of this size need (backend
 * plans, layer scratch, the batch buffer); its results and time are not kept. */
sleapc_status sleapc__predictor_warmup(sleapc_predictor *p, int64_t n, int64_t h, int64_t w,
                                       int64_t c)
{
    if (n < 1)
        n = p->opts.batch_size;
    if (n < 1 || n > 4096 || h < 1 || w < 1 || h > 65536 || w > 65536 || (c != 1 && c != 3))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "warm up: %lld frames of %lldx%lldx%lld: expected 1..4096 frames of "
                            "1 or 3 channels", (long long)n, (long long)h, (long long)w,
                            (long long)c);
    size_t bytes = (size_t)(n * h * w * c);
    uint8_t *blank = sleapc__aligned_alloc(bytes);
    if (!blank)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "warm up: out of memory");
    memset(blank, 0, bytes);
    sleapc_predictor_stats kept = p->stats;
    p->warming = true;
    /* Frames as callers hand them (HWC): the batch buffer is sized too. */
    sleapc_status st = sleapc__predictor_run(p, blank, false, n, h, w, c);
    /* Blank pixels read the same in either layout: (b, c, h, w) too. */
    int64_t b = n < p->opts.batch_size ? n : p->opts.batch_size;
    int64_t per_frame = p->opts.max_instances > 0 ? p->opts.max_instances : WARM_INSTANCES;
    if (!st && p->layer->ops->warmup)
        st = p->layer->ops->warmup(p->layer, blank, b, c, h, w, per_frame);
    /* Outputs and results with room for that many instances a frame. */
    if (!st)
        st = sleapc__layer_outputs_reset(&p->outputs, b, per_frame, p->n_nodes,
                                         sleapc__predictor_n_classes(p));
    if (!st)
        st = sleapc__results_reserve(&p->results, b, b * per_frame);
    p->warming = false;
    p->stats = kept;
    p->results.n_frames = 0;
    p->results.n_insts = 0;
    p->results.n_boxes = 0;
    sleapc__aligned_free(blank);
    return st ? sleapc__wrap(st, "warm up") : SLEAPC_OK;
}

bool sleapc__predictor_should_abort(sleapc_predictor *p)
{
    return !p->warming && sleapc__interrupted();
}

sleapc_predictor_stats sleapc__predictor_get_stats(const sleapc_predictor *p)
{
    return p->stats;
}

void sleapc__predictor_reset_stats(sleapc_predictor *p)
{
    memset(&p->stats, 0, sizeof p->stats);
}

int sleapc__predictor_n_frames(const sleapc_predictor *p)
{
    return (int)p->results.n_frames;
}

int sleapc__predictor_n_instances(const sleapc_predictor *p, int frame)
{
    if (frame < 0 || frame >= p->results.n_frames)
        return 0;
    return (int)p->results.frames[frame].n;
}

sleapc_status sleapc__predictor_instance(const sleapc_predictor *p, int frame, int i,
                                         sleapc_instance *out)
{
    if (i < 0 || i >= sleapc__predictor_n_instances(p, frame))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predictor instance %d of frame %d: no such instance",
                            i, frame);
    int64_t idx = p->results.frames[frame].first + i;
    const sleapc_pred_instance *ins = &p->results.insts[idx];
    out->points = p->results.points + idx * p->n_nodes * 2;
    out->point_scores = p->results.point_scores + idx * p->n_nodes;
    out->score = ins->score;
    out->track = ins->track;
    out->tracking_score = ins->tracking_score;
    out->has_centroid = ins->has_centroid;
    out->centroid[0] = ins->centroid[0];
    out->centroid[1] = ins->centroid[1];
    out->centroid_score = ins->centroid_score;
    return SLEAPC_OK;
}
