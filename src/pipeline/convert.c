/* Predictions conversion: a .slp, sleapc JSON or SLEAP analysis HDF5 file
 * read back into predictions, then written by the format writers of io/. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "io/h5/h5_file.h"
#include "io/slp/slp_read.h"
#include "core/results.h"
#include "pipeline/convert.h"
#include "pipeline/tracking/predictions_track.h"

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    return n > k && strcmp(path + n - k, ext) == 0;
}

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
}

/* Room for the header arrays; names are filled by the readers. */
static sleapc_status alloc_header(sleapc_predictions *pr, int nodes, int edges, int syms,
                                  int tracks, int videos, int64_t frames, int64_t insts)
{
    pr->n_nodes = nodes;
    pr->n_edges = edges;
    pr->n_symmetries = syms;
    pr->n_tracks = tracks;
    pr->n_videos = videos;
    pr->node_names = sleapc__calloc((size_t)nodes + 1, sizeof(char *));
    pr->edges = sleapc__calloc((size_t)edges + 1, sizeof *pr->edges);
    pr->symmetries = sleapc__calloc((size_t)syms + 1, sizeof *pr->symmetries);
    pr->track_names = sleapc__calloc((size_t)tracks + 1, sizeof(char *));
    pr->videos = sleapc__calloc((size_t)videos + 1, sizeof *pr->videos);
    pr->frames = sleapc__calloc((size_t)frames + 1, sizeof *pr->frames);
    pr->insts = sleapc__calloc((size_t)insts + 1, sizeof *pr->insts);
    pr->points = sleapc__calloc(((size_t)insts + 1) * (size_t)(nodes + 1) * 2, sizeof(float));
    pr->point_scores = sleapc__calloc(((size_t)insts + 1) * (size_t)(nodes + 1), sizeof(float));
    pr->frames_cap = frames;
    pr->insts_cap = insts;
    if (!pr->node_names || !pr->edges || !pr->symmetries || !pr->track_names || !pr->videos ||
        !pr->frames || !pr->insts || !pr->points || !pr->point_scores)
        return nomem();
    return SLEAPC_OK;
}

/* Predicted instances of a labels file (user instances are labels, not
 * predictions, and are left out). */
static sleapc_status read_slp(const char *path, sleapc_predictions *pr)
{
    sleapc_slp *r = NULL;
    sleapc_status st = sleapc__slp_open(path, &r);
    if (st)
        return st;
    if (r->n_skeletons < 1) {
        sleapc__slp_close(r);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: no skeleton", path);
    }
    const sleapc_slp_skeleton *sk = &r->skeletons[0];
    int64_t n_pred = 0;
    for (int64_t i = 0; i < r->n_instances; i++)
        n_pred += r->instances[i].predicted && r->instances[i].skeleton == 0;
    st = alloc_header(pr, sk->n_nodes, sk->n_edges, sk->n_symmetries, r->n_tracks, r->n_videos,
                      r->n_frames, n_pred);
    if (!st && !(pr->skeleton_name = sleapc__strdup(sk->name ? sk->name : "")))
        st = nomem();
    for (int i = 0; !st && i < sk->n_nodes; i++)
        if (!(pr->node_names[i] = sleapc__strdup(sk->node_names[i])))
            st = nomem();
    for (int i = 0; !st && i < sk->n_edges; i++)
        memcpy(pr->edges[i], sk->edges[i], sizeof pr->edges[i]);
    for (int i = 0; !st && i < sk->n_symmetries; i++)
        memcpy(pr->symmetries[i], sk->symmetries[i], sizeof pr->symmetries[i]);
    for (int i = 0; !st && i < r->n_tracks; i++)
        if (!(pr->track_names[i] = sleapc__strdup(r->track_names[i])))
            st = nomem();
    for (int i = 0; !st && i < r->n_videos; i++) {
        st = sleapc__slp_pred_video(r, i, &pr->videos[i]);
    }
    if (!st && r->provenance && !(pr->provenance = sleapc__strdup(r->provenance)))
        st = nomem();
    for (int64_t k = 0; !st && k < r->n_frames; k++) {
        const sleapc_slp_frame *f = &r->frames[k];
        sleapc_pred_frame *d = &pr->frames[pr->n_frames++];
        d->video = f->video;
        d->frame_idx = f->frame_idx;
        d->first = pr->n_insts;
        for (int64_t i = 0; i < f->n_instances; i++) {
            const sleapc_slp_instance *in = &r->instances[f->first_instance + i];
            if (!in->predicted || in->skeleton != 0)
                continue;
            int64_t q = pr->n_insts++;
            sleapc_pred_instance *o = &pr->insts[q];
            o->score = in->score;
            o->track = in->track;
            o->tracking_score = in->tracking_score;
            o->class_index = -1;
            for (int n = 0; n < pr->n_nodes && n < in->n_points; n++) {
                const sleapc_slp_point *pt = &r->points[in->first_point + n];
                bool missing = !pt->visible || isnan(pt->x) || isnan(pt->y);
                pr->points[(q * pr->n_nodes + n) * 2] = missing ? NAN : (float)pt->x;
                pr->points[(q * pr->n_nodes + n) * 2 + 1] = missing ? NAN : (float)pt->y;
                pr->point_scores[q * pr->n_nodes + n] = missing ? NAN : (float)pt->score;
            }
            d->n++;
        }
    }
    sleapc__slp_close(r);
    return st;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static sleapc_status json_pairs(const cJSON *arr, int (*dst)[2], int n)
{
    for (int i = 0; i < n; i++) {
        const cJSON *p = cJSON_GetArrayItem(arr, i);
        if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2)
            return SLEAPC_ERR_FORMAT;
        dst[i][0] = cJSON_GetArrayItem(p, 0)->valueint;
        dst[i][1] = cJSON_GetArrayItem(p, 1)->valueint;
    }
    return SLEAPC_OK;
}

static sleapc_status dup_string(const cJSON *v, char **out)
{
    *out = sleapc__strdup(cJSON_IsString(v) ? v->valuestring : "");
    return *out ? SLEAPC_OK : nomem();
}

/* The sleapc-predictions JSON format written by predictions_json.c. */
static sleapc_status read_json_tree(const char *path, const cJSON *root, sleapc_predictions *pr)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "sleapc-predictions") != 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: not a sleapc-predictions JSON file", path);
    const cJSON *sk = cJSON_GetObjectItemCaseSensitive(root, "skeleton");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(sk, "nodes");
    const cJSON *edges = cJSON_GetObjectItemCaseSensitive(sk, "edges");
    const cJSON *syms = cJSON_GetObjectItemCaseSensitive(sk, "symmetries");
    const cJSON *videos = cJSON_GetObjectItemCaseSensitive(root, "videos");
    const cJSON *tracks = cJSON_GetObjectItemCaseSensitive(root, "tracks");
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "frames");
    if (!cJSON_IsArray(nodes) || !cJSON_IsArray(videos) || !cJSON_IsArray(frames))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: skeleton nodes, videos or frames missing", path);
    int64_t n_insts = 0;
    const cJSON *f, *it;
    cJSON_ArrayForEach(f, frames)
        n_insts += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f, "instances"));
    sleapc_status st = alloc_header(pr, cJSON_GetArraySize(nodes), cJSON_GetArraySize(edges),
                                    cJSON_GetArraySize(syms), cJSON_GetArraySize(tracks),
                                    cJSON_GetArraySize(videos), cJSON_GetArraySize(frames),
                                    n_insts);
    if (!st)
        st = dup_string(cJSON_GetObjectItemCaseSensitive(sk, "name"), &pr->skeleton_name);
    for (int i = 0; !st && i < pr->n_nodes; i++)
        st = dup_string(cJSON_GetArrayItem(nodes, i), &pr->node_names[i]);
    for (int i = 0; !st && i < pr->n_tracks; i++)
        st = dup_string(cJSON_GetArrayItem(tracks, i), &pr->track_names[i]);
    if (!st && (json_pairs(edges, pr->edges, pr->n_edges) ||
                json_pairs(syms, pr->symmetries, pr->n_symmetries)))
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: bad skeleton edges", path);
    for (int i = 0; !st && i < pr->n_videos; i++) {
        const cJSON *v = cJSON_GetArrayItem(videos, i);
        sleapc_pred_video *d = &pr->videos[i];
        d->n_frames = (int64_t)num(v, "frames", -1);
        d->height = (int64_t)num(v, "height", -1);
        d->width = (int64_t)num(v, "width", -1);
        d->channels = (int64_t)num(v, "channels", -1);
        st = dup_string(cJSON_GetObjectItemCaseSensitive(v, "filename"), &d->filename);
    }
    cJSON_ArrayForEach(f, frames)
    {
        if (st)
            break;
        sleapc_pred_frame *d = &pr->frames[pr->n_frames++];
        d->video = (int)num(f, "video", 0);
        d->frame_idx = (int64_t)num(f, "frame_idx", -1);
        d->first = pr->n_insts;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "instances"))
        {
            int64_t q = pr->n_insts++;
            sleapc_pred_instance *o = &pr->insts[q];
            const cJSON *track = cJSON_GetObjectItemCaseSensitive(it, "track");
            const cJSON *cls = cJSON_GetObjectItemCaseSensitive(it, "class");
            const cJSON *cen = cJSON_GetObjectItemCaseSensitive(it, "centroid");
            o->score = (float)num(it, "score", NAN);
            o->track = cJSON_IsNumber(track) ? track->valueint : -1;
            o->tracking_score = (float)num(it, "tracking_score", NAN);
            o->class_index = cJSON_IsNumber(cls) ? cls->valueint : -1;
            pr->multiclass = pr->multiclass || cls != NULL;
            o->has_centroid = cJSON_IsArray(cen) && cJSON_GetArraySize(cen) == 2;
            if (o->has_centroid) {
                o->centroid[0] = (float)cJSON_GetArrayItem(cen, 0)->valuedouble;
                o->centroid[1] = (float)cJSON_GetArrayItem(cen, 1)->valuedouble;
            }
            const cJSON *pts = cJSON_GetObjectItemCaseSensitive(it, "points");
            const cJSON *scs = cJSON_GetObjectItemCaseSensitive(it, "point_scores");
            for (int n = 0; n < pr->n_nodes; n++) {
                const cJSON *pt = cJSON_GetArrayItem(pts, n), *sc = cJSON_GetArrayItem(scs, n);
                bool ok = cJSON_IsArray(pt) && cJSON_GetArraySize(pt) == 2;
                pr->points[(q * pr->n_nodes + n) * 2] =
                    ok ? (float)cJSON_GetArrayItem(pt, 0)->valuedouble : NAN;
                pr->points[(q * pr->n_nodes + n) * 2 + 1] =
                    ok ? (float)cJSON_GetArrayItem(pt, 1)->valuedouble : NAN;
                pr->point_scores[q * pr->n_nodes + n] =
                    cJSON_IsNumber(sc) ? (float)sc->valuedouble : NAN;
            }
            d->n++;
        }
        if (d->video < 0 || d->video >= pr->n_videos || d->frame_idx < 0)
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: frame %lld names a bad video or index", path,
                              (long long)(pr->n_frames - 1));
    }
    return st;
}

static sleapc_status read_json(const char *path, sleapc_predictions *pr)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = size >= 0 ? sleapc__malloc((size_t)size + 1) : NULL;
    bool ok = text && fread(text, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        sleapc__free(text);
        return text ? sleapc__fail(SLEAPC_ERR_IO, "%s: cannot read", path) : nomem();
    }
    text[size] = '\0';
    cJSON *root = cJSON_ParseWithLength(text, (size_t)size);
    sleapc__free(text);
    if (!root)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: not valid JSON", path);
    sleapc_status st = read_json_tree(path, root, pr);
    cJSON_Delete(root);
    return st;
}

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
static sleapc_status read_analysis_h5(const char *path, sleapc_predictions *pr)
{
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
        st = alloc_header(pr, (int)N, n_edges, 0, (int)n_tracks, 1, n_frames, n_insts);
    /* sleap-io's writer records the skeleton's name as a file attribute. */
    if (!st && sleapc__h5_attr_string(f, "/", "skeleton_name", &pr->skeleton_name))
        pr->skeleton_name = NULL;
    if (!st && !pr->skeleton_name && !(pr->skeleton_name = sleapc__strdup("")))
        st = nomem();
    for (int i = 0; !st && i < N; i++)
        if (!(pr->node_names[i] = sleapc__strdup(nodes[i])))
            st = nomem();
    for (int i = 0; !st && i < n_tracks; i++)
        if (!(pr->track_names[i] = sleapc__strdup(tracks[i])))
            st = nomem();
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
            st = nomem();
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
                double x = xy[((t * 2 + 0) * N + n) * F + fr], y = xy[((t * 2 + 1) * N + n) * F + fr];
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

sleapc_status sleapc__predictions_write_path(const sleapc_predictions *pr, const char *path)
{
    if (has_ext(path, ".slp"))
        return sleapc__predictions_write_slp(pr, path);
    if (has_ext(path, ".h5") || has_ext(path, ".hdf5")) {
        /* As predict says it: a silent loss would look like a bad model. */
        const int64_t unheld = sleapc__predictions_h5_unheld(pr);
        if (unheld > 0)
            sleapc__log(SLEAPC_LOG_WARN,
                        "%s: the analysis .h5 holds one instance per track and frame; %lld "
                        "instances are left out (%s)",
                        path, (long long)unheld,
                        pr->n_tracks ? "untracked" : "no tracks: track them first with "
                                                     "sleapc track --tracking");
        return sleapc__predictions_write_analysis_h5(pr, path);
    }
    bool csv = has_ext(path, ".csv");
    if (!csv && !has_ext(path, ".json"))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write %s: unknown output format (use .slp, .h5, .csv or .json)", path);
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    st = csv ? sleapc__predictions_write_csv(pr, af.f) : sleapc__predictions_write_json(pr, af.f);
    if (st)
        sleapc__atomic_abort(&af);
    else
        st = sleapc__atomic_commit(&af);
    return st;
}

sleapc_status sleapc__predictions_read(const char *in_path, sleapc_predictions *pr)
{
    sleapc_status st;
    memset(pr, 0, sizeof *pr);
    if (has_ext(in_path, ".slp"))
        st = read_slp(in_path, pr);
    else if (has_ext(in_path, ".json"))
        st = read_json(in_path, pr);
    else if (has_ext(in_path, ".h5") || has_ext(in_path, ".hdf5"))
        st = read_analysis_h5(in_path, pr);
    else if (has_ext(in_path, ".csv"))
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                          "read %s: .csv files are written, not read: use the .slp, "
                          ".h5 or .json predictions", in_path);
    else
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "read %s: unknown input format (use .slp, .h5 or .json)", in_path);
    if (st)
        sleapc__predictions_free(pr);
    return st;
}

sleapc_status sleapc__predictions_convert(const char *in_path, const char *out_path)
{
    if (strcmp(in_path, out_path) == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "convert %s: input and output are the same file",
                            in_path);
    sleapc_predictions pr;
    sleapc_status st = sleapc__predictions_read(in_path, &pr);
    if (!st)
        st = sleapc__predictions_write_path(&pr, out_path);
    sleapc__predictions_free(&pr);
    if (st)
        st = sleapc__wrap(st, "convert %s to %s", in_path, out_path);
    return st;
}

sleapc_status sleapc__predictions_read_analysis_h5(const char *path, sleapc_predictions *pr)
{
    sleapc_status st = read_analysis_h5(path, pr);
    if (st)
        sleapc__predictions_free(pr);
    return st;
}
