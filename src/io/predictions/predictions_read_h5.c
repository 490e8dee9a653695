/* Predictions from a SLEAP analysis HDF5 file. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_file.h"
#include "io/predictions/predictions_read_impl.h"

/* Strings of a list dataset; h5py writes an empty list as float64 (0,). */
static sleapc_status read_names(sleapc_h5 *f, const char *dset, char ***names, int64_t *n)
{
    sleapc_h5_info info;
    *names = NULL;
    *n = 0;
    sleapc_status st = sleapc__h5_dataset_info(f, dset, &info);
    if (st || info.n_elems == 0 || info.cls != SLEAPC_H5_CLASS_STRING)
        return st;
    return sleapc__h5_read_strings(f, dset, names, n);
}

/* SLEAP's analysis HDF5 (the layout analysis_h5_write.c writes): one
 * instance per occupied (frame, track) cell; frames without instances are
 * not in the file. */
sleapc_status sleapc__pred_read_analysis_h5(const char *path, sleapc_predictions *pr,
                                            int64_t *n_user_frames)
{
    (void)n_user_frames; /* the format holds predictions only */
    sleapc_h5 *f = NULL;
    sleapc_status st = sleapc__h5_open(path, &f);
    if (st)
        return st;
    char **nodes = NULL, **tracks = NULL, *video = NULL;
    int64_t n_nodes = 0, n_tracks = 0;
    double *xy = NULL, *psc = NULL, *isc = NULL, *tsc = NULL, *edges = NULL;
    uint8_t *occ = NULL;
    sleapc_h5_info ti, ei;
    st = read_names(f, "node_names", &nodes, &n_nodes);
    if (!st)
        st = read_names(f, "track_names", &tracks, &n_tracks);
    if (!st)
        st = sleapc__h5_read(f, "tracks", SLEAPC_H5_F64, (void **)&xy, &ti);
    if (!st && (ti.ndim != 4 || ti.shape[1] != 2 || ti.shape[2] != n_nodes))
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: tracks is not (tracks, 2, nodes, frames)", path);
    int64_t T = st ? 0 : ti.shape[0], N = n_nodes, F = st ? 0 : ti.shape[3];
    if (!st)
        st = sleapc__h5_read(f, "track_occupancy", SLEAPC_H5_U8, (void **)&occ, NULL);
    if (!st)
        st = sleapc__h5_read(f, "point_scores", SLEAPC_H5_F64, (void **)&psc, NULL);
    if (!st)
        st = sleapc__h5_read(f, "instance_scores", SLEAPC_H5_F64, (void **)&isc, NULL);
    if (!st)
        st = sleapc__h5_read(f, "tracking_scores", SLEAPC_H5_F64, (void **)&tsc, NULL);
    if (!st)
        st = sleapc__h5_read(f, "edge_inds", SLEAPC_H5_F64, (void **)&edges, &ei);
    if (!st && sleapc__h5_is_dataset(f, "video_path")) {
        char **v = NULL;
        int64_t nv = 0;
        if (!sleapc__h5_read_strings(f, "video_path", &v, &nv) && nv == 1)
            video = sleapc__strdup(v[0]);
        sleapc__h5_free_strings(v, nv);
    }
    int64_t n_insts = 0, n_frames = 0;
    for (int64_t fr = 0; !st && fr < F; fr++) {
        int64_t k = 0;
        for (int64_t t = 0; t < T; t++)
            k += occ[fr * T + t] != 0;
        n_insts += k;
        n_frames += k > 0;
    }
    int n_edges = !st && ei.ndim == 2 ? (int)ei.shape[0] : 0;
    if (!st)
        st = sleapc__pred_read_alloc(pr, (int)N, n_edges, 0, (int)n_tracks, 1, n_frames, n_insts);
    /* sleap-io's writer records the skeleton's name as a file attribute. */
    if (!st && sleapc__h5_attr_string(f, "/", "skeleton_name", &pr->skeleton_name))
        pr->skeleton_name = NULL;
    if (!st && !pr->skeleton_name && !(pr->skeleton_name = sleapc__strdup("")))
        st = sleapc__pred_read_nomem();
    for (int i = 0; !st && i < N; i++)
        if (!(pr->node_names[i] = sleapc__strdup(nodes[i])))
            st = sleapc__pred_read_nomem();
    for (int i = 0; !st && i < n_tracks; i++)
        if (!(pr->track_names[i] = sleapc__strdup(tracks[i])))
            st = sleapc__pred_read_nomem();
    for (int i = 0; !st && i < n_edges; i++) {
        pr->edges[i][0] = (int)edges[2 * i];
        pr->edges[i][1] = (int)edges[2 * i + 1];
        if (pr->edges[i][0] < 0 || pr->edges[i][0] >= N || pr->edges[i][1] < 0 ||
            pr->edges[i][1] >= N)
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: edge_inds names a node it lacks", path);
    }
    if (!st) {
        sleapc_pred_video *v = &pr->videos[0];
        v->n_frames = F;
        v->height = v->width = v->channels = -1;
        if (!(v->filename = sleapc__strdup(video ? video : "")))
            st = sleapc__pred_read_nomem();
    }
    for (int64_t fr = 0; !st && fr < F; fr++) {
        sleapc_pred_frame *d = NULL;
        for (int64_t t = 0; t < T; t++) {
            if (!occ[fr * T + t])
                continue;
            if (!d) {
                d = &pr->frames[pr->n_frames++];
                d->video = 0;
                d->frame_idx = fr;
                d->first = pr->n_insts;
            }
            int64_t q = pr->n_insts++;
            sleapc_pred_instance *o = &pr->insts[q];
            o->score = (float)isc[t * F + fr];
            o->track = n_tracks > 0 ? (int)t : -1;
            o->tracking_score = (float)tsc[t * F + fr];
            o->class_index = -1;
            for (int64_t n = 0; n < N; n++) {
                double x = xy[((t * 2 + 0) * N + n) * F + fr],
                       y = xy[((t * 2 + 1) * N + n) * F + fr];
                bool miss = isnan(x) || isnan(y);
                pr->points[(q * N + n) * 2] = (float)x;
                pr->points[(q * N + n) * 2 + 1] = (float)y;
                pr->point_scores[q * N + n] = miss ? NAN : (float)psc[(t * N + n) * F + fr];
            }
            d->n++;
        }
    }
    sleapc__h5_free_strings(nodes, n_nodes);
    sleapc__h5_free_strings(tracks, n_tracks);
    sleapc__free(video);
    sleapc__free(xy);
    sleapc__free(psc);
    sleapc__free(isc);
    sleapc__free(tsc);
    sleapc__free(edges);
    sleapc__free(occ);
    sleapc__h5_close(f);
    return st;
}
