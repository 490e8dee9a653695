/* Predictions -> .slp, object for object as sleap-io 0.1 write_labels
 * produces for predicted labels (checked against sleap-io-written/): the
 * same dataset names, creation order, dtypes, string padding, chunking and
 * attributes. The file appears atomically (temporary file + rename). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "io/h5/h5_file.h"
#include "io/slp/pred_check.h"
#include "io/slp/slp_schema.h"
#include "io/slp/slp_write_json.h"

/* A list of JSON rows as h5py stores a Python list of numpy bytes:
 * fixed-length strings, chunked, maxshape (None,). h5py turns an empty
 * list into a float64 (0,) dataset with chunks (1024,); do the same. */
static sleapc_status write_rows(sleapc_h5 *f, const char *name, char **rows, int64_t n)
{
    sleapc_h5_write_opts o = {.chunked = true, .unlimited = true};
    int64_t shape = n;
    if (n == 0)
        return sleapc__h5_write(f, name, SLEAPC_H5_F64, 1, &shape, NULL, &o);
    return sleapc__h5_write_strings(f, name, 1, &shape, (const char *const *)rows, &o);
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

static sleapc_status write_metadata(sleapc_h5 *f, const sleapc_predictions *pr)
{
    char *json = NULL;
    sleapc_status st = sleapc__slp_metadata_json(pr, &json);
    if (!st)
        st = sleapc__h5_create_group(f, "metadata");
    if (!st)
        st = sleapc__h5_set_attr_double(f, "metadata", "format_id", SLEAPC_SLP_FORMAT_ID);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "metadata", "json", json, false);
    sleapc__free(json);
    return st;
}

/* The four tables. Rows follow pr's frame order; each frame's instances are
 * contiguous and get consecutive ids, whatever order pr stored them in. */
static sleapc_status write_tables(sleapc_h5 *f, const sleapc_predictions *pr)
{
    int64_t n_inst = 0, N = pr->n_nodes;
    for (int64_t k = 0; k < pr->n_frames; k++)
        n_inst += pr->frames[k].n;
    size_t n_pts = (size_t)n_inst * (size_t)N;
    sleapc_slp_frame_rec *frames = sleapc__calloc((size_t)pr->n_frames + 1, sizeof *frames);
    sleapc_slp_instance_rec *insts = sleapc__calloc((size_t)n_inst + 1, sizeof *insts);
    sleapc_slp_point_rec *pts = sleapc__calloc(n_pts + 1, sizeof *pts);
    sleapc_status st = SLEAPC_OK;
    if (!frames || !insts || !pts) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for %lld instances", (long long)n_inst);
        goto done;
    }
    int64_t row = 0;
    size_t prow = 0;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        const sleapc_pred_frame *fr = &pr->frames[k];
        frames[k] =
            (sleapc_slp_frame_rec){(uint64_t)k, (uint32_t)fr->video, (uint64_t)fr->frame_idx,
                                   (uint64_t)row, (uint64_t)(row + fr->n)};
        for (int64_t i = 0; i < fr->n; i++, row++) {
            int64_t src = fr->first + i;
            const sleapc_pred_instance *in = &pr->insts[src];
            const float *xy = pr->points + src * N * 2;
            const float *sc = pr->point_scores + src * N;
            /* sleap-io: a predicted instance's tracking_score defaults to 0. */
            float ts = isnan(in->tracking_score) ? 0.0f : in->tracking_score;
            insts[row] = (sleapc_slp_instance_rec){row,
                                                   SLEAPC_SLP_INSTANCE_PREDICTED,
                                                   (uint64_t)k,
                                                   0,
                                                   in->track,
                                                   -1,
                                                   in->score,
                                                   (uint64_t)prow,
                                                   (uint64_t)(prow + (size_t)N),
                                                   ts};
            for (int64_t n = 0; n < N; n++, prow++) {
                sleapc_slp_point_rec *p = &pts[prow];
                if (sleapc__pred_point_missing(xy[2 * n], xy[2 * n + 1])) {
                    /* sleap-io's absent point: NaN, invisible, score 0. */
                    *p = (sleapc_slp_point_rec){NAN, NAN, 0, 0, 0.0};
                } else {
                    *p = (sleapc_slp_point_rec){xy[2 * n], xy[2 * n + 1], 1, 0, sc[n]};
                }
            }
        }
    }
    /* sleap-io write_lfs order: points, pred_points, instances, frames; all
     * contiguous, /points empty for predictions. */
    st = sleapc__h5_write_compound(f, "points", sleapc__slp_point_fields, SLEAPC_SLP_POINT_FIELDS,
                                   sizeof *pts, pts, 0, NULL);
    if (!st)
        st = sleapc__h5_write_compound(f, "pred_points", sleapc__slp_point_fields,
                                       SLEAPC_SLP_PRED_POINT_FIELDS, sizeof *pts, pts,
                                       (int64_t)n_pts, NULL);
    if (!st)
        st = sleapc__h5_write_compound(f, "instances", sleapc__slp_instance_fields,
                                       SLEAPC_SLP_INSTANCE_FIELDS, sizeof *insts, insts, n_inst,
                                       NULL);
    if (!st)
        st = sleapc__h5_write_compound(f, "frames", sleapc__slp_frame_fields,
                                       SLEAPC_SLP_FRAME_FIELDS, sizeof *frames, frames,
                                       pr->n_frames, NULL);
done:
    sleapc__free(frames);
    sleapc__free(insts);
    sleapc__free(pts);
    return st;
}

sleapc_status sleapc__predictions_write_slp(const sleapc_predictions *pr, const char *path)
{
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write .slp: no path");
    sleapc_status st = sleapc__predictions_check(pr, "write .slp");
    if (st)
        return st;
    sleapc_h5 *f = NULL;
    st = sleapc__h5_create_atomic(path, &f);
    if (st)
        return st;
    /* sleap-io write_labels order: videos, tracks, suggestions, metadata,
     * then the tables. */
    st = write_videos(f, pr);
    if (!st)
        st = write_tracks(f, pr);
    if (!st)
        st = write_rows(f, "suggestions_json", NULL, 0);
    if (!st)
        st = write_metadata(f, pr);
    if (!st)
        st = write_tables(f, pr);
    if (st) {
        sleapc__h5_discard(f);
        return sleapc__wrap(st, "write %s", path);
    }
    st = sleapc__h5_close(f);
    return st ? sleapc__wrap(st, "write %s", path) : SLEAPC_OK;
}
