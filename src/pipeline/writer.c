/* The writer: gather predictions, then hand them to the format writer chosen
 * by the file extension, inside an atomic file. Arguments are checked by the
 * public functions (api/writer_public.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/results.h"
#include "pipeline/predictor_impl.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"
#include "pipeline/writer_impl.h"

/* Formats by extension; see sleapc_writer_open (include/sleapc/writer.h). */
typedef enum writer_format { FORMAT_JSON, FORMAT_SLP, FORMAT_ANALYSIS_H5, FORMAT_CSV } writer_format;

struct sleapc_writer {
    char *path;
    writer_format format;
    sleapc_predictions pr;
    sleapc_filter_config filters; /* run at close, then tracking when track */
    bool track;
    sleapc_tracker_opts tracking;
    int src_nodes;      /* nodes of the predictor's instances */
    bool collapse;      /* centroid-only: each instance's one point as node "centroid" */
    bool drop_empty;    /* frames without instances are not written */
};

/* sleap-nn's _resolve_centroid_packaging: a centroid-only model trained on a
 * multi-node skeleton writes a one-node "centroid" skeleton (sleap-io's
 * get_centroid_skeleton); a one-node model keeps its own. */
static bool collapses_to_centroid(const sleapc_predictor *p)
{
    const char *layer = sleapc__predictor_layer_name(p);
    return (strcmp(layer, "CentroidLayer") == 0 || strcmp(layer, "ExportedCentroidLayer") == 0) &&
           sleapc__predictor_n_nodes(p) > 1;
}

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    return n > k && strcmp(path + n - k, ext) == 0;
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
        v->filename = sleapc__strdup(videos[i].filename ? videos[i].filename : "");
        v->n_frames = videos[i].n_frames;
        v->height = videos[i].height;
        v->width = videos[i].width;
        v->channels = videos[i].channels;
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
    cJSON *models = cJSON_AddArrayToObject(j, "model_paths");
    for (int i = 0; i < p->n_models; i++)
        cJSON_AddItemToArray(models, cJSON_CreateString(p->models[i]->dir));
    cJSON_AddStringToObject(j, "backend", o->backend ? o->backend : "auto");
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
    writer_format format;
    if (has_ext(path, ".json"))
        format = FORMAT_JSON;
    else if (has_ext(path, ".slp"))
        format = FORMAT_SLP;
    else if (has_ext(path, ".h5") || has_ext(path, ".hdf5"))
        format = FORMAT_ANALYSIS_H5;
    else if (has_ext(path, ".csv"))
        format = FORMAT_CSV;
    else
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write %s: unknown output format (use .slp, .h5, .csv or .json)", path);
    sleapc_writer *w = sleapc__calloc(1, sizeof *w);
    if (!w)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    w->format = format;
    w->filters = sleapc__filters_config_default();
    w->src_nodes = sleapc__predictor_n_nodes(p);
    w->collapse = collapses_to_centroid(p);
    w->path = sleapc__strdup(path);
    sleapc_status st = w->path ? copy_header(&w->pr, p, videos, n_videos, w->collapse)
                               : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st && !(w->pr.provenance = provenance_json(p)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (st) {
        sleapc__writer_discard(w);
        return st;
    }
    *out = w;
    return SLEAPC_OK;
}

sleapc_status sleapc__writer_add(sleapc_writer *w, const sleapc_predictor *p, int video,
                                 const int64_t *frame_indices)
{
    if (video < 0 || video >= w->pr.n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: bad arguments");
    sleapc_predictions *pr = &w->pr;
    if (!w->collapse) {
        if (p->results.n_nodes != w->pr.n_nodes)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: predictor skeleton differs");
        return sleapc__results_append(&w->pr, &p->results, video, frame_indices);
    }
    /* Centroid-only: each instance's one point (the anchor node's, the one
     * set) as the node "centroid". */
    const sleapc_predictions *src = &p->results;
    if (src->n_nodes != w->src_nodes)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: predictor skeleton differs");
    int64_t base = pr->n_insts;
    sleapc_status st = sleapc__results_reserve(pr, pr->n_frames + src->n_frames,
                                               base + src->n_insts);
    if (st)
        return st;
    for (int64_t k = 0; k < src->n_frames; k++) {
        sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
        f->video = video;
        f->frame_idx = frame_indices[k];
        f->first = base + src->frames[k].first;
        f->n = src->frames[k].n;
    }
    for (int64_t i = 0; i < src->n_insts; i++) {
        const float *pts = src->points + i * src->n_nodes * 2;
        int j = 0;
        while (j < src->n_nodes - 1 && isnan(pts[2 * j]))
            j++;
        pr->insts[base + i] = src->insts[i];
        pr->insts[base + i].class_index = pr->multiclass ? src->insts[i].track : -1;
        memcpy(pr->points + (base + i) * 2, pts + 2 * j, 2 * sizeof(float));
        pr->point_scores[base + i] = src->point_scores[i * src->n_nodes + j];
    }
    pr->n_insts += src->n_insts;
    return SLEAPC_OK;
}

sleapc_status sleapc__writer_set_tracking(sleapc_writer *w, const sleapc_tracking_opts *t,
                                          const sleapc_filter_opts *f)
{
    sleapc_filter_config fc;
    sleapc_tracker_opts to;
    sleapc_status st = sleapc__filters_resolve(f, &fc);
    if (!st && t && t->tracking)
        st = sleapc__tracking_resolve(t, w->pr.n_nodes, &to);
    if (st)
        return st;
    w->filters = fc;
    w->track = t && t->tracking;
    if (w->track)
        w->tracking = to;
    return SLEAPC_OK;
}

void sleapc__writer_set_drop_empty(sleapc_writer *w, bool drop)
{
    w->drop_empty = drop;
}

/* sleap-nn's clean_empty_frames (--no_empty_frames). */
static void drop_empty_frames(sleapc_predictions *pr)
{
    int64_t m = 0;
    for (int64_t k = 0; k < pr->n_frames; k++)
        if (pr->frames[k].n > 0)
            pr->frames[m++] = pr->frames[k];
    pr->n_frames = m;
}

sleapc_status sleapc__writer_close(sleapc_writer *w)
{
    /* filters and tracking over the gathered frames, as sleap-nn runs them */
    const char *near = w->pr.n_videos > 0 ? w->pr.videos[0].filename : NULL;
    sleapc_status st = sleapc__predictions_postprocess(&w->pr, &w->filters,
                                                       w->track ? &w->tracking : NULL, near);
    if (st) {
        st = sleapc__wrap(st, "write %s", w->path);
        sleapc__writer_discard(w);
        return st;
    }
    if (w->drop_empty)
        drop_empty_frames(&w->pr);
    if (w->format == FORMAT_ANALYSIS_H5 && sleapc__predictions_h5_unheld(&w->pr) > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: the analysis .h5 holds one instance per track and frame; %lld "
                    "instances are left out (%s)",
                    w->path, (long long)sleapc__predictions_h5_unheld(&w->pr),
                    w->pr.n_tracks ? "untracked" : "no tracks: use --tracking");
    if (w->format == FORMAT_SLP) {
        st = sleapc__predictions_write_slp(&w->pr, w->path);
    } else if (w->format == FORMAT_ANALYSIS_H5) {
        st = sleapc__predictions_write_analysis_h5(&w->pr, w->path);
    } else {
        /* Text formats: written into a temporary file, renamed into place. */
        sleapc_atomic_file af;
        st = sleapc__atomic_open(w->path, &af);
        if (!st) {
            if (w->format == FORMAT_CSV)
                st = sleapc__predictions_write_csv(&w->pr, af.f);
            else
                st = sleapc__predictions_write_json(&w->pr, af.f);
            if (st)
                sleapc__atomic_abort(&af);
            else
                st = sleapc__atomic_commit(&af);
        }
    }
    if (st)
        st = sleapc__wrap(st, "write %s", w->path);
    sleapc__writer_discard(w);
    return st;
}

void sleapc__writer_discard(sleapc_writer *w)
{
    if (!w)
        return;
    sleapc__predictions_free(&w->pr);
    sleapc__free(w->path);
    sleapc__free(w);
}
