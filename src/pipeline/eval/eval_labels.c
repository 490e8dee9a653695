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
#include "io/slp/slp_read_bbox.h"

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
    for (int k = 0; k < l->n_box_categories; k++)
        sleapc__free(l->box_categories[k]);
    sleapc__free(l->box_categories);
    sleapc__free(l->boxes);
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

/* The index of a category name, added when new; -1 for "". */
static sleapc_status box_category(sleapc_ev_labels *l, const char *name, int *out)
{
    *out = -1;
    if (!name || !name[0])
        return SLEAPC_OK;
    for (int c = 0; c < l->n_box_categories; c++)
        if (!strcmp(l->box_categories[c], name)) {
            *out = c;
            return SLEAPC_OK;
        }
    char **c = sleapc__realloc(l->box_categories, ((size_t)l->n_box_categories + 1) * sizeof *c);
    if (!c)
        return SLEAPC_ERR_NOMEM;
    l->box_categories = c;
    if (!(c[l->n_box_categories] = sleapc__strdup(name)))
        return SLEAPC_ERR_NOMEM;
    *out = l->n_box_categories++;
    return SLEAPC_OK;
}

/* /bboxes of r: sleap-io routes a box by its video and frame index to the
 * last frame of that key, or to a new frame (boxes of no known video or a
 * negative frame index are left out of the frames). */
static sleapc_status boxes_from_slp(sleapc_ev_labels *l, const sleapc_slp *r)
{
    sleapc_slp_bbox_rows b;
    sleapc_status st = sleapc__slp_bboxes_read(r->h5, r->path, &b);
    if (st || b.n == 0)
        return st;
    int64_t *frame_of = sleapc__malloc((size_t)b.n * sizeof *frame_of);
    l->boxes = sleapc__calloc((size_t)b.n, sizeof *l->boxes);
    st = frame_of && l->boxes ? sleapc__slp_bbox_frames(r, &b, frame_of) : SLEAPC_ERR_NOMEM;
    /* room for a frame per box of no frame of the file */
    sleapc_ev_frame *fr =
        st ? NULL : sleapc__realloc(l->frames, ((size_t)(l->n_frames + b.n) + 1) * sizeof *fr);
    if (!st && !fr)
        st = SLEAPC_ERR_NOMEM;
    if (!st)
        l->frames = fr;
    for (int64_t i = 0; !st && i < b.n; i++) {
        /* sleap-io makes the frame of a box of a known video, after the others */
        if (frame_of[i] < 0 && b.video[i] >= 0 && b.video[i] < l->n_videos && b.frame_idx[i] >= 0) {
            for (int64_t f = r->n_frames; f < l->n_frames && frame_of[i] < 0; f++)
                if (l->frames[f].video == b.video[i] && l->frames[f].frame_idx == b.frame_idx[i])
                    frame_of[i] = f;
            if (frame_of[i] < 0) {
                l->frames[l->n_frames] =
                    (sleapc_ev_frame){b.video[i], b.frame_idx[i], l->n_insts, 0};
                frame_of[i] = l->n_frames++;
            }
        }
        if (frame_of[i] < 0)
            continue;
        sleapc_ev_box *x = &l->boxes[l->n_boxes++];
        *x = (sleapc_ev_box){b.x1[i],
                             b.y1[i],
                             b.x2[i],
                             b.y2[i],
                             b.angle[i],
                             b.is_predicted[i] != 0,
                             b.is_predicted[i] ? (double)b.score[i] : 1.0,
                             -1,
                             frame_of[i]};
        st = box_category(l, b.category[i], &x->category);
    }
    sleapc__free(frame_of);
    sleapc__slp_bbox_rows_free(&b);
    return st;
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
    return boxes_from_slp(l, r);
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
    /* a reader's boxes are predicted boxes */
    if (pr->n_boxes > 0 && !(l->boxes = sleapc__calloc((size_t)pr->n_boxes, sizeof *l->boxes)))
        return nomem(l->path);
    for (int64_t f = 0; f < pr->n_frames; f++)
        for (int64_t j = 0; j < pr->frames[f].n_boxes; j++) {
            const sleapc_pred_box *x = &pr->boxes[pr->frames[f].box_first + j];
            const char *name = x->category >= 0 && x->category < pr->n_bbox_categories
                                   ? pr->bbox_categories[x->category]
                                   : NULL;
            sleapc_ev_box *y = &l->boxes[l->n_boxes++];
            *y = (sleapc_ev_box){x->x1, x->y1, x->x2, x->y2, 0.0, true, (double)x->score, -1, f};
            if (box_category(l, name, &y->category))
                return nomem(l->path);
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
