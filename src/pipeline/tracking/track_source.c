/* Filters and tracking from a block source into a spill (see
 * track_source.h). */
#include "pipeline/tracking/track_source.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/track_source_mot.h"
#include "pipeline/tracking/track_stream.h"

static void set_track_names(sleapc_predictions *pr, char **names, int n)
{
    for (int i = 0; pr->track_names && i < pr->n_tracks; i++)
        sleapc__free(pr->track_names[i]);
    sleapc__free(pr->track_names);
    pr->track_names = names;
    pr->n_tracks = n;
    pr->multiclass = false;
    pr->identities = false;
}

sleapc_status sleapc__track_copy_block(const sleapc_predictions *b, sleapc_predictions *dst)
{
    const int64_t N = b->n_nodes;
    dst->n_frames = dst->n_insts = dst->n_boxes = 0;
    sleapc_status st = sleapc__results_reserve(dst, b->n_frames, b->n_insts);
    if (!st)
        st = sleapc__results_reserve_boxes(dst, b->n_boxes);
    if (st)
        return st;
    /* The frames' box_first stay valid: the boxes are copied whole. */
    if (b->n_boxes > 0)
        memcpy(dst->boxes, b->boxes, (size_t)b->n_boxes * sizeof *b->boxes);
    dst->n_boxes = b->n_boxes;
    if (b->n_frames > 0)
        memcpy(dst->frames, b->frames, (size_t)b->n_frames * sizeof *b->frames);
    if (b->n_insts > 0) { /* a box detector's block may have none */
        memcpy(dst->insts, b->insts, (size_t)b->n_insts * sizeof *b->insts);
        memcpy(dst->points, b->points, (size_t)(b->n_insts * N * 2) * sizeof(float));
        memcpy(dst->point_scores, b->point_scores, (size_t)(b->n_insts * N) * sizeof(float));
        if ((st = sleapc__results_copy_emb(dst, 0, b, 0, b->n_insts)))
            return st;
    }
    dst->n_frames = b->n_frames;
    dst->n_insts = b->n_insts;
    return SLEAPC_OK;
}

/* Drops the frames left without instances (instances stay packed). */
static void drop_empty_frames(sleapc_predictions *pr)
{
    int64_t k = 0;
    for (int64_t i = 0; i < pr->n_frames; i++)
        if (pr->frames[i].n > 0 || pr->frames[i].n_boxes > 0)
            pr->frames[k++] = pr->frames[i];
    pr->n_frames = k;
}

/* Identity linking after a MOT tracker needs every tracklet of a video, so
 * the run is tracked whole (as sleap-nn does) and then spilled. */
static sleapc_status track_source_whole(const sleapc_track_source_opts *o, sleapc_predictions *head,
                                        sleapc_results_source *src, sleapc_results_spill **out)
{
    sleapc_predictions all = {.n_nodes = head->n_nodes};
    sleapc_results_spill *spill = NULL;
    sleapc_status st = sleapc__results_gather(src, &all);
    if (!st && o->filters)
        st = sleapc__predictions_filter(&all, o->filters);
    if (!st)
        st = sleapc__predictions_track(&all, o->tracking, NULL);
    if (!st && o->drop_empty)
        drop_empty_frames(&all);
    if (!st)
        st = sleapc__spill_open(o->spill_near, head->n_nodes, &spill);
    if (!st)
        st = sleapc__spill_append(spill, &all);
    if (!st) {
        set_track_names(head, all.track_names, all.n_tracks);
        all.track_names = NULL;
        all.n_tracks = 0;
    }
    sleapc__predictions_free(&all);
    if (st) {
        sleapc__spill_close(spill);
        return st;
    }
    *out = spill;
    return SLEAPC_OK;
}

sleapc_status sleapc__track_source(const sleapc_track_source_opts *o, sleapc_predictions *head,
                                   sleapc_results_source *src, sleapc_results_spill **out)
{
    if (o->tracking && o->tracking->mot)
        return sleapc__mot_params_link(&o->tracking->mot_params)
                   ? track_source_whole(o, head, src, out)
                   : sleapc__track_source_mot(o, head, src, out);
    *out = NULL;
    sleapc_track_stream *ts = NULL;
    sleapc_results_spill *spill = NULL;
    sleapc_predictions filtered = {.n_nodes = head->n_nodes};
    sleapc_predictions tracked = {.n_nodes = head->n_nodes};
    sleapc_status st = SLEAPC_OK;
    if (o->tracking)
        st = sleapc__track_stream_create(o->tracking, head, o->near_path, &ts);
    if (!st)
        st = sleapc__spill_open(o->spill_near, head->n_nodes, &spill);
    const sleapc_predictions *b = NULL;
    if (!st)
        st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    while (!st && b->n_frames > 0) {
        const sleapc_predictions *cur = b;
        if (o->filters) {
            st = sleapc__track_copy_block(b, &filtered);
            if (!st)
                st = sleapc__predictions_filter(&filtered, o->filters);
            cur = &filtered;
        }
        if (!st && ts) {
            st = sleapc__track_stream_block(ts, cur, o->drop_empty, &tracked);
            cur = &tracked;
        }
        if (!st)
            st = sleapc__spill_append(spill, cur);
        if (!st)
            st = src->next(src->ctx, &b);
    }
    char **names = NULL;
    int n = 0;
    if (!st && ts && !(st = sleapc__track_stream_names(ts, &names, &n)))
        set_track_names(head, names, n);
    sleapc__track_stream_destroy(ts);
    sleapc__predictions_free(&filtered);
    sleapc__predictions_free(&tracked);
    if (st) {
        sleapc__spill_close(spill);
        return st;
    }
    *out = spill;
    return SLEAPC_OK;
}
