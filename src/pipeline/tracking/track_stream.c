/* Block-by-block tracking (see track_stream.h). */
#include "pipeline/tracking/track_stream.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

struct sleapc_track_stream {
    sleapc_tracker *t;
    bool use_flow;
    int emb_dim; /* the vectors' length with features embeddings, else 0 */
    sleapc_video_frames *vf;
    sleapc_track_images images;
    /* one frame's tracker input and output */
    int64_t cap;
    double *pts, *scores, *tscore;
    int *ibuf;
    /* tracker id -> name index (-1 before its first appearance) and back */
    int *rank, *ids;
    int n_ranked, rank_cap;
    bool started;
    int64_t last_video, last_frame;
};

sleapc_status sleapc__track_stream_create(const sleapc_tracker_opts *o,
                                          const sleapc_predictions *head, const char *near_path,
                                          sleapc_track_stream **out)
{
    *out = NULL;
    sleapc_track_stream *ts = sleapc__calloc(1, sizeof *ts);
    if (!ts)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    ts->use_flow = o->use_flow;
    sleapc_tracker_opts with_vectors = *o;
    if (o->features == SLEAPC_TRACK_EMBEDDINGS)
        with_vectors.emb_dim = head->emb_dim;
    ts->emb_dim = with_vectors.emb_dim;
    sleapc_status st = sleapc__tracker_create(&with_vectors, head->n_nodes, &ts->t);
    if (!st && o->use_flow)
        st = sleapc__video_frames_open(head, near_path, &ts->vf, &ts->images);
    if (st) {
        sleapc__track_stream_destroy(ts);
        return st;
    }
    *out = ts;
    return SLEAPC_OK;
}

static sleapc_status reserve_frame(sleapc_track_stream *ts, int64_t n, int64_t n_nodes)
{
    if (n <= ts->cap)
        return SLEAPC_OK;
    int64_t cap = ts->cap ? ts->cap : 16;
    while (cap < n)
        cap *= 2;
    sleapc__free(ts->pts);
    sleapc__free(ts->ibuf);
    ts->pts = sleapc__malloc((size_t)(cap * (n_nodes * 2 + 2)) * sizeof(double));
    ts->ibuf = sleapc__malloc((size_t)cap * 2 * sizeof(int));
    ts->cap = ts->pts && ts->ibuf ? cap : 0;
    if (!ts->cap)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    ts->scores = ts->pts + cap * n_nodes * 2;
    ts->tscore = ts->scores + cap;
    return SLEAPC_OK;
}

/* The name index of tracker id (-1 stays -1), given at first appearance. */
static sleapc_status rank_of(sleapc_track_stream *ts, int id, int *out)
{
    *out = -1;
    if (id < 0)
        return SLEAPC_OK;
    if (id >= ts->rank_cap) {
        int cap = ts->rank_cap ? ts->rank_cap : 16;
        while (cap <= id)
            cap *= 2;
        int *r = sleapc__realloc(ts->rank, (size_t)cap * sizeof *r);
        if (r)
            ts->rank = r;
        int *ids = r ? sleapc__realloc(ts->ids, (size_t)cap * sizeof *ids) : NULL;
        if (!ids)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        ts->ids = ids;
        for (int i = ts->rank_cap; i < cap; i++)
            ts->rank[i] = -1;
        ts->rank_cap = cap;
    }
    if (ts->rank[id] < 0) {
        ts->ids[ts->n_ranked] = id;
        ts->rank[id] = ts->n_ranked++;
    }
    *out = ts->rank[id];
    return SLEAPC_OK;
}

sleapc_status sleapc__track_stream_block(sleapc_track_stream *ts, const sleapc_predictions *in,
                                         bool drop_empty, sleapc_predictions *out)
{
    const int64_t N = in->n_nodes;
    out->n_frames = out->n_insts = out->n_boxes = 0;
    sleapc_status st = sleapc__results_reserve(out, in->n_frames, in->n_insts);
    for (int64_t k = 0; !st && k < in->n_frames; k++) {
        const sleapc_pred_frame *f = &in->frames[k];
        if (ts->started && (f->video < ts->last_video ||
                            (f->video == ts->last_video && f->frame_idx < ts->last_frame)))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracking: frames out of order");
        ts->started = true;
        ts->last_video = f->video;
        ts->last_frame = f->frame_idx;
        const int n = (int)f->n;
        if ((st = reserve_frame(ts, n, N)))
            return st;
        for (int64_t i = 0; i < n * N * 2; i++)
            ts->pts[i] = in->points[f->first * N * 2 + i];
        for (int i = 0; i < n; i++)
            ts->scores[i] = in->insts[f->first + i].score;
        sleapc_track_frame_in ti = {
            .frame_idx = f->frame_idx, .n_insts = n, .points = ts->pts, .scores = ts->scores};
        if (ts->emb_dim > 0 && in->embeddings && in->emb_dim == ts->emb_dim)
            ti.vectors = in->embeddings + f->first * ts->emb_dim;
        if (ts->use_flow && (st = ts->images.gray(ts->images.ctx, f->video, f->frame_idx, &ti.gray,
                                                  &ti.height, &ti.width)))
            return st;
        sleapc_track_frame_out to = {
            .out = ts->ibuf, .track = ts->ibuf + ts->cap, .tracking_score = ts->tscore};
        if ((st = sleapc__tracker_track_frame(ts->t, &ti, &to)))
            return st;
        if (drop_empty && to.n_out == 0 && f->n_boxes == 0)
            continue;
        sleapc_pred_frame *g = &out->frames[out->n_frames++];
        *g = (sleapc_pred_frame){f->video, f->frame_idx, out->n_insts, to.n_out, 0, 0};
        if ((st = sleapc__results_add_boxes(out, g, in->boxes + f->box_first, f->n_boxes)))
            return st;
        for (int j = 0; j < to.n_out; j++) {
            const int64_t src = f->first + to.out[j], dst = out->n_insts++;
            sleapc_pred_instance *d = &out->insts[dst];
            *d = in->insts[src];
            if ((st = rank_of(ts, to.track[to.out[j]], &d->track)))
                return st;
            d->tracking_score = (float)to.tracking_score[to.out[j]];
            d->class_index = -1;
            memcpy(out->points + dst * N * 2, in->points + src * N * 2,
                   (size_t)(N * 2) * sizeof(float));
            memcpy(out->point_scores + dst * N, in->point_scores + src * N,
                   (size_t)N * sizeof(float));
            if ((st = sleapc__results_copy_emb(out, dst, in, src, 1)))
                return st;
        }
    }
    return st;
}

sleapc_status sleapc__track_stream_names(const sleapc_track_stream *ts, char ***names, int *n)
{
    *names = sleapc__calloc((size_t)ts->n_ranked + 1, sizeof **names);
    *n = 0;
    if (!*names)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    for (int i = 0; i < ts->n_ranked; i++) {
        char name[32];
        snprintf(name, sizeof name, "track_%d", ts->ids[i]);
        if (!((*names)[i] = sleapc__strdup(name))) {
            for (int j = 0; j < i; j++)
                sleapc__free((*names)[j]);
            sleapc__free(*names);
            *names = NULL;
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        }
    }
    *n = ts->n_ranked;
    return SLEAPC_OK;
}

void sleapc__track_stream_destroy(sleapc_track_stream *ts)
{
    if (!ts)
        return;
    sleapc__tracker_destroy(ts->t);
    sleapc__video_frames_close(ts->vf);
    sleapc__free(ts->pts);
    sleapc__free(ts->ibuf);
    sleapc__free(ts->rank);
    sleapc__free(ts->ids);
    sleapc__free(ts);
}
