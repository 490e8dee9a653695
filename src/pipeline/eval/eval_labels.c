/* Reading labels for evaluation (see eval_labels.h). */
#include "pipeline/eval/eval_labels.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "io/predictions/predictions_format.h"
#include "io/slp/slp_read.h"

static sleapc_status nomem(const char *path)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", path);
}

void sleapc__ev_labels_free(sleapc_ev_labels *l)
{
    if (!l)
        return;
    for (int v = 0; v < l->n_videos; v++) {
        sleapc__free(l->videos[v].filename);
        sleapc__free(l->videos[v].dataset);
        sleapc__free(l->videos[v].root_filename);
        sleapc__free(l->videos[v].found);
    }
    for (int k = 0; k < l->n_nodes; k++)
        sleapc__free(l->node_names[k]);
    for (int k = 0; k < l->n_tracks; k++)
        sleapc__free(l->track_names[k]);
    sleapc__free(l->path);
    sleapc__free(l->videos);
    sleapc__free(l->node_names);
    sleapc__free(l->edges);
    sleapc__free(l->track_names);
    sleapc__free(l->frames);
    sleapc__free(l->insts);
    sleapc__free(l->xy);
    sleapc__free(l);
}

/* The file name an embedded video's recorded original names, or NULL. */
static char *source_filename(const char *source_json)
{
    if (!source_json)
        return NULL;
    cJSON *j = cJSON_Parse(source_json);
    if (!j)
        return NULL;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backend");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(b, "filename");
    if (!cJSON_IsString(f))
        f = cJSON_GetObjectItemCaseSensitive(j, "filename");
    char *s = cJSON_IsString(f) && f->valuestring[0] ? sleapc__strdup(f->valuestring) : NULL;
    cJSON_Delete(j);
    return s;
}

static sleapc_status set_video(sleapc_ev_video *dst, const sleapc_pred_video *src)
{
    dst->n_frames = src->n_frames > 0 ? src->n_frames : -1;
    dst->height = src->height > 0 ? src->height : -1;
    dst->width = src->width > 0 ? src->width : -1;
    dst->filename = sleapc__strdup(src->filename ? src->filename : "");
    if (src->dataset)
        dst->dataset = sleapc__strdup(src->dataset);
    dst->root_filename = source_filename(src->source_json);
    if (!dst->filename || (src->dataset && !dst->dataset))
        return SLEAPC_ERR_NOMEM;
    return SLEAPC_OK;
}

static sleapc_status alloc_body(sleapc_ev_labels *l, int n_videos, int n_nodes, int n_tracks,
                                int64_t n_frames, int64_t n_insts, int64_t n_points)
{
    l->videos = sleapc__calloc((size_t)n_videos + 1, sizeof *l->videos);
    l->node_names = sleapc__calloc((size_t)n_nodes + 1, sizeof(char *));
    l->track_names = sleapc__calloc((size_t)n_tracks + 1, sizeof(char *));
    l->frames = sleapc__calloc((size_t)n_frames + 1, sizeof *l->frames);
    l->insts = sleapc__calloc((size_t)n_insts + 1, sizeof *l->insts);
    l->xy = sleapc__malloc(sizeof(double) * 2 * ((size_t)n_points + 1));
    if (!l->videos || !l->node_names || !l->track_names || !l->frames || !l->insts || !l->xy)
        return SLEAPC_ERR_NOMEM;
    return SLEAPC_OK;
}

static sleapc_status from_slp(sleapc_ev_labels *l, const sleapc_slp *r)
{
    const int n_nodes = r->n_skeletons > 0 ? r->skeletons[0].n_nodes : 0;
    if (alloc_body(l, r->n_videos, n_nodes, r->n_tracks, r->n_frames, r->n_instances, r->n_points))
        return nomem(l->path);
    l->n_skeletons = r->n_skeletons;
    for (int v = 0; v < r->n_videos; v++) {
        sleapc_pred_video pv;
        if (sleapc__slp_pred_video(r, v, &pv))
            return SLEAPC_ERR_NOMEM;
        l->n_videos = v + 1;
        sleapc_status st = set_video(&l->videos[v], &pv);
        sleapc__free(pv.filename);
        sleapc__free(pv.dataset);
        sleapc__free(pv.source_json);
        if (st)
            return nomem(l->path);
        /* sleap-io reports the file it found (a '\\' path read as '/', or
         * beside the labels); a video not found keeps its stored name */
        if (!l->videos[v].root_filename && !sleapc__slp_video_path(r, v, &l->videos[v].found))
            continue;
        sleapc__clear_error();
    }
    for (int k = 0; k < n_nodes; k++) {
        l->n_nodes = k + 1;
        if (!(l->node_names[k] = sleapc__strdup(r->skeletons[0].node_names[k])))
            return nomem(l->path);
    }
    if (n_nodes) {
        l->edges = sleapc__calloc((size_t)r->skeletons[0].n_edges + 1, sizeof *l->edges);
        if (!l->edges)
            return nomem(l->path);
        l->n_edges = r->skeletons[0].n_edges;
        memcpy(l->edges, r->skeletons[0].edges, sizeof *l->edges * (size_t)l->n_edges);
    }
    for (int k = 0; k < r->n_tracks; k++) {
        l->n_tracks = k + 1;
        if (!(l->track_names[k] = sleapc__strdup(r->track_names[k] ? r->track_names[k] : "")))
            return nomem(l->path);
    }
    l->n_frames = r->n_frames;
    for (int64_t f = 0; f < r->n_frames; f++)
        l->frames[f] = (sleapc_ev_frame){r->frames[f].video, r->frames[f].frame_idx,
                                         r->frames[f].first_instance, r->frames[f].n_instances};
    int64_t np = 0;
    l->n_insts = r->n_instances;
    for (int64_t i = 0; i < r->n_instances; i++) {
        const sleapc_slp_instance *in = &r->instances[i];
        l->insts[i] = (sleapc_ev_inst){in->predicted, in->predicted ? (double)in->score : NAN,
                                       in->track, in->n_points, np, in->from_predicted + 1};
        for (int k = 0; k < in->n_points; k++, np++) {
            const sleapc_slp_point *p = &r->points[in->first_point + k];
            l->xy[2 * np] = p->visible ? p->x : NAN;
            l->xy[2 * np + 1] = p->visible ? p->y : NAN;
        }
    }
    l->n_points = np;
    return SLEAPC_OK;
}

static sleapc_status from_predictions(sleapc_ev_labels *l, const sleapc_predictions *pr)
{
    const int64_t n_points = pr->n_insts * pr->n_nodes;
    if (alloc_body(l, pr->n_videos, pr->n_nodes, pr->n_tracks, pr->n_frames, pr->n_insts, n_points))
        return nomem(l->path);
    l->n_skeletons = 1;
    for (int v = 0; v < pr->n_videos; v++) {
        l->n_videos = v + 1;
        if (set_video(&l->videos[v], &pr->videos[v]))
            return nomem(l->path);
    }
    for (int k = 0; k < pr->n_nodes; k++) {
        l->n_nodes = k + 1;
        if (!(l->node_names[k] = sleapc__strdup(pr->node_names[k] ? pr->node_names[k] : "")))
            return nomem(l->path);
    }
    l->edges = sleapc__calloc((size_t)pr->n_edges + 1, sizeof *l->edges);
    if (!l->edges)
        return nomem(l->path);
    l->n_edges = pr->n_edges;
    memcpy(l->edges, pr->edges, sizeof *l->edges * (size_t)l->n_edges);
    for (int k = 0; k < pr->n_tracks; k++) {
        l->n_tracks = k + 1;
        if (!(l->track_names[k] = sleapc__strdup(pr->track_names[k] ? pr->track_names[k] : "")))
            return nomem(l->path);
    }
    l->n_frames = pr->n_frames;
    for (int64_t f = 0; f < pr->n_frames; f++)
        l->frames[f] = (sleapc_ev_frame){pr->frames[f].video, pr->frames[f].frame_idx,
                                         pr->frames[f].first, pr->frames[f].n};
    l->n_insts = pr->n_insts;
    l->n_points = n_points;
    for (int64_t i = 0; i < pr->n_insts; i++) {
        l->insts[i] = (sleapc_ev_inst){true, pr->insts[i].score, pr->insts[i].track, pr->n_nodes,
                                       i * pr->n_nodes, 0};
        for (int64_t k = 0; k < 2 * pr->n_nodes; k++)
            l->xy[2 * i * pr->n_nodes + k] = pr->points[2 * i * pr->n_nodes + k];
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__ev_labels_load(const char *path, sleapc_ev_labels **out)
{
    *out = NULL;
    sleapc_ev_labels *l = sleapc__calloc(1, sizeof *l);
    if (!l || !(l->path = sleapc__strdup(path))) {
        sleapc__free(l);
        return nomem(path);
    }
    sleapc_status st;
    const sleapc_pred_format *fmt = sleapc__pred_format_of(path);
    if (fmt && (fmt->id == SLEAPC_PRED_JSON || fmt->id == SLEAPC_PRED_ANALYSIS_H5)) {
        sleapc_predictions pr;
        st = sleapc__predictions_read(path, &pr, NULL);
        if (!st)
            st = from_predictions(l, &pr);
        sleapc__predictions_free(&pr);
    } else {
        sleapc_slp *r = NULL;
        st = sleapc__slp_open(path, &r);
        if (!st)
            st = from_slp(l, r);
        sleapc__slp_close(r);
    }
    if (st) {
        sleapc__ev_labels_free(l);
        return st == SLEAPC_ERR_NOMEM ? nomem(path) : st;
    }
    *out = l;
    return SLEAPC_OK;
}
