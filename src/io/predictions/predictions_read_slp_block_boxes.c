/* A .slp's predicted boxes for the block reader (see predictions_read_impl.h):
 * the /bboxes group is read whole at open (as /embeddings is), each
 * predicted box claimed by the last /frames row of its video and frame
 * index during the counting pass, and a block's frames take their boxes.
 * Boxes of no frame of the file are left out. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/predictions/predictions_read_impl.h"

void sleapc__slp_block_boxes_free(sleapc_slp_block_boxes *x)
{
    sleapc__slp_bbox_rows_free(&x->rows);
    sleapc__free(x->order);
    sleapc__free(x->claim);
    sleapc__free(x->category);
    *x = (sleapc_slp_block_boxes){0};
}

typedef struct key {
    int64_t video, frame_idx, row;
} key;

static int cmp_key(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->video != y->video)
        return x->video < y->video ? -1 : 1;
    if (x->frame_idx != y->frame_idx)
        return x->frame_idx < y->frame_idx ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

sleapc_status sleapc__slp_block_boxes_open(sleapc_h5 *f, const char *path,
                                           sleapc_slp_block_boxes *out)
{
    *out = (sleapc_slp_block_boxes){0};
    sleapc_status st = sleapc__slp_bboxes_read(f, path, &out->rows);
    const int64_t n = out->rows.n;
    if (st || n == 0)
        return st;
    key *k = sleapc__malloc((size_t)n * sizeof *k);
    out->order = sleapc__malloc((size_t)n * sizeof *out->order);
    out->claim = sleapc__malloc((size_t)n * sizeof *out->claim);
    out->category = sleapc__malloc((size_t)n * sizeof *out->category);
    if (!k || !out->order || !out->claim || !out->category) {
        sleapc__free(k);
        sleapc__slp_block_boxes_free(out);
        return sleapc__pred_read_nomem();
    }
    /* user boxes are labels: only the predicted ones are looked up */
    for (int64_t i = 0; i < n; i++) {
        out->claim[i] = -1;
        out->category[i] = -1;
        if (out->rows.is_predicted[i])
            k[out->n++] = (key){out->rows.video[i], out->rows.frame_idx[i], i};
    }
    qsort(k, (size_t)out->n, sizeof *k, cmp_key);
    for (int64_t i = 0; i < out->n; i++)
        out->order[i] = k[i].row;
    sleapc__free(k);
    return SLEAPC_OK;
}

/* The first entry of order with this video and frame index, or x->n. */
static int64_t first_of(const sleapc_slp_block_boxes *x, int64_t video, int64_t frame_idx)
{
    int64_t lo = 0, hi = x->n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2, r = x->order[mid];
        if (x->rows.video[r] < video ||
            (x->rows.video[r] == video && x->rows.frame_idx[r] < frame_idx))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool same(const sleapc_slp_block_boxes *x, int64_t j, int64_t video, int64_t frame_idx)
{
    return j < x->n && x->rows.video[x->order[j]] == video &&
           x->rows.frame_idx[x->order[j]] == frame_idx;
}

void sleapc__slp_block_boxes_claim(sleapc_slp_block_boxes *x, int64_t frame_row, int64_t video,
                                   int64_t frame_idx)
{
    /* a later row of the same key takes them: sleap-io keeps the last frame */
    for (int64_t j = first_of(x, video, frame_idx); same(x, j, video, frame_idx); j++)
        x->claim[x->order[j]] = frame_row;
}

sleapc_status sleapc__slp_block_boxes_header(sleapc_slp_block_boxes *x, sleapc_predictions *head,
                                             int64_t *n_boxes)
{
    *n_boxes = 0;
    /* categories as first seen in file order, as the whole-file reader names them */
    for (int64_t i = 0; i < x->rows.n; i++) {
        if (x->claim[i] < 0)
            continue;
        (*n_boxes)++;
        const char *name = x->rows.category[i];
        if (!name[0])
            continue;
        int c = 0;
        while (c < head->n_bbox_categories && strcmp(head->bbox_categories[c], name))
            c++;
        if (c == head->n_bbox_categories) {
            char **g = sleapc__realloc(head->bbox_categories, ((size_t)c + 1) * sizeof *g);
            if (!g)
                return sleapc__pred_read_nomem();
            head->bbox_categories = g;
            if (!(g[c] = sleapc__strdup(name)))
                return sleapc__pred_read_nomem();
            head->n_bbox_categories++;
        }
        x->category[i] = c;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__slp_block_boxes_add(const sleapc_slp_block_boxes *x, int64_t frame_row,
                                          int64_t video, int64_t frame_idx, int64_t inst_lo,
                                          int64_t inst_hi, const int64_t *local_of, int64_t base,
                                          sleapc_predictions *pr, sleapc_pred_frame *fr)
{
    fr->box_first = pr->n_boxes;
    fr->n_boxes = 0;
    /* the frame's boxes in file order: the matching entries of order are sorted by row */
    for (int64_t j = first_of(x, video, frame_idx); same(x, j, video, frame_idx); j++) {
        const int64_t i = x->order[j];
        if (x->claim[i] != frame_row)
            continue;
        sleapc_status st = sleapc__results_reserve_boxes(pr, pr->n_boxes + 1);
        if (st)
            return st;
        const int32_t row = x->rows.instance[i];
        const int64_t local = row >= inst_lo && row < inst_hi ? local_of[row - base] : -1;
        const int32_t t = x->rows.track[i];
        pr->boxes[pr->n_boxes++] = (sleapc_pred_box){
            .x1 = x->rows.x1[i],
            .y1 = x->rows.y1[i],
            .x2 = x->rows.x2[i],
            .y2 = x->rows.y2[i],
            .score = x->rows.score[i],
            .category = x->category[i],
            .track = t >= 0 && t < pr->n_tracks ? t : -1,
            .tracking_score = x->rows.tracking_score[i],
            .instance = (int)local,
        };
        fr->n_boxes++;
    }
    return SLEAPC_OK;
}
