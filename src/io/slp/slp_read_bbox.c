/* /bboxes read back (see slp_read_bbox.h). */
#include "io/slp/slp_read_bbox.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* sleap-io OWNER_BBOX */
#define OWNER_BBOX 4

#define BAD(...) sleapc__fail(SLEAPC_ERR_FORMAT, "read labels: %s: /bboxes: " __VA_ARGS__)

typedef struct link_rec {
    uint8_t owner_type;
    int64_t owner_id;
    int32_t category_idx;
} link_rec;

static const sleapc_h5_field link_fields[] = {
    {"owner_type", SLEAPC_H5_U8, offsetof(link_rec, owner_type), SLEAPC_H5_TYPE_DEFAULT, false},
    {"owner_id", SLEAPC_H5_I64, offsetof(link_rec, owner_id), SLEAPC_H5_TYPE_DEFAULT, false},
    {"category_idx", SLEAPC_H5_I32, offsetof(link_rec, category_idx), SLEAPC_H5_TYPE_DEFAULT,
     false},
};

void sleapc__slp_bbox_rows_free(sleapc_slp_bbox_rows *b)
{
    if (!b)
        return;
    void *cols[] = {b->x1,        b->y1,           b->x2,    b->y2,
                    b->angle,     b->video,        b->track, b->instance,
                    b->frame_idx, b->is_predicted, b->score, b->tracking_score};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        sleapc__free(cols[i]);
    sleapc__h5_free_strings(b->category, b->category ? b->n : 0);
    *b = (sleapc_slp_bbox_rows){0};
}

/* One numeric column of n rows (n < 0: sets n). */
static sleapc_status column(sleapc_h5 *f, const char *path, const char *name, sleapc_h5_type t,
                            void **dst, int64_t *n)
{
    char dset[64];
    snprintf(dset, sizeof dset, "bboxes/%s", name);
    if (!sleapc__h5_is_dataset(f, dset))
        return BAD("no column %s", path, name);
    sleapc_h5_info info;
    sleapc_status st = sleapc__h5_read(f, dset, t, dst, &info);
    if (st)
        return sleapc__wrap(st, "read labels: %s: /bboxes/%s", path, name);
    if (info.ndim != 1 || (*n >= 0 && info.shape[0] != *n))
        return BAD("column %s has %lld rows, not %lld", path, name,
                   (long long)(info.ndim == 1 ? info.shape[0] : -1), (long long)*n);
    *n = info.shape[0];
    return SLEAPC_OK;
}

/* Linked categories replace the column's names. */
static sleapc_status apply_links(sleapc_h5 *f, const char *path, sleapc_slp_bbox_rows *b)
{
    if (!sleapc__h5_is_dataset(f, "categories/name") ||
        !sleapc__h5_is_dataset(f, "categories/links"))
        return SLEAPC_OK;
    char **names = NULL;
    int64_t n_names = 0, n_links = 0;
    link_rec *links = NULL;
    sleapc_status st = sleapc__h5_read_strings(f, "categories/name", &names, &n_names);
    if (!st)
        st = sleapc__h5_read_compound(f, "categories/links", link_fields,
                                      (int)(sizeof link_fields / sizeof *link_fields),
                                      sizeof *links, (void **)&links, &n_links);
    if (st)
        st = sleapc__wrap(st, "read labels: %s: /categories", path);
    for (int64_t k = 0; !st && k < n_links; k++) {
        const link_rec *l = &links[k];
        if (l->owner_type != OWNER_BBOX)
            continue;
        /* sleap-io drops links outside the catalog or the boxes; a file
         * sleapc reads for its boxes should not have them: say so */
        if (l->owner_id < 0 || l->owner_id >= b->n || l->category_idx < 0 ||
            l->category_idx >= n_names) {
            st = sleapc__fail(SLEAPC_ERR_FORMAT,
                              "read labels: %s: /categories/links[%lld] links box %lld to "
                              "category %d (%lld boxes, %lld categories)",
                              path, (long long)k, (long long)l->owner_id, (int)l->category_idx,
                              (long long)b->n, (long long)n_names);
            break;
        }
        char *s = sleapc__strdup(names[l->category_idx]);
        if (!s) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
            break;
        }
        sleapc__free(b->category[l->owner_id]);
        b->category[l->owner_id] = s;
    }
    sleapc__h5_free_strings(names, n_names);
    sleapc__free(links);
    return st;
}

sleapc_status sleapc__slp_bboxes_read(sleapc_h5 *f, const char *path, sleapc_slp_bbox_rows *out)
{
    *out = (sleapc_slp_bbox_rows){0};
    if (!sleapc__h5_is_group(f, "bboxes")) {
        if (sleapc__h5_is_dataset(f, "bboxes"))
            sleapc__log(SLEAPC_LOG_WARN,
                        "read labels: %s: boxes in sleap-io's pre-2.0 table are not read", path);
        return SLEAPC_OK;
    }
    sleapc_slp_bbox_rows *b = out;
    int64_t n = -1;
    sleapc_status st = column(f, path, "x1", SLEAPC_H5_F64, (void **)&b->x1, &n);
    if (!st)
        st = column(f, path, "y1", SLEAPC_H5_F64, (void **)&b->y1, &n);
    if (!st)
        st = column(f, path, "x2", SLEAPC_H5_F64, (void **)&b->x2, &n);
    if (!st)
        st = column(f, path, "y2", SLEAPC_H5_F64, (void **)&b->y2, &n);
    if (!st)
        st = column(f, path, "angle", SLEAPC_H5_F64, (void **)&b->angle, &n);
    if (!st)
        st = column(f, path, "video", SLEAPC_H5_I32, (void **)&b->video, &n);
    if (!st)
        st = column(f, path, "frame_idx", SLEAPC_H5_I64, (void **)&b->frame_idx, &n);
    if (!st)
        st = column(f, path, "track", SLEAPC_H5_I32, (void **)&b->track, &n);
    if (!st)
        st = column(f, path, "instance", SLEAPC_H5_I32, (void **)&b->instance, &n);
    if (!st)
        st = column(f, path, "is_predicted", SLEAPC_H5_U8, (void **)&b->is_predicted, &n);
    if (!st)
        st = column(f, path, "score", SLEAPC_H5_F32, (void **)&b->score, &n);
    if (!st && sleapc__h5_is_dataset(f, "bboxes/tracking_score")) {
        st = column(f, path, "tracking_score", SLEAPC_H5_F32, (void **)&b->tracking_score, &n);
    } else if (!st) {
        /* older files: no tracking scores */
        if (!(b->tracking_score = sleapc__malloc(((size_t)n + 1) * sizeof(float))))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; !st && i < n; i++)
            b->tracking_score[i] = NAN;
    }
    int64_t n_cat = 0;
    if (!st && !sleapc__h5_is_dataset(f, "bboxes/category"))
        st = BAD("no column category", path);
    if (!st && (st = sleapc__h5_read_strings(f, "bboxes/category", &b->category, &n_cat)))
        st = sleapc__wrap(st, "read labels: %s: /bboxes/category", path);
    if (!st && n_cat != n) {
        sleapc__h5_free_strings(b->category, n_cat);
        b->category = NULL;
        st = BAD("column category has %lld rows, not %lld", path, (long long)n_cat, (long long)n);
    }
    if (!st)
        b->n = n;
    if (!st)
        st = apply_links(f, path, b);
    if (st)
        sleapc__slp_bbox_rows_free(b);
    return st;
}

/* A frame's key for the look-up, sorted by (video, frame index, row). */
typedef struct frame_key {
    int64_t video, frame_idx, row;
} frame_key;

static int cmp_key(const void *a, const void *b)
{
    const frame_key *x = a, *y = b;
    if (x->video != y->video)
        return x->video < y->video ? -1 : 1;
    if (x->frame_idx != y->frame_idx)
        return x->frame_idx < y->frame_idx ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

sleapc_status sleapc__slp_bbox_frames(const sleapc_slp *r, const sleapc_slp_bbox_rows *b,
                                      int64_t *frame_of)
{
    frame_key *keys = sleapc__malloc(((size_t)r->n_frames + 1) * sizeof *keys);
    if (!keys)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < r->n_frames; k++)
        keys[k] = (frame_key){r->frames[k].video, r->frames[k].frame_idx, k};
    qsort(keys, (size_t)r->n_frames, sizeof *keys, cmp_key);
    for (int64_t i = 0; i < b->n; i++) {
        /* the first key not below (video, frame_idx) */
        int64_t lo = 0, hi = r->n_frames;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            const frame_key *f = &keys[mid];
            if (f->video < b->video[i] ||
                (f->video == b->video[i] && f->frame_idx < b->frame_idx[i]))
                lo = mid + 1;
            else
                hi = mid;
        }
        /* the last frame of the key: sleap-io's frame look-up keeps the last */
        frame_of[i] = -1;
        for (; lo < r->n_frames && keys[lo].video == b->video[i] &&
               keys[lo].frame_idx == b->frame_idx[i];
             lo++)
            frame_of[i] = keys[lo].row;
    }
    sleapc__free(keys);
    return SLEAPC_OK;
}
