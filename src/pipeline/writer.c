#define _DEFAULT_SOURCE /* realpath */
/* The writer: each batch's predictions are filtered as they come and kept
 * in a spill file (core/results_spill.h), so memory stays flat over any run
 * length; writer_close.c tracks them and writes the format. Arguments are
 * checked by the public functions (api/writer_public.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "core/compat.h"
#include "core/error.h"
#include "core/results.h"
#include "core/results_spill.h"
#include "core/suffix.h"
#include "io/video/frame_source.h"
#include "io/video/video_encode.h"
#include "pipeline/predictor_impl.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"
#include "pipeline/writer_impl.h"
#include "pipeline/writer_state.h"

/* sleap-nn's _resolve_centroid_packaging: a centroid-only model trained on a
 * multi-node skeleton writes a one-node "centroid" skeleton (sleap-io's
 * get_centroid_skeleton); a one-node model keeps its own. */
static bool collapses_to_centroid(const sleapc_predictor *p)
{
    const char *layer = sleapc__predictor_layer_name(p);
    return (strcmp(layer, "CentroidLayer") == 0 || strcmp(layer, "ExportedCentroidLayer") == 0) &&
           sleapc__predictor_n_nodes(p) > 1;
}

/* The video's path as the file records it: absolute when it names a file
 * here, so that the predictions open their video from any folder (sleap-io
 * opens the stored path, then the same name beside the labels); live sources
 * ("-", URLs, devices) and names of no file are kept as given. */
static char *recorded_path(const char *name)
{
    struct stat st;
    if (!name[0] || name[0] == '/' || strstr(name, "://") || stat(name, &st) != 0 ||
        !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
        return sleapc__strdup(name);
    char *real = realpath(name, NULL);
    char *copy = sleapc__strdup(real ? real : name);
    free(real);
    return copy;
}

/* The frame rate sleap-io records for a media file (its container's), 0
 * when unknown: only regular video files are opened, never a live source;
 * images and arrays have none. */
static double media_fps(const char *name)
{
    struct stat st;
    if (!name || !name[0] || strstr(name, "://") || stat(name, &st) != 0 || !S_ISREG(st.st_mode) ||
        sleapc__image_file_name(name) || sleapc__ends_with_nocase(name, ".npy"))
        return 0;
    return sleapc__video_probe_fps(name);
}

static sleapc_status copy_header(sleapc_predictions *pr, const sleapc_predictor *p,
                                 const sleapc_video_info *videos, int n_videos, bool collapse)
{
    pr->skeleton_name = sleapc__strdup(collapse ? "centroid" : sleapc__predictor_skeleton_name(p));
    pr->n_nodes = collapse ? 1 : sleapc__predictor_n_nodes(p);
    pr->n_edges = collapse ? 0 : sleapc__predictor_n_edges(p);
    pr->n_symmetries = collapse ? 0 : sleapc__predictor_n_symmetries(p);
    pr->n_tracks = sleapc__predictor_n_classes(p);
    pr->multiclass = pr->n_tracks > 0;
    pr->identities = pr->multiclass && sleapc__predictor_class_identity(p);
    pr->n_videos = n_videos;
    pr->node_names = sleapc__calloc((size_t)pr->n_nodes + 1, sizeof(char *));
    pr->edges = sleapc__calloc((size_t)pr->n_edges + 1, sizeof *pr->edges);
    pr->symmetries = sleapc__calloc((size_t)pr->n_symmetries + 1, sizeof *pr->symmetries);
    pr->track_names = sleapc__calloc((size_t)pr->n_tracks + 1, sizeof(char *));
    pr->videos = sleapc__calloc((size_t)n_videos + 1, sizeof *pr->videos);
    if (!pr->skeleton_name || !pr->node_names || !pr->edges || !pr->symmetries ||
        !pr->track_names || !pr->videos)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < pr->n_nodes; i++) {
        const char *name = collapse ? "centroid" : sleapc__predictor_node_name(p, i);
        if (!(pr->node_names[i] = sleapc__strdup(name ? name : "")))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < pr->n_edges; i++)
        sleapc__predictor_edge(p, i, &pr->edges[i][0], &pr->edges[i][1]);
    for (int i = 0; i < pr->n_symmetries; i++)
        sleapc__predictor_symmetry(p, i, &pr->symmetries[i][0], &pr->symmetries[i][1]);
    for (int i = 0; i < pr->n_tracks; i++)
        if (!(pr->track_names[i] = sleapc__strdup(sleapc__predictor_class_name(p, i))))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_videos; i++) {
        sleapc_pred_video *v = &pr->videos[i];
        v->filename = recorded_path(videos[i].filename ? videos[i].filename : "");
        v->n_frames = videos[i].n_frames;
        v->height = videos[i].height;
        v->width = videos[i].width;
        v->channels = videos[i].channels;
        v->fps = videos[i].dataset ? 0 : media_fps(videos[i].filename);
        if (!v->filename)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        if (videos[i].dataset && !(v->dataset = sleapc__strdup(videos[i].dataset)))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        if (videos[i].dataset && videos[i].source_json &&
            !(v->source_json = sleapc__strdup(videos[i].source_json)))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    return SLEAPC_OK;
}

/* "backend" and "precision": what the stages ran on, one name when they
 * agree, else each stage's in order, joined by "+"; "stages" has the
 * details. Requested values are kept apart: "auto" and a bf16 model that
 * fell back to float32 resolve only once predictions run. */
static void add_stages(cJSON *j, const sleapc_predictor *p)
{
    const sleapc_predictor_opts *o = &p->opts;
    sleapc_stage_info s[2];
    int n = sleapc__predictor_stages(p, s);
    char backend[128] = "", precision[64] = "";
    for (int i = 0; i < n; i++) {
        size_t lb = strlen(backend), lp = strlen(precision);
        if (i == 0 || strcmp(s[i].backend, s[0].backend) != 0)
            snprintf(backend + lb, sizeof backend - lb, "%s%s", lb ? "+" : "", s[i].backend);
        if (i == 0 || s[i].precision != s[0].precision)
            snprintf(precision + lp, sizeof precision - lp, "%s%s", lp ? "+" : "",
                     sleapc__precision_name(s[i].precision));
    }
    cJSON_AddStringToObject(j, "backend", n ? backend : (o->backend ? o->backend : "auto"));
    cJSON_AddStringToObject(j, "backend_requested", o->backend ? o->backend : "auto");
    /* The device that ran the network: a stage's accelerator if any. */
    const char *device = "cpu";
    for (int i = 0; i < n; i++)
        if (s[i].device && strcmp(s[i].device, "cpu") != 0)
            device = s[i].device;
    cJSON_AddStringToObject(j, "device", device);
    cJSON_AddStringToObject(j, "device_requested", o->device ? o->device : "auto");
    cJSON_AddStringToObject(j, "precision", n ? precision : sleapc__precision_name(o->precision));
    cJSON_AddStringToObject(j, "precision_requested", sleapc__precision_name(o->precision));
    cJSON *stages = cJSON_AddArrayToObject(j, "stages");
    for (int i = 0; stages && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddStringToObject(e, "model", s[i].model);
        cJSON_AddStringToObject(e, "backend", s[i].backend);
        cJSON_AddStringToObject(e, "device", s[i].device ? s[i].device : "cpu");
        if (s[i].device_name && *s[i].device_name)
            cJSON_AddStringToObject(e, "device_name", s[i].device_name);
        cJSON_AddStringToObject(e, "precision", sleapc__precision_name(s[i].precision));
        /* fp16 on Vulkan: binary16 products too (shaderFloat16), or storage only. */
        if (s[i].precision == SLEAPC_PRECISION_FP16)
            cJSON_AddBoolToObject(e, "fp16_arithmetic", s[i].fp16_arithmetic != 0);
        /* The first-batch check's measure, named after the precision checked. */
        bool fp16 = o->precision == SLEAPC_PRECISION_FP16;
        if (s[i].bf16_error >= 0)
            cJSON_AddNumberToObject(e, fp16 ? "fp16_head_rel_l2" : "bf16_head_rel_l2",
                                    s[i].bf16_error);
        if (s[i].bf16_moved >= 0)
            cJSON_AddNumberToObject(e, fp16 ? "fp16_expected_moved" : "bf16_expected_moved",
                                    s[i].bf16_moved);
        cJSON_AddItemToArray(stages, e);
    }
}

/* What made these predictions: recorded as the file's provenance. */
static char *provenance_json(const sleapc_predictor *p)
{
    const sleapc_predictor_opts *o = &p->opts;
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "software", "sleapc");
    cJSON_AddStringToObject(j, "sleapc_version", sleapc__version());
    cJSON_AddStringToObject(j, "layer", sleapc__predictor_layer_name(p));
    cJSON_AddStringToObject(j, "sleap_nn_compat", sleapc__compat_name(o->compat));
    cJSON *models = cJSON_AddArrayToObject(j, "model_paths");
    for (int i = 0; i < p->n_models; i++)
        cJSON_AddItemToArray(models, cJSON_CreateString(p->models[i]->dir));
    add_stages(j, p);
    cJSON_AddNumberToObject(j, "batch_size", o->batch_size);
    cJSON_AddNumberToObject(j, "peak_threshold", o->peak_threshold);
    if (!isnan(o->centroid_peak_threshold))
        cJSON_AddNumberToObject(j, "centroid_peak_threshold", o->centroid_peak_threshold);
    cJSON_AddStringToObject(j, "integral_refinement", o->integral_refinement ? "integral" : "none");
    cJSON_AddNumberToObject(j, "integral_patch_size", o->integral_patch_size);
    if (o->max_instances > 0)
        cJSON_AddNumberToObject(j, "max_instances", o->max_instances);
    cJSON_AddNumberToObject(j, "max_edge_length_ratio", o->max_edge_length_ratio);
    cJSON_AddNumberToObject(j, "dist_penalty_weight", o->dist_penalty_weight);
    cJSON_AddNumberToObject(j, "n_points", o->n_points);
    cJSON_AddNumberToObject(j, "min_instance_peaks", o->min_instance_peaks);
    cJSON_AddNumberToObject(j, "min_line_scores", o->min_line_scores);
    if (o->crop_size > 0)
        cJSON_AddNumberToObject(j, "crop_size", o->crop_size);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    char *copy = text ? sleapc__strdup(text) : NULL;
    cJSON_free(text);
    return copy;
}

sleapc_status sleapc__writer_open(const char *path, const sleapc_predictor *p,
                                  const sleapc_video_info *videos, int n_videos,
                                  sleapc_writer **out)
{
    *out = NULL;
    const sleapc_pred_format *format;
    sleapc_status fst = sleapc__pred_format_for_output(path, &format);
    if (fst)
        return fst;
    sleapc_writer *w = sleapc__calloc(1, sizeof *w);
    if (!w)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    w->format = format;
    w->filters = sleapc__filters_config_default();
    w->in_order = true;
    w->src_nodes = sleapc__predictor_n_nodes(p);
    w->collapse = collapses_to_centroid(p);
    w->path = sleapc__strdup(path);
    sleapc_status st = w->path ? copy_header(&w->pr, p, videos, n_videos, w->collapse)
                               : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st && !(w->pr.provenance = provenance_json(p)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    /* A live source's length is known only at the end: one past its last frame. */
    if (!st && !(w->live = sleapc__calloc((size_t)n_videos + 1, sizeof *w->live)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n_videos; i++)
        w->live[i] = videos[i].n_frames <= 0;
    w->batch.n_nodes = w->pr.n_nodes;
    w->batch.multiclass = w->pr.multiclass;
    if (!st && (st = sleapc__spill_open(path, w->pr.n_nodes, &w->spill)))
        st = sleapc__wrap(st, "write %s", path);
    if (st) {
        sleapc__writer_discard(w);
        return st;
    }
    *out = w;
    return SLEAPC_OK;
}

/* The backend auto chose and a bf16 fallback are known only once predictions
 * ran (a top-down crop stage may first run batches later): the provenance is
 * made again when what the stages run on changed, so a steady run does not
 * allocate for it. */
static sleapc_status refresh_provenance(sleapc_writer *w, const sleapc_predictor *p)
{
    sleapc_stage_info s[2];
    int n = sleapc__predictor_stages(p, s);
    bool same = n == w->n_stages;
    for (int i = 0; same && i < n; i++)
        same = strcmp(s[i].backend, w->stages[i].backend) == 0 &&
               s[i].precision == w->stages[i].precision &&
               s[i].bf16_error == w->stages[i].bf16_error &&
               s[i].bf16_moved == w->stages[i].bf16_moved;
    if (same)
        return SLEAPC_OK;
    char *prov = provenance_json(p);
    if (!prov)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    sleapc__free(w->pr.provenance);
    w->pr.provenance = prov;
    w->n_stages = n;
    memcpy(w->stages, s, sizeof s);
    return SLEAPC_OK;
}

/* The batch's results into w->batch, in the file's skeleton. */
static sleapc_status take_batch(sleapc_writer *w, const sleapc_predictor *p, int video,
                                const int64_t *frame_indices)
{
    sleapc_predictions *pr = &w->batch;
    pr->n_frames = pr->n_insts = pr->n_boxes = 0;
    sleapc_status pst = refresh_provenance(w, p);
    /* A box detector's class names, which its boxes' categories index. */
    if (!pst && w->pr.n_bbox_categories == 0 && p->results.n_bbox_categories > 0)
        pst = sleapc__results_set_bbox_categories(
            &w->pr, (const char *const *)p->results.bbox_categories, p->results.n_bbox_categories);
    if (pst)
        return pst;
    if (!w->collapse) {
        if (p->results.n_nodes != w->pr.n_nodes)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: predictor skeleton differs");
        return sleapc__results_append(pr, &p->results, video, frame_indices);
    }
    /* Centroid-only: each instance's one point (the anchor node's, the one
     * set) as the node "centroid". */
    const sleapc_predictions *src = &p->results;
    if (src->n_nodes != w->src_nodes)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: predictor skeleton differs");
    sleapc_status st = sleapc__results_reserve(pr, src->n_frames, src->n_insts);
    if (st)
        return st;
    for (int64_t k = 0; k < src->n_frames; k++) {
        sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
        f->video = video;
        f->frame_idx = frame_indices[k];
        f->first = src->frames[k].first;
        f->n = src->frames[k].n;
        if ((st = sleapc__results_add_boxes(pr, f, src->boxes + src->frames[k].box_first,
                                            src->frames[k].n_boxes)))
            return st;
    }
    for (int64_t i = 0; i < src->n_insts; i++) {
        const float *pts = src->points + i * src->n_nodes * 2;
        int j = 0;
        while (j < src->n_nodes - 1 && isnan(pts[2 * j]))
            j++;
        pr->insts[i] = src->insts[i];
        pr->insts[i].class_index = pr->multiclass ? src->insts[i].track : -1;
        memcpy(pr->points + i * 2, pts + 2 * j, 2 * sizeof(float));
        pr->point_scores[i] = src->point_scores[i * src->n_nodes + j];
    }
    pr->n_insts = src->n_insts;
    return SLEAPC_OK;
}

/* sleap-nn's clean_empty_frames (--no_empty_frames): a frame with boxes is
 * not empty. */
void sleapc__writer_drop_empty_frames(sleapc_predictions *pr)
{
    int64_t m = 0;
    for (int64_t k = 0; k < pr->n_frames; k++)
        if (pr->frames[k].n > 0 || pr->frames[k].n_boxes > 0)
            pr->frames[m++] = pr->frames[k];
    pr->n_frames = m;
}

sleapc_status sleapc__writer_add(sleapc_writer *w, const sleapc_predictor *p, int video,
                                 const int64_t *frame_indices)
{
    if (video < 0 || video >= w->pr.n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: bad arguments");
    if (!w->spill)
        return sleapc__fail(SLEAPC_ERR_STATE, "write %s: the writer failed before", w->path);
    sleapc_status st = take_batch(w, p, video, frame_indices);
    /* The filters judge each frame on its own, so they run as frames come;
     * tracking (writer_close.c) needs them in order and runs at close. */
    if (!st)
        st = sleapc__predictions_filter(&w->batch, &w->filters);
    if (st)
        return st;
    for (int64_t k = 0; k < w->batch.n_frames; k++) {
        const sleapc_pred_frame *f = &w->batch.frames[k];
        if (w->n_added > 0 && (f->video < w->last_video ||
                               (f->video == w->last_video && f->frame_idx < w->last_frame)))
            w->in_order = false;
        w->last_video = f->video;
        w->last_frame = f->frame_idx;
        w->n_added++;
        sleapc_pred_video *v = &w->pr.videos[f->video];
        if (w->live[f->video] && f->frame_idx >= v->n_frames)
            v->n_frames = f->frame_idx + 1;
    }
    if (w->drop_empty && !w->track)
        sleapc__writer_drop_empty_frames(&w->batch);
    if ((st = sleapc__spill_append(w->spill, &w->batch))) {
        /* what was spilled is incomplete: nothing more goes in */
        sleapc__spill_close(w->spill);
        w->spill = NULL;
        return sleapc__wrap(st, "write %s", w->path);
    }
    return SLEAPC_OK;
}

/* Settings apply to every frame of the file: the frames are filtered (and,
 * without tracking, emptied frames dropped) as they are added. */
static sleapc_status check_no_frames(const sleapc_writer *w, const char *what)
{
    if (w->n_added > 0)
        return sleapc__fail(SLEAPC_ERR_STATE, "%s: set before the first frames are added", what);
    return SLEAPC_OK;
}

sleapc_status sleapc__writer_set_tracking(sleapc_writer *w, const sleapc_tracking_opts *t,
                                          const sleapc_filter_opts *f)
{
    sleapc_filter_config fc;
    sleapc_tracker_opts to;
    sleapc_status st = check_no_frames(w, "set tracking");
    if (!st)
        st = sleapc__filters_resolve(f, &fc);
    if (!st && t && t->tracking)
        st = sleapc__tracking_resolve(t, w->pr.n_nodes, &to);
    /* a predictor's instances carry no re-ID vectors: refused before any work */
    if (!st && t && t->tracking && !to.mot && to.features == SLEAPC_TRACK_EMBEDDINGS)
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "--features embeddings tracks by the detections' re-ID vectors, and "
                          "predicted instances carry none: add an embedding model (-m "
                          "EMBEDDING_MODEL) to detect, embed and track in one command");
    if (st)
        return st;
    w->filters = fc;
    w->track = t && t->tracking;
    if (w->track)
        w->tracking = to;
    return SLEAPC_OK;
}

sleapc_status sleapc__writer_set_drop_empty(sleapc_writer *w, bool drop)
{
    sleapc_status st = check_no_frames(w, "writer drop empty");
    if (!st)
        w->drop_empty = drop;
    return st;
}

void sleapc__writer_discard(sleapc_writer *w)
{
    if (!w)
        return;
    sleapc__predictions_free(&w->pr);
    sleapc__predictions_free(&w->batch);
    sleapc__spill_close(w->spill);
    sleapc__free(w->live);
    sleapc__free(w->path);
    sleapc__free(w);
}
