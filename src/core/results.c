#include "core/results.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

void sleapc__predictions_free(sleapc_predictions *pr)
{
    if (!pr)
        return;
    sleapc__free(pr->skeleton_name);
    for (int i = 0; pr->node_names && i < pr->n_nodes; i++)
        sleapc__free(pr->node_names[i]);
    sleapc__free(pr->node_names);
    sleapc__free(pr->edges);
    sleapc__free(pr->symmetries);
    for (int i = 0; pr->track_names && i < pr->n_tracks; i++)
        sleapc__free(pr->track_names[i]);
    sleapc__free(pr->track_names);
    for (int i = 0; pr->videos && i < pr->n_videos; i++) {
        sleapc__free(pr->videos[i].filename);
        sleapc__free(pr->videos[i].dataset);
        sleapc__free(pr->videos[i].source_json);
    }
    sleapc__free(pr->videos);
    sleapc__free(pr->frames);
    sleapc__free(pr->insts);
    sleapc__free(pr->points);
    sleapc__free(pr->point_scores);
    sleapc__free(pr->provenance);
    memset(pr, 0, sizeof *pr);
}

sleapc_status sleapc__results_reserve(sleapc_predictions *pr, int64_t frames, int64_t insts)
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

sleapc_status sleapc__results_append(sleapc_predictions *dst, const sleapc_predictions *src,
                                     int video, const int64_t *frame_indices)
{
    sleapc_status st = sleapc__results_reserve(dst, dst->n_frames + src->n_frames,
                                               dst->n_insts + src->n_insts);
    if (st)
        return st;
    int64_t N = dst->n_nodes, base = dst->n_insts;
    for (int64_t k = 0; k < src->n_frames; k++) {
        sleapc_pred_frame *f = &dst->frames[dst->n_frames++];
        f->video = video;
        f->frame_idx = frame_indices[k];
        f->first = base + src->frames[k].first;
        f->n = src->frames[k].n;
    }
    if (src->n_insts < 1)
        return SLEAPC_OK;
    memcpy(dst->insts + base, src->insts, (size_t)src->n_insts * sizeof *src->insts);
    for (int64_t i = base; i < base + src->n_insts; i++)
        dst->insts[i].class_index = dst->multiclass ? dst->insts[i].track : -1;
    memcpy(dst->points + base * N * 2, src->points, (size_t)(src->n_insts * N * 2) * sizeof(float));
    memcpy(dst->point_scores + base * N, src->point_scores,
           (size_t)(src->n_insts * N) * sizeof(float));
    dst->n_insts += src->n_insts;
    return SLEAPC_OK;
}

static sleapc_status memory_rewind(void *ctx)
{
    ((sleapc_results_memory *)ctx)->done = false;
    return SLEAPC_OK;
}

static sleapc_status memory_next(void *ctx, const sleapc_predictions **blk)
{
    sleapc_results_memory *m = ctx;
    static const sleapc_predictions empty;
    *blk = m->done ? &empty : m->pr;
    m->done = true;
    return SLEAPC_OK;
}

void sleapc__results_source_memory(const sleapc_predictions *pr, sleapc_results_memory *ctx,
                                   sleapc_results_source *out)
{
    int64_t n = 0;
    for (int64_t k = 0; k < pr->n_frames; k++)
        n += pr->frames[k].n;
    *ctx = (sleapc_results_memory){pr, false};
    *out = (sleapc_results_source){ctx, pr->n_frames, n, memory_rewind, memory_next};
}

sleapc_status sleapc__results_gather(sleapc_results_source *src, sleapc_predictions *dst)
{
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    const int64_t N = dst->n_nodes;
    while (!st && b->n_frames > 0) {
        int64_t n = 0;
        for (int64_t k = 0; k < b->n_frames; k++)
            n += b->frames[k].n;
        if ((st = sleapc__results_reserve(dst, dst->n_frames + b->n_frames, dst->n_insts + n)))
            break;
        for (int64_t k = 0; k < b->n_frames; k++) {
            const sleapc_pred_frame *f = &b->frames[k];
            const int64_t at = dst->n_insts;
            dst->frames[dst->n_frames++] = (sleapc_pred_frame){f->video, f->frame_idx, at, f->n};
            memcpy(dst->insts + at, b->insts + f->first, (size_t)f->n * sizeof *dst->insts);
            memcpy(dst->points + at * N * 2, b->points + f->first * N * 2,
                   (size_t)(f->n * N * 2) * sizeof(float));
            memcpy(dst->point_scores + at * N, b->point_scores + f->first * N,
                   (size_t)(f->n * N) * sizeof(float));
            dst->n_insts += f->n;
        }
        st = src->next(src->ctx, &b);
    }
    return st;
}
