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
    for (int i = 0; pr->bbox_categories && i < pr->n_bbox_categories; i++)
        sleapc__free(pr->bbox_categories[i]);
    sleapc__free(pr->bbox_categories);
    sleapc__free(pr->boxes);
    sleapc__free(pr->embeddings);
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
        sleapc_status st = sleapc__results_grow_emb(pr, pr->insts_cap, cap);
        if (st)
            return st;
        pr->insts_cap = cap;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__results_reserve_boxes(sleapc_predictions *pr, int64_t boxes)
{
    if (boxes <= pr->boxes_cap)
        return SLEAPC_OK;
    int64_t cap = pr->boxes_cap ? pr->boxes_cap : 256;
    while (cap < boxes)
        cap *= 2;
    sleapc_pred_box *b = sleapc__realloc(pr->boxes, (size_t)cap * sizeof *b);
    if (!b)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    pr->boxes = b;
    pr->boxes_cap = cap;
    return SLEAPC_OK;
}

sleapc_status sleapc__results_add_boxes(sleapc_predictions *pr, sleapc_pred_frame *frame,
                                        const sleapc_pred_box *boxes, int64_t n)
{
    frame->box_first = pr->n_boxes;
    frame->n_boxes = 0;
    if (n <= 0)
        return SLEAPC_OK;
    sleapc_status st = sleapc__results_reserve_boxes(pr, pr->n_boxes + n);
    if (st)
        return st;
    memcpy(pr->boxes + pr->n_boxes, boxes, (size_t)n * sizeof *boxes);
    pr->n_boxes += n;
    frame->n_boxes = n;
    return SLEAPC_OK;
}

sleapc_status sleapc__results_set_bbox_categories(sleapc_predictions *pr,
                                                  const char *const *names, int n)
{
    char **c = n > 0 ? sleapc__calloc((size_t)n, sizeof *c) : NULL;
    for (int i = 0; c && i < n; i++)
        if (!(c[i] = sleapc__strdup(names[i] ? names[i] : ""))) {
            for (int j = 0; j < i; j++)
                sleapc__free(c[j]);
            sleapc__free(c);
            c = NULL;
        }
    if (n > 0 && !c)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; pr->bbox_categories && i < pr->n_bbox_categories; i++)
        sleapc__free(pr->bbox_categories[i]);
    sleapc__free(pr->bbox_categories);
    pr->bbox_categories = c;
    pr->n_bbox_categories = n > 0 ? n : 0;
    return SLEAPC_OK;
}

sleapc_predictions sleapc__results_header(const sleapc_predictions *pr)
{
    sleapc_predictions h = *pr;
    h.frames = NULL;
    h.insts = NULL;
    h.points = h.point_scores = NULL;
    h.boxes = NULL;
    h.embeddings = NULL;
    h.n_frames = h.frames_cap = h.n_insts = h.insts_cap = h.n_boxes = h.boxes_cap = 0;
    return h;
}

/* Copy the frames' boxes of src (frames src_frames[0..n)) after dst's,
 * pointing dst's frames dst_frames[0..n) at them. */
static sleapc_status copy_boxes(sleapc_predictions *dst, sleapc_pred_frame *dst_frames,
                                const sleapc_predictions *src,
                                const sleapc_pred_frame *src_frames, int64_t n)
{
    int64_t total = 0;
    for (int64_t k = 0; k < n; k++)
        total += src_frames[k].n_boxes > 0 ? src_frames[k].n_boxes : 0;
    sleapc_status st = sleapc__results_reserve_boxes(dst, dst->n_boxes + total);
    for (int64_t k = 0; !st && k < n; k++) {
        const sleapc_pred_frame *f = &src_frames[k];
        st = sleapc__results_add_boxes(dst, &dst_frames[k], src->boxes + f->box_first,
                                       f->n_boxes);
    }
    return st;
}

sleapc_status sleapc__results_append(sleapc_predictions *dst, const sleapc_predictions *src,
                                     int video, const int64_t *frame_indices)
{
    sleapc_status st = sleapc__results_reserve(dst, dst->n_frames + src->n_frames,
                                               dst->n_insts + src->n_insts);
    if (st)
        return st;
    int64_t N = dst->n_nodes, base = dst->n_insts, f0 = dst->n_frames;
    for (int64_t k = 0; k < src->n_frames; k++) {
        sleapc_pred_frame *f = &dst->frames[dst->n_frames++];
        f->video = video;
        f->frame_idx = frame_indices[k];
        f->first = base + src->frames[k].first;
        f->n = src->frames[k].n;
        f->box_first = dst->n_boxes;
        f->n_boxes = 0;
    }
    if (src->n_boxes > 0 &&
        (st = copy_boxes(dst, dst->frames + f0, src, src->frames, src->n_frames)))
        return st;
    if (src->n_insts < 1)
        return SLEAPC_OK;
    memcpy(dst->insts + base, src->insts, (size_t)src->n_insts * sizeof *src->insts);
    for (int64_t i = base; i < base + src->n_insts; i++)
        dst->insts[i].class_index = dst->multiclass ? dst->insts[i].track : -1;
    memcpy(dst->points + base * N * 2, src->points, (size_t)(src->n_insts * N * 2) * sizeof(float));
    memcpy(dst->point_scores + base * N, src->point_scores,
           (size_t)(src->n_insts * N) * sizeof(float));
    if ((st = sleapc__results_copy_emb(dst, base, src, 0, src->n_insts)))
        return st;
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
    int64_t n = 0, nb = 0;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        n += pr->frames[k].n;
        nb += pr->frames[k].n_boxes;
    }
    *ctx = (sleapc_results_memory){pr, false};
    *out = (sleapc_results_source){ctx, pr->n_frames, n, memory_rewind, memory_next, nb};
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
            sleapc_pred_frame *g = &dst->frames[dst->n_frames++];
            *g = (sleapc_pred_frame){f->video, f->frame_idx, at, f->n, dst->n_boxes, 0};
            if (f->n_boxes > 0 && (st = copy_boxes(dst, g, b, f, 1)))
                return st;
            if (f->n <= 0)
                continue; /* a box-only frame: no instance arrays to copy into */
            memcpy(dst->insts + at, b->insts + f->first, (size_t)f->n * sizeof *dst->insts);
            memcpy(dst->points + at * N * 2, b->points + f->first * N * 2,
                   (size_t)(f->n * N * 2) * sizeof(float));
            memcpy(dst->point_scores + at * N, b->point_scores + f->first * N,
                   (size_t)(f->n * N) * sizeof(float));
            if ((st = sleapc__results_copy_emb(dst, at, b, f->first, f->n)))
                return st;
            dst->n_insts += f->n;
        }
        st = src->next(src->ctx, &b);
    }
    return st;
}
