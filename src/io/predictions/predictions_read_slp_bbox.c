/* A .slp's predicted boxes into the predictions read from it (see
 * predictions_read_impl.h): user boxes are labels, as user instances are. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_file.h"
#include "io/predictions/predictions_read_impl.h"
#include "io/slp/slp_read_bbox.h"

/* The index of name among pr's categories, added when new; -1 for "". */
static sleapc_status category_of(sleapc_predictions *pr, const char *name, int *out)
{
    *out = -1;
    if (!name[0])
        return SLEAPC_OK;
    for (int c = 0; c < pr->n_bbox_categories; c++)
        if (!strcmp(pr->bbox_categories[c], name)) {
            *out = c;
            return SLEAPC_OK;
        }
    char **c =
        sleapc__realloc(pr->bbox_categories, ((size_t)pr->n_bbox_categories + 1) * sizeof *c);
    if (!c)
        return sleapc__pred_read_nomem();
    pr->bbox_categories = c;
    if (!(c[pr->n_bbox_categories] = sleapc__strdup(name)))
        return sleapc__pred_read_nomem();
    *out = pr->n_bbox_categories++;
    return SLEAPC_OK;
}

sleapc_status sleapc__pred_slp_boxes(const sleapc_slp *r, const int64_t *local_of_row,
                                     sleapc_predictions *pr)
{
    sleapc_slp_bbox_rows b;
    sleapc_status st = sleapc__slp_bboxes_read(r->h5, r->path, &b);
    if (st || b.n == 0)
        return st;
    int64_t *frame_of = sleapc__malloc((size_t)b.n * sizeof *frame_of);
    int64_t *count = sleapc__calloc((size_t)r->n_frames + 1, sizeof *count);
    if (!frame_of || !count)
        st = sleapc__pred_read_nomem();
    if (!st)
        st = sleapc__slp_bbox_frames(r, &b, frame_of);
    int64_t total = 0;
    for (int64_t i = 0; !st && i < b.n; i++)
        if (b.is_predicted[i] && frame_of[i] >= 0) {
            count[frame_of[i]]++;
            total++;
        }
    if (!st)
        st = sleapc__results_reserve_boxes(pr, total);
    /* pr's frames are r's, row for row: each frame's boxes follow the last */
    for (int64_t k = 0; !st && k < pr->n_frames; k++) {
        pr->frames[k].box_first = k ? pr->frames[k - 1].box_first + count[k - 1] : 0;
        pr->frames[k].n_boxes = 0;
    }
    for (int64_t i = 0; !st && i < b.n; i++) {
        const int64_t k = frame_of[i];
        if (!b.is_predicted[i] || k < 0)
            continue;
        sleapc_pred_frame *fr = &pr->frames[k];
        sleapc_pred_box *x = &pr->boxes[fr->box_first + fr->n_boxes++];
        const int32_t row = b.instance[i];
        const int64_t local = row >= 0 && row < r->n_instances ? local_of_row[row] : -1;
        /* a link to an instance of another frame is not kept */
        const bool same = local >= 0 && row >= r->frames[k].first_instance &&
                          row < r->frames[k].first_instance + r->frames[k].n_instances;
        *x = (sleapc_pred_box){.x1 = b.x1[i],
                               .y1 = b.y1[i],
                               .x2 = b.x2[i],
                               .y2 = b.y2[i],
                               .score = b.score[i],
                               .track =
                                   b.track[i] >= 0 && b.track[i] < pr->n_tracks ? b.track[i] : -1,
                               .tracking_score = b.tracking_score[i],
                               .instance = same ? (int)local : -1};
        st = category_of(pr, b.category[i], &x->category);
    }
    if (!st)
        pr->n_boxes = total;
    sleapc__free(frame_of);
    sleapc__free(count);
    sleapc__slp_bbox_rows_free(&b);
    return st;
}
