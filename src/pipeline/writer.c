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
#include "pipeline/predictor.h"
#include "pipeline/writer.h"

/* Formats by extension; see sleapc_writer_open (include/sleapc/writer.h). */
typedef enum writer_format { FORMAT_JSON, FORMAT_SLP, FORMAT_ANALYSIS_H5, FORMAT_CSV } writer_format;

struct sleapc_writer {
    char *path;
    writer_format format;
    sleapc_predictions pr;
};

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    return n > k && strcmp(path + n - k, ext) == 0;
}

static sleapc_status copy_header(sleapc_predictions *pr, const sleapc_predictor *p,
                                 const sleapc_video_info *videos, int n_videos)
{
    pr->skeleton_name = sleapc__strdup(sleapc__predictor_skeleton_name(p));
    pr->n_nodes = sleapc__predictor_n_nodes(p);
    pr->n_edges = sleapc__predictor_n_edges(p);
    pr->n_symmetries = sleapc__predictor_n_symmetries(p);
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
        const char *name = sleapc__predictor_node_name(p, i);
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
    w->path = sleapc__strdup(path);
    sleapc_status st = w->path ? copy_header(&w->pr, p, videos, n_videos)
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

static sleapc_status grow(sleapc_predictions *pr, int64_t frames, int64_t insts)
{
    if (frames > pr->frames_cap) {
        int64_t cap = pr->frames_cap ? pr->frames_cap : 256;
        while (cap < frames)
            cap *= 2;
        sleapc_pred_frame *f = sleapc__realloc(pr->frames, (size_t)cap * sizeof *f);
        if (!f)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        pr->frames = f;
        pr->frames_cap = cap;
    }
    if (insts > pr->insts_cap) {
        int64_t cap = pr->insts_cap ? pr->insts_cap : 256;
        while (cap < insts)
            cap *= 2;
        size_t nn = (size_t)(pr->n_nodes > 0 ? pr->n_nodes : 1);
        sleapc_pred_instance *in = sleapc__realloc(pr->insts, (size_t)cap * sizeof *in);
        if (in)
            pr->insts = in;
        float *pts = in ? sleapc__realloc(pr->points, (size_t)cap * nn * 2 * sizeof(float)) : NULL;
        if (pts)
            pr->points = pts;
        float *sc = pts ? sleapc__realloc(pr->point_scores, (size_t)cap * nn * sizeof(float)) : NULL;
        if (sc)
            pr->point_scores = sc;
        if (!sc)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        pr->insts_cap = cap;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__writer_add(sleapc_writer *w, const sleapc_predictor *p, int video,
                                 const int64_t *frame_indices)
{
    if (video < 0 || video >= w->pr.n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: bad arguments");
    sleapc_predictions *pr = &w->pr;
    if (sleapc__predictor_n_nodes(p) != pr->n_nodes)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "writer add: predictor skeleton differs");
    int n_frames = sleapc__predictor_n_frames(p);
    int64_t n_new = 0;
    for (int k = 0; k < n_frames; k++)
        n_new += sleapc__predictor_n_instances(p, k);
    sleapc_status st = grow(pr, pr->n_frames + n_frames, pr->n_insts + n_new);
    if (st)
        return st;
    int64_t N = pr->n_nodes;
    for (int k = 0; k < n_frames; k++) {
        sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
        f->video = video;
        f->frame_idx = frame_indices[k];
        f->first = pr->n_insts;
        f->n = sleapc__predictor_n_instances(p, k);
        for (int i = 0; i < f->n; i++) {
            sleapc_instance in;
            sleapc__predictor_instance(p, k, i, &in);
            sleapc_pred_instance *d = &pr->insts[pr->n_insts];
            d->score = in.score;
            d->track = in.track;
            d->tracking_score = in.tracking_score;
            d->has_centroid = in.has_centroid;
            d->centroid[0] = in.centroid[0];
            d->centroid[1] = in.centroid[1];
            d->centroid_score = in.centroid_score;
            d->class_index = pr->multiclass ? in.track : -1;
            memcpy(pr->points + pr->n_insts * N * 2, in.points, (size_t)N * 2 * sizeof(float));
            memcpy(pr->point_scores + pr->n_insts * N, in.point_scores, (size_t)N * sizeof(float));
            pr->n_insts++;
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__writer_close(sleapc_writer *w)
{
    sleapc_status st;
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
