/* Predictions -> .slp, object for object as sleap-io 0.9.5 write_labels
 * produces for predicted labels (checked against the sleap-nn 0.3.5
 * predictions it wrote): the same dataset names, creation order, dtypes,
 * string kinds, chunking and attributes, format_id 1.4 (2.5 with
 * identities, slp_write_identity.c; 2.0 with boxes, 2.7 with their
 * categories, slp_write_bbox.c; 2.5 with embeddings,
 * slp_write_embeddings.c). The file appears atomically (temporary
 * file + rename). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "io/h5/h5_file.h"
#include "io/slp/pred_check.h"
#include "io/slp/slp_json.h"
#include "io/slp/slp_schema.h"
#include "io/slp/slp_write_bbox.h"
#include "io/slp/slp_write_embeddings.h"
#include "io/slp/slp_write.h"
#include "io/slp/slp_write_identity.h"
#include "io/slp/slp_write_json.h"

/* A list of JSON rows as sleap-io's _create_json_rows_dataset stores it:
 * variable-length UTF-8 strings, chunked as h5py guesses, maxshape
 * (None,); an empty list too (chunks (1024,)). */
static sleapc_status write_rows(sleapc_h5 *f, const char *name, char **rows, int64_t n)
{
    sleapc_h5_write_opts o = {.chunked = true, .unlimited = true};
    return sleapc__h5_write_vlen_strings(f, name, n, (const char *const *)rows, &o);
}

static void free_rows(char **rows, int64_t n)
{
    for (int64_t i = 0; rows && i < n; i++)
        sleapc__free(rows[i]);
    sleapc__free(rows);
}

static sleapc_status write_videos(sleapc_h5 *f, const sleapc_predictions *pr)
{
    char **rows = sleapc__calloc((size_t)pr->n_videos + 1, sizeof *rows);
    if (!rows)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; !st && i < pr->n_videos; i++)
        st = sleapc__slp_video_json(&pr->videos[i], false, false, &rows[i]);
    if (!st)
        st = write_rows(f, "videos_json", rows, pr->n_videos);
    free_rows(rows, pr->n_videos);
    return st;
}

static sleapc_status write_tracks(sleapc_h5 *f, const sleapc_predictions *pr)
{
    char **rows = sleapc__calloc((size_t)pr->n_tracks + 1, sizeof *rows);
    if (!rows)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; !st && i < pr->n_tracks; i++)
        st = sleapc__slp_track_json(pr->track_names[i], &rows[i]);
    if (!st)
        st = write_rows(f, "tracks_json", rows, pr->n_tracks);
    free_rows(rows, pr->n_tracks);
    return st;
}

/* sleap-io write_metadata: the group and its format_id, the provenance in
 * a dataset of its own (a scalar numpy bytes, left out when empty), then
 * the metadata JSON, which holds a copy of it. */
static sleapc_status write_metadata(sleapc_h5 *f, const sleapc_predictions *pr,
                                    double format_id)
{
    char *json = NULL;
    sleapc_json_text prov = {0};
    sleapc_status st = sleapc__slp_metadata_json(pr, &json);
    if (!st)
        st = sleapc__json_put_object_text(&prov, pr->provenance);
    if (!st)
        st = sleapc__json_status(&prov, "provenance");
    if (!st)
        st = sleapc__h5_create_group(f, "metadata");
    if (!st)
        st = sleapc__h5_set_attr_double(f, "metadata", "format_id", format_id);
    if (!st && strcmp(prov.s, "{}") != 0) {
        const char *text = prov.s;
        st = sleapc__h5_write_strings(f, "provenance_json", 0, NULL, &text, NULL);
    }
    if (!st)
        st = sleapc__h5_set_attr_string(f, "metadata", "json", json, false);
    sleapc__json_free(&prov);
    sleapc__free(json);
    return st;
}

/* One table's records for a block of frames; frame, row and prow are the
 * block's first frame id, instance id and point id in the file. */
typedef enum table_kind { TABLE_POINTS, TABLE_INSTANCES, TABLE_FRAMES } table_kind;

static void block_records(const sleapc_predictions *b, table_kind kind, int64_t frame, int64_t row,
                          int64_t prow, void *out)
{
    const int64_t N = b->n_nodes;
    sleapc_slp_point_rec *pts = out;
    sleapc_slp_instance_rec *insts = out;
    sleapc_slp_frame_rec *frames = out;
    int64_t r = 0, p = 0; /* within the block */
    for (int64_t k = 0; k < b->n_frames; k++) {
        const sleapc_pred_frame *fr = &b->frames[k];
        if (kind == TABLE_FRAMES)
            frames[k] = (sleapc_slp_frame_rec){(uint64_t)(frame + k), (uint32_t)fr->video,
                                               (uint64_t)fr->frame_idx, (uint64_t)(row + r),
                                               (uint64_t)(row + r + fr->n)};
        for (int64_t i = 0; i < fr->n; i++, r++) {
            const int64_t src = fr->first + i;
            const sleapc_pred_instance *in = &b->insts[src];
            /* Stored as is: sleap-io 0.9.5 writes NaN for an untracked one. */
            const float ts = in->tracking_score;
            if (kind == TABLE_INSTANCES)
                insts[r] = (sleapc_slp_instance_rec){row + r,
                                                     SLEAPC_SLP_INSTANCE_PREDICTED,
                                                     (uint64_t)(frame + k),
                                                     0,
                                                     in->track,
                                                     -1,
                                                     in->score,
                                                     (uint64_t)(prow + p),
                                                     (uint64_t)(prow + p + N),
                                                     ts};
            p += N;
            if (kind != TABLE_POINTS)
                continue;
            const float *xy = b->points + src * N * 2;
            const float *sc = b->point_scores + src * N;
            for (int64_t n = 0; n < N; n++) {
                sleapc_slp_point_rec *pt = &pts[r * N + n];
                if (sleapc__pred_point_missing(xy[2 * n], xy[2 * n + 1]))
                    *pt = (sleapc_slp_point_rec){NAN, NAN, 0, 0, 0.0}; /* sleap-io's absent point */
                else
                    *pt = (sleapc_slp_point_rec){xy[2 * n], xy[2 * n + 1], 1, 0, sc[n]};
            }
        }
    }
}

/* One table, written block by block from src: a contiguous dataset made at
 * its final size, as sleap-io writes it in one go. */
static sleapc_status write_table(sleapc_h5 *f, const sleapc_predictions *head,
                                 sleapc_results_source *src, table_kind kind)
{
    static const char *const names[] = {"pred_points", "instances", "frames"};
    const sleapc_h5_field *fields[] = {sleapc__slp_point_fields, sleapc__slp_instance_fields,
                                       sleapc__slp_frame_fields};
    const int n_fields[] = {SLEAPC_SLP_PRED_POINT_FIELDS, SLEAPC_SLP_INSTANCE_FIELDS,
                            SLEAPC_SLP_FRAME_FIELDS};
    const size_t size[] = {sizeof(sleapc_slp_point_rec), sizeof(sleapc_slp_instance_rec),
                           sizeof(sleapc_slp_frame_rec)};
    sleapc_status st = src->rewind(src->ctx);
    const sleapc_predictions *b = NULL;
    if (!st)
        st = src->next(src->ctx, &b);
    if (st)
        return st;
    const int64_t N = head->n_nodes;
    const int64_t rows = kind == TABLE_POINTS      ? src->n_insts * N
                         : kind == TABLE_INSTANCES ? src->n_insts
                                                   : src->n_frames;
    sleapc_h5_table *t = NULL;
    if ((st = sleapc__h5_table_create(f, names[kind], fields[kind], n_fields[kind], size[kind],
                                      rows, &t)))
        return st;
    void *buf = NULL;
    size_t cap = 0;
    int64_t frame = 0, row = 0, prow = 0;
    while (!st && b->n_frames > 0) {
        int64_t n_inst = 0;
        for (int64_t k = 0; k < b->n_frames; k++)
            n_inst += b->frames[k].n;
        const int64_t n = kind == TABLE_POINTS      ? n_inst * b->n_nodes
                          : kind == TABLE_INSTANCES ? n_inst
                                                    : b->n_frames;
        if (b->n_nodes != N) {
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write .slp: a block of another skeleton");
            break;
        }
        if ((st = sleapc__predictions_check(b, "write .slp")))
            break;
        if ((size_t)n * size[kind] > cap) {
            sleapc__free(buf);
            cap = (size_t)n * size[kind];
            if (!(buf = sleapc__calloc(cap, 1))) {
                st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for %lld instances",
                                  (long long)n_inst);
                break;
            }
        }
        if (frame + b->n_frames > src->n_frames || row + n_inst > src->n_insts) {
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write .slp: more frames than counted");
            break;
        }
        block_records(b, kind, frame, row, prow, buf);
        st = sleapc__h5_table_write(t, kind == TABLE_POINTS      ? prow
                                       : kind == TABLE_INSTANCES ? row
                                                                 : frame,
                                    buf, n);
        frame += b->n_frames;
        row += n_inst;
        prow += n_inst * b->n_nodes;
        if (!st)
            st = src->next(src->ctx, &b);
    }
    if (!st && (frame != src->n_frames || row != src->n_insts))
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write .slp: fewer frames than counted");
    sleapc__free(buf);
    sleapc_status cs = sleapc__h5_table_close(t);
    return st ? st : cs;
}

/* The four tables. Rows follow the frames' order; each frame's instances
 * are contiguous and get consecutive ids, whatever order they were stored
 * in. sleap-io write_lfs order: points, pred_points, instances, frames;
 * all contiguous, /points empty for predictions. */
static sleapc_status write_tables(sleapc_h5 *f, const sleapc_predictions *head,
                                  sleapc_results_source *src)
{
    sleapc_slp_point_rec none = {0};
    sleapc_status st = sleapc__h5_write_compound(f, "points", sleapc__slp_point_fields,
                                                 SLEAPC_SLP_POINT_FIELDS, sizeof none, &none, 0,
                                                 NULL);
    for (int kind = TABLE_POINTS; !st && kind <= TABLE_FRAMES; kind++)
        st = write_table(f, head, src, (table_kind)kind);
    return st;
}

sleapc_status sleapc__predictions_write_slp(const sleapc_predictions *pr, const char *path)
{
    sleapc_status st = sleapc__predictions_check(pr, "write .slp");
    if (st)
        return st;
    sleapc_results_memory m;
    sleapc_results_source src;
    sleapc__results_source_memory(pr, &m, &src);
    return sleapc__predictions_write_slp_from(pr, &src, path);
}

sleapc_status sleapc__predictions_write_slp_from(const sleapc_predictions *pr,
                                                 sleapc_results_source *src, const char *path)
{
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write .slp: no path");
    sleapc_status st = sleapc__predictions_check_header(pr, "write .slp");
    if (st)
        return st;
    sleapc_h5 *f = NULL;
    st = sleapc__h5_create_atomic(path, &f);
    if (st)
        return st;
    /* sleap-io write_labels order: videos, tracks, identities, categories,
     * embeddings, suggestions, sessions, metadata, the tables, then the
     * boxes. */
    bool identities = false, embeddings = false;
    sleapc_slp_boxes boxes;
    st = sleapc__slp_boxes_collect(pr, src, &boxes);
    if (!st)
        st = write_videos(f, pr);
    if (!st)
        st = write_tracks(f, pr);
    if (!st)
        st = sleapc__slp_write_identities(f, pr, src, &identities);
    if (!st)
        st = sleapc__slp_write_box_categories(f, &boxes);
    if (!st)
        st = sleapc__slp_write_embeddings(f, src, &embeddings);
    if (!st)
        st = write_rows(f, "suggestions_json", NULL, 0);
    if (!st)
        st = write_rows(f, "sessions_json", NULL, 0);
    /* write_metadata: boxes make it 2.0, then the later additions' bumps. */
    double format_id = boxes.n > 0 ? SLEAPC_SLP_FORMAT_ID_BBOX : SLEAPC_SLP_FORMAT_ID;
    if (identities)
        format_id = fmax(format_id, SLEAPC_SLP_FORMAT_ID_IDENTITY);
    if (embeddings)
        format_id = fmax(format_id, SLEAPC_SLP_FORMAT_ID_EMBEDDING);
    if (boxes.n_categorized > 0)
        format_id = fmax(format_id, SLEAPC_SLP_FORMAT_ID_CATEGORY);
    if (!st)
        st = write_metadata(f, pr, format_id);
    if (!st)
        st = write_tables(f, pr, src);
    if (!st)
        st = sleapc__slp_write_bboxes(f, &boxes);
    sleapc__slp_boxes_free(&boxes);
    if (st) {
        sleapc__h5_discard(f);
        return sleapc__wrap(st, "write %s", path);
    }
    st = sleapc__h5_close(f);
    return st ? sleapc__wrap(st, "write %s", path) : SLEAPC_OK;
}
