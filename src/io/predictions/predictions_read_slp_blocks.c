/* A .slp predictions file read a slice of frames at a time (see
 * predictions_read_impl.h): a block reads its rows of /frames, the rows of
 * /instances they refer to and those instances' /pred_points, so memory
 * follows the block, not the file. The blocks put together are what the
 * whole-file reader (predictions_read_slp.c) makes. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_file.h"
#include "io/predictions/predictions_read_impl.h"
#include "io/slp/slp_read.h"
#include "io/slp/slp_read_embeddings.h"
#include "io/slp/slp_schema.h"

#define FAIL_FORMAT(...) sleapc__fail(SLEAPC_ERR_FORMAT, "read labels: %s: " __VA_ARGS__)

struct sleapc_slp_blocks {
    sleapc_slp *r;  /* the header; r->h5 is the open file */
    int64_t block;  /* frames per block */
    int64_t n_rows; /* /frames rows */
    int64_t n_inst_rows, n_user_pts, n_pred_pts;
    bool sparse;                  /* video ids name video<N> groups (old packages) */
    int64_t next;                 /* the next /frames row */
    sleapc_predictions blk;       /* header borrowed from the reader's head */
    sleapc_slp_embeddings emb;    /* the whole group: vectors are read at once */
    sleapc_slp_block_boxes boxes; /* the whole /bboxes group, likewise */
};

/* A block's rows of the three tables it reads. */
typedef struct slice {
    sleapc_slp_frame_rec *fr;
    sleapc_slp_instance_rec *in;
    sleapc_slp_point_rec *pp;
    uint64_t in_lo, pp_lo;
} slice;

static void slice_free(slice *s)
{
    sleapc__free(s->fr);
    sleapc__free(s->in);
    sleapc__free(s->pp);
}

static sleapc_status table_len(sleapc_slp_blocks *b, const char *dset,
                               const sleapc_h5_field *fields, int n_fields, size_t rec, int64_t *n)
{
    void *rows = NULL;
    sleapc_status st =
        sleapc__h5_read_compound_rows(b->r->h5, dset, fields, n_fields, rec, 0, 0, &rows, n);
    sleapc__free(rows);
    return st;
}

/* The checks the whole-file reader makes of /instances row i. */
static sleapc_status check_instance(const sleapc_slp_blocks *b, uint64_t i,
                                    const sleapc_slp_instance_rec *s)
{
    const sleapc_slp *r = b->r;
    const bool pred = s->instance_type == SLEAPC_SLP_INSTANCE_PREDICTED;
    const int64_t table = pred ? b->n_pred_pts : b->n_user_pts;
    if (s->instance_type > SLEAPC_SLP_INSTANCE_PREDICTED ||
        s->skeleton >= (uint32_t)r->n_skeletons || s->track < -1 || s->track >= r->n_tracks ||
        s->from_predicted < -1 || s->from_predicted >= b->n_inst_rows)
        return FAIL_FORMAT("/instances[%lld]: bad type, skeleton, track or from_predicted", r->path,
                           (long long)i);
    const int n_nodes = r->skeletons[s->skeleton].n_nodes;
    if (s->point_id_start > s->point_id_end || s->point_id_end > (uint64_t)table ||
        s->point_id_end - s->point_id_start != (uint64_t)n_nodes)
        return FAIL_FORMAT("/instances[%lld]: point range [%llu, %llu) does not hold the %d "
                           "nodes of skeleton %u",
                           r->path, (long long)i, (unsigned long long)s->point_id_start,
                           (unsigned long long)s->point_id_end, n_nodes, s->skeleton);
    return SLEAPC_OK;
}

static bool wanted(const sleapc_slp_instance_rec *s)
{
    return s->instance_type == SLEAPC_SLP_INSTANCE_PREDICTED && s->skeleton == 0;
}

/* Rows [first, first + n) of /frames, checked, with the instances they
 * refer to (checked), and with points the predicted points of those of
 * skeleton 0. */
static sleapc_status read_slice(sleapc_slp_blocks *b, int64_t first, int64_t n, bool points,
                                slice *s)
{
    const sleapc_slp *r = b->r;
    memset(s, 0, sizeof *s);
    int64_t total = 0;
    sleapc_status st = sleapc__h5_read_compound_rows(r->h5, "frames", sleapc__slp_frame_fields,
                                                     SLEAPC_SLP_FRAME_FIELDS, sizeof *s->fr, first,
                                                     n, (void **)&s->fr, &total);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t k = 0; !st && k < n; k++) {
        const sleapc_slp_frame_rec *f = &s->fr[k];
        if (f->instance_id_start > f->instance_id_end ||
            f->instance_id_end > (uint64_t)b->n_inst_rows || f->frame_idx > INT64_MAX)
            return FAIL_FORMAT("/frames[%lld]: instance range [%llu, %llu) outside the %lld "
                               "instances",
                               r->path, (long long)(first + k),
                               (unsigned long long)f->instance_id_start,
                               (unsigned long long)f->instance_id_end, (long long)b->n_inst_rows);
        if (f->instance_id_start < f->instance_id_end) {
            lo = f->instance_id_start < lo ? f->instance_id_start : lo;
            hi = f->instance_id_end > hi ? f->instance_id_end : hi;
        }
    }
    if (lo > hi)
        lo = hi = 0;
    s->in_lo = lo;
    if (!st)
        st = sleapc__h5_read_compound_rows(r->h5, "instances", sleapc__slp_instance_fields,
                                           SLEAPC_SLP_INSTANCE_FIELDS, sizeof *s->in, (int64_t)lo,
                                           (int64_t)(hi - lo), (void **)&s->in, &total);
    uint64_t plo = UINT64_MAX, phi = 0;
    for (uint64_t i = lo; !st && i < hi; i++) {
        const sleapc_slp_instance_rec *in = &s->in[i - lo];
        st = check_instance(b, i, in);
        if (!st && wanted(in)) {
            plo = in->point_id_start < plo ? in->point_id_start : plo;
            phi = in->point_id_end > phi ? in->point_id_end : phi;
        }
    }
    if (plo > phi)
        plo = phi = 0;
    s->pp_lo = plo;
    if (!st && points)
        st = sleapc__h5_read_compound_rows(
            r->h5, "pred_points", sleapc__slp_point_fields, SLEAPC_SLP_PRED_POINT_FIELDS,
            sizeof *s->pp, (int64_t)plo, (int64_t)(phi - plo), (void **)&s->pp, &total);
    return st;
}

/* The block of frames [first, first + n) into b->blk. */
static sleapc_status read_block(sleapc_slp_blocks *b, int64_t first, int64_t n)
{
    const sleapc_slp *r = b->r;
    sleapc_predictions *pr = &b->blk;
    pr->n_frames = pr->n_insts = 0;
    slice s;
    sleapc_status st = read_slice(b, first, n, true, &s);
    int64_t m = 0;
    for (int64_t k = 0; !st && k < n; k++)
        for (uint64_t i = s.fr[k].instance_id_start; i < s.fr[k].instance_id_end; i++)
            m += wanted(&s.in[i - s.in_lo]);
    if (!st)
        st = sleapc__results_reserve(pr, n, m);
    pr->n_boxes = 0;
    int64_t *local_of = NULL;
    uint64_t in_hi = s.in_lo;
    for (int64_t k = 0; !st && k < n; k++)
        in_hi = s.fr[k].instance_id_end > in_hi ? s.fr[k].instance_id_end : in_hi;
    if (!st && b->boxes.n > 0 &&
        !(local_of = sleapc__malloc((size_t)(in_hi - s.in_lo + 1) * sizeof *local_of)))
        st = sleapc__pred_read_nomem();
    /* Before format 1.1 the origin was the pixel corner (formats D.7). */
    const double shift = r->format_id < 1.1 ? 0.5 : 0.0;
    const int64_t N = pr->n_nodes;
    for (int64_t k = 0; !st && k < n; k++) {
        const sleapc_slp_frame_rec *f = &s.fr[k];
        sleapc_pred_frame *d = &pr->frames[pr->n_frames++];
        *d = (sleapc_pred_frame){0, (int64_t)f->frame_idx, pr->n_insts, 0, 0, 0};
        st = sleapc__slp_map_video(r, f->video, b->sparse, &d->video);
        for (uint64_t i = f->instance_id_start; !st && i < f->instance_id_end; i++) {
            const sleapc_slp_instance_rec *in = &s.in[i - s.in_lo];
            if (local_of)
                local_of[i - s.in_lo] = -1;
            if (!wanted(in))
                continue;
            const int64_t q = pr->n_insts++;
            const float *v = sleapc__slp_embedding(&b->emb, (int64_t)i);
            for (int j = 0; j < pr->emb_dim; j++)
                pr->embeddings[q * pr->emb_dim + j] = v ? v[j] : NAN; /* rows are reused */
            if (local_of)
                local_of[i - s.in_lo] = d->n;
            pr->insts[q] = (sleapc_pred_instance){.score = in->score,
                                                  .track = in->track,
                                                  .tracking_score = in->tracking_score,
                                                  .class_index = -1};
            for (int64_t j = 0; j < N; j++) {
                const sleapc_slp_point_rec *pt = &s.pp[in->point_id_start - s.pp_lo + j];
                const double x = pt->x - shift, y = pt->y - shift;
                const bool missing = !pt->visible || isnan(x) || isnan(y);
                pr->points[(q * N + j) * 2] = missing ? NAN : (float)x;
                pr->points[(q * N + j) * 2 + 1] = missing ? NAN : (float)y;
                pr->point_scores[q * N + j] = missing ? NAN : (float)pt->score;
            }
            d->n++;
        }
        if (!st && b->boxes.n > 0)
            st = sleapc__slp_block_boxes_add(
                &b->boxes, first + k, d->video, d->frame_idx, (int64_t)f->instance_id_start,
                (int64_t)f->instance_id_end, local_of, (int64_t)s.in_lo, pr, d);
    }
    sleapc__free(local_of);
    slice_free(&s);
    return st;
}

/* One pass over /frames and /instances without points: the totals a writer
 * sizes its tables by, the frames holding user instances, and whether video
 * ids are sparse. */
static sleapc_status count(sleapc_slp_blocks *b, int64_t *n_insts, int64_t *n_user_frames,
                           bool *in_order)
{
    *n_insts = *n_user_frames = 0;
    *in_order = true;
    uint64_t last_video = 0, last_frame = 0;
    sleapc_status st = SLEAPC_OK;
    for (int64_t first = 0; !st && first < b->n_rows; first += b->block) {
        const int64_t n = b->n_rows - first < b->block ? b->n_rows - first : b->block;
        slice s;
        st = read_slice(b, first, n, false, &s);
        for (int64_t k = 0; !st && k < n; k++) {
            const sleapc_slp_frame_rec *f = &s.fr[k];
            bool user = false;
            for (uint64_t i = f->instance_id_start; i < f->instance_id_end; i++) {
                const sleapc_slp_instance_rec *in = &s.in[i - s.in_lo];
                user = user || in->instance_type != SLEAPC_SLP_INSTANCE_PREDICTED;
                *n_insts += wanted(in);
            }
            *n_user_frames += user;
            if (b->boxes.n > 0)
                sleapc__slp_block_boxes_claim(&b->boxes, first + k, (int64_t)f->video,
                                              (int64_t)f->frame_idx);
            b->sparse = b->sparse || f->video >= (uint64_t)b->r->n_videos;
            if (first + k > 0 &&
                (f->video < last_video || (f->video == last_video && f->frame_idx < last_frame)))
                *in_order = false;
            last_video = f->video;
            last_frame = f->frame_idx;
        }
        slice_free(&s);
    }
    return st;
}

static sleapc_status blocks_rewind(void *ctx)
{
    ((sleapc_slp_blocks *)ctx)->next = 0;
    return SLEAPC_OK;
}

static sleapc_status blocks_next(void *ctx, const sleapc_predictions **blk)
{
    sleapc_slp_blocks *b = ctx;
    *blk = &b->blk;
    b->blk.n_frames = b->blk.n_insts = b->blk.n_boxes = 0;
    if (b->next >= b->n_rows)
        return SLEAPC_OK;
    const int64_t n = b->n_rows - b->next < b->block ? b->n_rows - b->next : b->block;
    sleapc_status st = read_block(b, b->next, n);
    b->next += n;
    return st;
}

sleapc_status sleapc__pred_slp_blocks_open(const char *path, int64_t block_frames,
                                           sleapc_predictions *head, int64_t *n_user_frames,
                                           bool *in_order, sleapc_slp_blocks **out,
                                           sleapc_results_source *src)
{
    *out = NULL;
    sleapc_slp_blocks *b = sleapc__calloc(1, sizeof *b);
    if (!b)
        return sleapc__pred_read_nomem();
    b->block = block_frames > 0 ? block_frames : 1;
    sleapc_status st = sleapc__slp_open_header(path, &b->r);
    if (!st)
        st = sleapc__pred_slp_header(b->r, head, 0, 0);
    if (!st)
        st = table_len(b, "instances", sleapc__slp_instance_fields, SLEAPC_SLP_INSTANCE_FIELDS,
                       sizeof(sleapc_slp_instance_rec), &b->n_inst_rows);
    if (!st)
        st = table_len(b, "points", sleapc__slp_point_fields, SLEAPC_SLP_POINT_FIELDS,
                       sizeof(sleapc_slp_point_rec), &b->n_user_pts);
    if (!st)
        st = table_len(b, "pred_points", sleapc__slp_point_fields, SLEAPC_SLP_PRED_POINT_FIELDS,
                       sizeof(sleapc_slp_point_rec), &b->n_pred_pts);
    if (!st)
        st = table_len(b, "frames", sleapc__slp_frame_fields, SLEAPC_SLP_FRAME_FIELDS,
                       sizeof(sleapc_slp_frame_rec), &b->n_rows);
    int64_t n_insts = 0, n_user = 0, n_boxes = 0;
    if (!st)
        st = sleapc__slp_block_boxes_open(b->r->h5, path, &b->boxes);
    if (!st)
        st = count(b, &n_insts, &n_user, in_order);
    if (!st)
        st = sleapc__slp_block_boxes_header(&b->boxes, head, &n_boxes);
    if (!st)
        st = sleapc__slp_embeddings_read(b->r->h5, path, b->n_inst_rows, &b->emb);
    /* Sparse ids are group numbers, not the videos' order. */
    *in_order = *in_order && !b->sparse;
    if (st) {
        sleapc__pred_slp_blocks_close(b);
        return st;
    }
    /* The blocks show head's header; their arrays are their own. */
    head->emb_dim = b->emb.dim;
    b->blk = sleapc__results_header(head);
    if (n_user_frames)
        *n_user_frames = n_user;
    *src = (sleapc_results_source){b, b->n_rows, n_insts, blocks_rewind, blocks_next, n_boxes};
    *out = b;
    return SLEAPC_OK;
}

void sleapc__pred_slp_blocks_close(sleapc_slp_blocks *b)
{
    if (!b)
        return;
    sleapc__slp_close(b->r);
    sleapc__free(b->blk.frames);
    sleapc__free(b->blk.insts);
    sleapc__free(b->blk.points);
    sleapc__free(b->blk.point_scores);
    sleapc__free(b->blk.embeddings);
    sleapc__free(b->blk.boxes);
    sleapc__slp_embeddings_free(&b->emb);
    sleapc__slp_block_boxes_free(&b->boxes);
    sleapc__free(b);
}
