/* Predictions -> SLEAP "analysis" HDF5 as sleap-io 0.9.5 writes it
 * (save_analysis_h5: io/analysis_h5.py write_labels over
 * codecs/numpy.py to_analysis_arrays, "matlab" preset, all frames of the
 * first video): dense matrices stored transposed for MATLAB with their
 * dimension names, every array gzip level 9, and sleap-io's file
 * attributes. Untracked multi-animal predictions keep every instance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "io/h5/h5_file.h"
#include "io/slp/pred_check.h"
#include "io/slp/slp_json.h"
#include "io/slp/slp_schema.h"
#include "io/slp/slp_write.h"
#include "io/slp/slp_write_json.h"

typedef struct matrices {
    int64_t F, T, N;      /* frames (0 .. end of video or last frame), columns, nodes */
    double *tracks;       /* (T, 2, N, F) */
    uint8_t *occupancy;   /* (F, T) */
    double *point_scores; /* (T, N, F) */
    double *inst_scores;  /* (T, F) */
    double *track_scores; /* (T, F) */
} matrices;

static void free_matrices(matrices *m)
{
    sleapc__free(m->tracks);
    sleapc__free(m->occupancy);
    sleapc__free(m->point_scores);
    sleapc__free(m->inst_scores);
    sleapc__free(m->track_scores);
}

static double *nan_array(size_t n)
{
    double *p = sleapc__malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = NAN;
    return p;
}

static sleapc_status alloc_matrices(matrices *m)
{
    /* Frame indices come from the caller; keep the products in range. */
    const double limit = (double)(SIZE_MAX / (4 * sizeof(double)));
    if ((double)m->F * (double)m->T * (double)m->N * 2.0 > limit)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "analysis matrices too large (%lld frames)",
                            (long long)m->F);
    size_t ft = (size_t)(m->F * m->T), tnf = (size_t)(m->F * m->T * m->N * 2);
    m->tracks = nan_array(tnf);
    m->point_scores = nan_array(tnf / 2);
    m->inst_scores = nan_array(ft);
    m->track_scores = nan_array(ft);
    m->occupancy = sleapc__calloc(ft ? ft : 1, 1);
    if (!m->tracks || !m->point_scores || !m->inst_scores || !m->track_scores || !m->occupancy)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for analysis matrices");
    return SLEAPC_OK;
}

/* The record that fills frame f: the last one of video 0 with that frame
 * index (sleap-io maps frame index -> labelled frame, so a later duplicate
 * replaces an earlier one). last[f] holds its index + 1, 0 for none. */
static void last_records(const sleapc_predictions *pr, int64_t F, int64_t *last)
{
    for (int64_t k = 0; k < pr->n_frames; k++)
        if (pr->frames[k].video == 0 && pr->frames[k].frame_idx < F)
            last[pr->frames[k].frame_idx] = k + 1;
}

/* sleap-io to_analysis_arrays: with tracks each instance goes to its
 * track's column (the last one of a track in a frame wins) and untracked
 * instances are left out; without tracks a frame's instances fill columns
 * 0, 1, ... in order. Values are the stored ones: an absent point's score
 * is the 0 the .slp stores, a missing tracking score stays NaN. */
static void fill(matrices *m, const sleapc_predictions *pr, const int64_t *last)
{
    int64_t F = m->F, N = m->N;
    for (int64_t f = 0; f < F; f++) {
        if (!last[f])
            continue;
        const sleapc_pred_frame *fr = &pr->frames[last[f] - 1];
        for (int64_t i = 0; i < fr->n; i++) {
            int64_t src = fr->first + i;
            const sleapc_pred_instance *in = &pr->insts[src];
            int64_t t = pr->n_tracks == 0 ? i : in->track;
            if (t < 0 || t >= m->T)
                continue;
            const float *xy = pr->points + src * N * 2;
            const float *sc = pr->point_scores + src * N;
            m->occupancy[f * m->T + t] = 1;
            for (int64_t n = 0; n < N; n++) {
                bool miss = sleapc__pred_point_missing(xy[2 * n], xy[2 * n + 1]);
                m->tracks[((t * 2 + 0) * N + n) * F + f] = miss ? NAN : xy[2 * n];
                m->tracks[((t * 2 + 1) * N + n) * F + f] = miss ? NAN : xy[2 * n + 1];
                m->point_scores[(t * N + n) * F + f] = miss ? 0.0 : sc[n];
            }
            m->inst_scores[t * F + f] = in->score;
            m->track_scores[t * F + f] = in->tracking_score;
        }
    }
}

/* remove_empty_tracks_from_matrices: drop columns never occupied. keep[]
 * receives the kept track indices; returns their count. */
static int64_t drop_empty_tracks(matrices *m, int64_t *keep)
{
    int64_t F = m->F, N = m->N, T = 0;
    for (int64_t t = 0; t < m->T; t++) {
        bool used = false;
        for (int64_t f = 0; f < F && !used; f++)
            used = m->occupancy[f * m->T + t] != 0;
        if (!used)
            continue;
        if (T != t) {
            memmove(m->tracks + T * 2 * N * F, m->tracks + t * 2 * N * F,
                    (size_t)(2 * N * F) * sizeof(double));
            memmove(m->point_scores + T * N * F, m->point_scores + t * N * F,
                    (size_t)(N * F) * sizeof(double));
            memmove(m->inst_scores + T * F, m->inst_scores + t * F, (size_t)F * sizeof(double));
            memmove(m->track_scores + T * F, m->track_scores + t * F, (size_t)F * sizeof(double));
        }
        keep[T++] = t;
    }
    /* Occupancy is (F, T): repack rows with the kept columns. */
    for (int64_t f = 0; f < F; f++)
        for (int64_t j = 0; j < T; j++)
            m->occupancy[f * T + j] = m->occupancy[f * m->T + keep[j]];
    m->T = T;
    return T;
}

/* sleap-io writes every array with gzip 9 (h5py's guessed chunks): a list
 * of strings as S<n>, numbers as int64, and an empty list as float64 (0,). */
static const sleapc_h5_write_opts gzip9 = {.chunked = true, .gzip = 9};

static sleapc_status write_list_strings(sleapc_h5 *f, const char *name, int ndim,
                                        const int64_t *shape, const char *const *strs)
{
    if (shape[0] == 0) {
        int64_t zero = 0;
        return sleapc__h5_write(f, name, SLEAPC_H5_F64, 1, &zero, NULL, &gzip9);
    }
    return sleapc__h5_write_strings(f, name, ndim, shape, strs, &gzip9);
}

static sleapc_status write_matrix(sleapc_h5 *f, const char *name, sleapc_h5_type t, int ndim,
                                  const int64_t *shape, const void *data, const char *dims)
{
    sleapc_status st = sleapc__h5_write(f, name, t, ndim, shape, data, &gzip9);
    if (!st)
        st = sleapc__h5_set_attr_string(f, name, "dims", dims, true);
    return st;
}

static sleapc_status write_skeleton(sleapc_h5 *f, const sleapc_predictions *pr)
{
    int64_t E = pr->n_edges, shape[2] = {E, 2};
    const char **names = sleapc__calloc((size_t)E * 2 + 1, sizeof *names);
    int64_t *inds = sleapc__calloc((size_t)E * 2 + 1, sizeof *inds);
    sleapc_status st = SLEAPC_OK;
    if (!names || !inds) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int64_t e = 0; e < E; e++)
        for (int j = 0; j < 2; j++) {
            inds[2 * e + j] = pr->edges[e][j];
            names[2 * e + j] = pr->node_names[pr->edges[e][j]];
        }
    int64_t n_nodes = pr->n_nodes;
    st = write_list_strings(f, "node_names", 1, &n_nodes, (const char *const *)pr->node_names);
    if (!st)
        st = write_list_strings(f, "edge_names", 2, shape, names);
    if (!st && E == 0)
        st = write_list_strings(f, "edge_inds", 1, shape, NULL);
    else if (!st)
        st = sleapc__h5_write(f, "edge_inds", SLEAPC_H5_I64, 2, shape, inds, &gzip9);
done:
    sleapc__free(names);
    sleapc__free(inds);
    return st;
}

/* sleap-io's file attributes (analysis_h5.write_labels, save_metadata on). */
static sleapc_status write_file_attrs(sleapc_h5 *f, const sleapc_predictions *pr)
{
    sleapc_json_text sym = {0};
    sleapc__json_put(&sym, "[");
    for (int i = 0; i < pr->n_symmetries; i++) {
        sleapc__json_put(&sym, i ? ", [" : "[");
        sleapc__json_put_string(&sym, pr->node_names[pr->symmetries[i][0]]);
        sleapc__json_put(&sym, ", ");
        sleapc__json_put_string(&sym, pr->node_names[pr->symmetries[i][1]]);
        sleapc__json_put(&sym, "]");
    }
    sleapc__json_put(&sym, "]");
    char *backend = NULL;
    sleapc_status st = sleapc__json_status(&sym, "symmetries");
    if (!st)
        st = sleapc__slp_video_json(&pr->videos[0], true, true, &backend);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "preset", "matlab", true);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "format", "analysis", true);
    /* sleap-io stamps its own release here; this names the release whose
     * layout the file follows. Which program wrote it has a key of its own. */
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "sleap_io_version", SLEAPC_SLEAP_IO_LAYOUT, true);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "skeleton_name",
                                        pr->skeleton_name ? pr->skeleton_name : "", true);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "skeleton_symmetries", sym.s, true);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "video_backend_metadata", backend, true);
    if (!st)
        st = sleapc__h5_set_attr_string(f, "/", "sleapc_version", sleapc__version(), true);
    sleapc__json_free(&sym);
    sleapc__free(backend);
    return st;
}

/* Column names: the kept tracks' names, or without tracks sleap-io's
 * "track_<i>", numbered after the empty columns are dropped. */
static char **track_names(const sleapc_predictions *pr, const matrices *m, const int64_t *keep)
{
    char **names = sleapc__calloc((size_t)m->T + 1, sizeof *names);
    for (int64_t j = 0; names && j < m->T; j++) {
        char buf[32];
        snprintf(buf, sizeof buf, "track_%lld", (long long)j);
        const char *name = pr->n_tracks > 0 ? pr->track_names[keep[j]] : buf;
        if (!(names[j] = sleapc__strdup(name ? name : ""))) {
            for (int64_t i = 0; i < j; i++)
                sleapc__free(names[i]);
            sleapc__free(names);
            return NULL;
        }
    }
    return names;
}

/* Datasets in sleap-io's order: the matrices, the name lists, then the
 * scalars (an empty labels_path: sleapc writes no labels file). */
static sleapc_status write_file(sleapc_h5 *f, const sleapc_predictions *pr, matrices *m,
                                const int64_t *keep)
{
    char **tnames = track_names(pr, m, keep);
    sleapc_json_text prov = {0};
    if (!tnames)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    int64_t s4[4] = {m->T, 2, m->N, m->F}, s3[3] = {m->T, m->N, m->F};
    int64_t s2[2] = {m->T, m->F}, so[2] = {m->F, m->T};
    sleapc_status st = write_matrix(f, "tracks", SLEAPC_H5_F64, 4, s4, m->tracks,
                                    "[\"track\", \"xy\", \"node\", \"frame\"]");
    /* SLEAP's quirk, kept by sleap-io's matlab preset: occupancy frame-first. */
    if (!st)
        st = write_matrix(f, "track_occupancy", SLEAPC_H5_U8, 2, so, m->occupancy,
                          "[\"frame\", \"track\"]");
    if (!st)
        st = write_matrix(f, "point_scores", SLEAPC_H5_F64, 3, s3, m->point_scores,
                          "[\"track\", \"node\", \"frame\"]");
    if (!st)
        st = write_matrix(f, "instance_scores", SLEAPC_H5_F64, 2, s2, m->inst_scores,
                          "[\"track\", \"frame\"]");
    if (!st)
        st = write_matrix(f, "tracking_scores", SLEAPC_H5_F64, 2, s2, m->track_scores,
                          "[\"track\", \"frame\"]");
    if (!st)
        st = write_list_strings(f, "track_names", 1, &m->T, (const char *const *)tnames);
    if (!st)
        st = write_skeleton(f, pr);
    if (!st)
        st = sleapc__h5_write_vlen_string(f, "labels_path", "");
    if (!st)
        st = sleapc__h5_write_vlen_string(f, "video_path", pr->videos[0].filename);
    int64_t video_ind = 0;
    if (!st)
        st = sleapc__h5_write(f, "video_ind", SLEAPC_H5_I64, 0, NULL, &video_ind, NULL);
    /* json.dumps with its default separators. */
    if (!st)
        st = sleapc__json_put_object_text_sep(&prov, pr->provenance, true);
    if (!st)
        st = sleapc__json_status(&prov, "provenance");
    if (!st)
        st = sleapc__h5_write_vlen_string(f, "provenance", prov.s);
    if (!st)
        st = write_file_attrs(f, pr);
    sleapc__json_free(&prov);
    for (int64_t j = 0; j < m->T; j++)
        sleapc__free(tnames[j]);
    sleapc__free(tnames);
    return st;
}

sleapc_status sleapc__predictions_write_analysis_h5(const sleapc_predictions *pr, const char *path)
{
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write analysis HDF5: no path");
    sleapc_status st = sleapc__predictions_check(pr, "write analysis HDF5");
    if (st)
        return st;
    if (pr->n_videos < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write analysis HDF5: %s: no video", path);
    /* all_frames=True: frames 0 .. the last labelled frame of video 0, or
     * to the video's end when its length is known. Columns: one per track,
     * or without tracks the most instances in one frame. */
    matrices m = {.T = pr->n_tracks, .N = pr->n_nodes, .F = pr->videos[0].n_frames};
    if (m.F < 0)
        m.F = 0;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        const sleapc_pred_frame *fr = &pr->frames[k];
        if (fr->video != 0)
            continue;
        if (fr->frame_idx + 1 > m.F)
            m.F = fr->frame_idx + 1;
        if (pr->n_tracks == 0 && fr->n > m.T)
            m.T = fr->n;
    }
    int64_t *keep = NULL, *last = NULL;
    sleapc_h5 *f = NULL;
    st = alloc_matrices(&m);
    if (!st && (!(keep = sleapc__calloc((size_t)m.T + 1, sizeof *keep)) ||
                !(last = sleapc__calloc((size_t)m.F + 1, sizeof *last))))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st) {
        last_records(pr, m.F, last);
        fill(&m, pr, last);
        drop_empty_tracks(&m, keep);
        st = sleapc__h5_create_atomic(path, &f);
    }
    if (!st)
        st = write_file(f, pr, &m, keep);
    if (!st) {
        st = sleapc__h5_close(f);
        f = NULL;
    }
    sleapc__h5_discard(f);
    free_matrices(&m);
    sleapc__free(keep);
    sleapc__free(last);
    return st ? sleapc__wrap(st, "write %s", path) : SLEAPC_OK;
}
