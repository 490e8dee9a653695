/* /bboxes and /categories as sleap-io 0.9.5 write_bboxes, write_categories
 * and write_category_links make them (see slp_write_bbox.h). */
#include "io/slp/slp_write_bbox.h"

#include <math.h>
#include <stddef.h>

#include "core/alloc.h"
#include "core/error.h"

/* sleap-io OWNER_BBOX */
#define OWNER_BBOX 4

typedef struct link_rec {
    uint8_t owner_type;
    int64_t owner_id;
    int32_t category_idx;
    float category_score;
} link_rec;

/* The packed numpy dtype [u1, i8, i4, f4] of _write_category_link_rows. */
static const sleapc_h5_field link_fields[] = {
    {"owner_type", SLEAPC_H5_U8, offsetof(link_rec, owner_type), SLEAPC_H5_TYPE_DEFAULT, false},
    {"owner_id", SLEAPC_H5_I64, offsetof(link_rec, owner_id), SLEAPC_H5_TYPE_DEFAULT, false},
    {"category_idx", SLEAPC_H5_I32, offsetof(link_rec, category_idx), SLEAPC_H5_TYPE_DEFAULT,
     false},
    {"category_score", SLEAPC_H5_F32, offsetof(link_rec, category_score), SLEAPC_H5_TYPE_DEFAULT,
     false},
};

void sleapc__slp_boxes_free(sleapc_slp_boxes *b)
{
    if (!b)
        return;
    void *cols[] = {b->x1,
                    b->y1,
                    b->x2,
                    b->y2,
                    b->angle,
                    b->video,
                    b->track,
                    b->instance,
                    b->frame_idx,
                    b->is_predicted,
                    b->score,
                    b->tracking_score,
                    (void *)b->category};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        sleapc__free(cols[i]);
    *b = (sleapc_slp_boxes){0};
}

static bool alloc_cols(sleapc_slp_boxes *b, size_t n)
{
    b->x1 = sleapc__malloc(n * sizeof *b->x1);
    b->y1 = sleapc__malloc(n * sizeof *b->y1);
    b->x2 = sleapc__malloc(n * sizeof *b->x2);
    b->y2 = sleapc__malloc(n * sizeof *b->y2);
    b->angle = sleapc__malloc(n * sizeof *b->angle);
    b->video = sleapc__malloc(n * sizeof *b->video);
    b->track = sleapc__malloc(n * sizeof *b->track);
    b->instance = sleapc__malloc(n * sizeof *b->instance);
    b->frame_idx = sleapc__malloc(n * sizeof *b->frame_idx);
    b->is_predicted = sleapc__malloc(n * sizeof *b->is_predicted);
    b->score = sleapc__malloc(n * sizeof *b->score);
    b->tracking_score = sleapc__malloc(n * sizeof *b->tracking_score);
    b->category = sleapc__malloc(n * sizeof *b->category);
    return b->x1 && b->y1 && b->x2 && b->y2 && b->angle && b->video && b->track && b->instance &&
           b->frame_idx && b->is_predicted && b->score && b->tracking_score && b->category;
}

/* One box's row. */
static void put_box(sleapc_slp_boxes *o, const sleapc_predictions *head, const sleapc_pred_box *x,
                    const sleapc_pred_frame *fr, int64_t inst_row)
{
    const int64_t i = o->n++;
    o->x1[i] = x->x1;
    o->y1[i] = x->y1;
    o->x2[i] = x->x2;
    o->y2[i] = x->y2;
    o->angle[i] = 0.0;
    o->video[i] = fr->video;
    o->frame_idx[i] = fr->frame_idx;
    o->track[i] = x->track >= 0 && x->track < head->n_tracks ? x->track : -1;
    o->instance[i] =
        x->instance >= 0 && x->instance < fr->n ? (int32_t)(inst_row + x->instance) : -1;
    o->is_predicted[i] = 1;
    o->score[i] = x->score;
    o->tracking_score[i] = x->tracking_score;
    const bool named = x->category >= 0 && x->category < head->n_bbox_categories &&
                       head->bbox_categories[x->category] && head->bbox_categories[x->category][0];
    o->category[i] = named ? head->bbox_categories[x->category] : "";
    o->n_categorized += named;
}

sleapc_status sleapc__slp_boxes_collect(const sleapc_predictions *head, sleapc_results_source *src,
                                        sleapc_slp_boxes *out)
{
    *out = (sleapc_slp_boxes){0};
    if (src->n_boxes <= 0)
        return SLEAPC_OK;
    if (!alloc_cols(out, (size_t)src->n_boxes)) {
        sleapc__slp_boxes_free(out);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for %lld boxes",
                            (long long)src->n_boxes);
    }
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    int64_t row = 0; /* the frame's first instance row */
    while (!st && b->n_frames > 0) {
        for (int64_t k = 0; !st && k < b->n_frames; k++) {
            const sleapc_pred_frame *fr = &b->frames[k];
            if (fr->n_boxes < 0 || fr->box_first < 0 || fr->box_first + fr->n_boxes > b->n_boxes ||
                out->n + fr->n_boxes > src->n_boxes)
                st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write .slp: boxes out of range");
            for (int64_t j = 0; !st && j < fr->n_boxes; j++)
                put_box(out, head, &b->boxes[fr->box_first + j], fr, row);
            row += fr->n;
        }
        if (!st)
            st = src->next(src->ctx, &b);
    }
    if (st)
        sleapc__slp_boxes_free(out);
    return st;
}

sleapc_status sleapc__slp_write_box_categories(sleapc_h5 *f, const sleapc_slp_boxes *b)
{
    if (b->n_categorized <= 0)
        return SLEAPC_OK;
    const char **names = sleapc__calloc((size_t)b->n_categorized, sizeof *names);
    link_rec *links = sleapc__calloc((size_t)b->n_categorized, sizeof *links);
    sleapc_status st = SLEAPC_OK;
    if (!names || !links)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    int32_t k = 0;
    for (int64_t i = 0; !st && i < b->n && k < b->n_categorized; i++)
        if (b->category[i][0]) {
            names[k] = b->category[i];
            links[k] = (link_rec){OWNER_BBOX, i, k, NAN};
            k++;
        }
    /* h5py create_dataset(maxshape=(None,)): chunked as h5py guesses. */
    const sleapc_h5_write_opts o = {.chunked = true, .unlimited = true};
    if (!st)
        st = sleapc__h5_create_group(f, "categories");
    if (!st)
        st = sleapc__h5_write_vlen_strings(f, "categories/name", k, names, &o);
    if (!st)
        st = sleapc__h5_write_compound(f, "categories/links", link_fields,
                                       (int)(sizeof link_fields / sizeof *link_fields),
                                       sizeof *links, links, k, &o);
    sleapc__free(names);
    sleapc__free(links);
    return st;
}

sleapc_status sleapc__slp_write_bboxes(sleapc_h5 *f, const sleapc_slp_boxes *b)
{
    if (b->n <= 0)
        return SLEAPC_OK;
    const int64_t n = b->n;
    /* write_bboxes' order; plain contiguous datasets. */
    const struct {
        const char *name;
        sleapc_h5_type t;
        const void *data;
    } cols[] = {
        {"bboxes/x1", SLEAPC_H5_F64, b->x1},
        {"bboxes/y1", SLEAPC_H5_F64, b->y1},
        {"bboxes/x2", SLEAPC_H5_F64, b->x2},
        {"bboxes/y2", SLEAPC_H5_F64, b->y2},
        {"bboxes/angle", SLEAPC_H5_F64, b->angle},
        {"bboxes/video", SLEAPC_H5_I32, b->video},
        {"bboxes/frame_idx", SLEAPC_H5_I64, b->frame_idx},
        {"bboxes/track", SLEAPC_H5_I32, b->track},
        {"bboxes/instance", SLEAPC_H5_I32, b->instance},
        {"bboxes/is_predicted", SLEAPC_H5_U8, b->is_predicted},
        {"bboxes/score", SLEAPC_H5_F32, b->score},
        {"bboxes/tracking_score", SLEAPC_H5_F32, b->tracking_score},
    };
    sleapc_status st = sleapc__h5_create_group(f, "bboxes");
    for (size_t i = 0; !st && i < sizeof cols / sizeof *cols; i++)
        st = sleapc__h5_write(f, cols[i].name, cols[i].t, 1, &n, cols[i].data, NULL);
    /* category, name and source: h5py vlen str; sleap-nn sets no name or source. */
    const char **empty = st ? NULL : sleapc__calloc((size_t)n, sizeof *empty);
    if (!st && !empty)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st)
        st = sleapc__h5_write_vlen_strings(f, "bboxes/category", n, b->category, NULL);
    if (!st)
        st = sleapc__h5_write_vlen_strings(f, "bboxes/name", n, empty, NULL);
    if (!st)
        st = sleapc__h5_write_vlen_strings(f, "bboxes/source", n, empty, NULL);
    sleapc__free(empty);
    return st;
}
