/* Reading predictions back (see predictions_load.h). */
#include "pipeline/tracking/predictions_load.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/slp/slp_read.h"

static bool ends_with(const char *s, const char *ext)
{
    const size_t n = strlen(s), k = strlen(ext);
    return n >= k && strcmp(s + n - k, ext) == 0;
}

static sleapc_status alloc_body(sleapc_predictions *pr, int64_t n_frames, int64_t n_insts)
{
    const size_t N = (size_t)(pr->n_nodes > 0 ? pr->n_nodes : 1);
    pr->frames = sleapc__calloc((size_t)n_frames + 1, sizeof *pr->frames);
    pr->insts = sleapc__calloc((size_t)n_insts + 1, sizeof *pr->insts);
    pr->points = sleapc__calloc(((size_t)n_insts + 1) * N * 2, sizeof(float));
    pr->point_scores = sleapc__calloc(((size_t)n_insts + 1) * N, sizeof(float));
    pr->frames_cap = n_frames;
    pr->insts_cap = n_insts;
    if (!pr->frames || !pr->insts || !pr->points || !pr->point_scores)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    return SLEAPC_OK;
}

static char *dup_or_empty(const char *s)
{
    return sleapc__strdup(s ? s : "");
}

static sleapc_status load_slp(const char *path, sleapc_predictions *pr, int64_t *n_user)
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
    pr->skeleton_name = dup_or_empty(sk->name);
    pr->n_nodes = sk->n_nodes;
    pr->n_edges = sk->n_edges;
    pr->n_symmetries = sk->n_symmetries;
    pr->n_videos = r->n_videos;
    pr->node_names = sleapc__calloc((size_t)sk->n_nodes + 1, sizeof(char *));
    pr->edges = sleapc__calloc((size_t)sk->n_edges + 1, sizeof *pr->edges);
    pr->symmetries = sleapc__calloc((size_t)sk->n_symmetries + 1, sizeof *pr->symmetries);
    pr->videos = sleapc__calloc((size_t)r->n_videos + 1, sizeof *pr->videos);
    pr->provenance = sleapc__strdup(r->provenance ? r->provenance : "{}");
    if (!pr->skeleton_name || !pr->node_names || !pr->edges || !pr->symmetries ||
        !pr->videos || !pr->provenance) {
        sleapc__slp_close(r);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < sk->n_nodes; i++)
        if (!(pr->node_names[i] = dup_or_empty(sk->node_names[i])))
            st = SLEAPC_ERR_NOMEM;
    memcpy(pr->edges, sk->edges, (size_t)sk->n_edges * sizeof *pr->edges);
    memcpy(pr->symmetries, sk->symmetries, (size_t)sk->n_symmetries * sizeof *pr->symmetries);
    for (int i = 0; !st && i < r->n_videos; i++)
        st = sleapc__slp_pred_video(r, i, &pr->videos[i]);
    pr->n_tracks = r->n_tracks;
    pr->track_names = sleapc__calloc((size_t)r->n_tracks + 1, sizeof(char *));
    if (!pr->track_names)
        st = SLEAPC_ERR_NOMEM;
    for (int i = 0; !st && i < r->n_tracks; i++)
        if (!(pr->track_names[i] = dup_or_empty(r->track_names[i])))
            st = SLEAPC_ERR_NOMEM;
    int64_t n_insts = 0;
    for (int64_t i = 0; i < r->n_instances; i++)
        n_insts += r->instances[i].predicted && r->instances[i].skeleton == 0;
    if (st || (st = alloc_body(pr, r->n_frames, n_insts))) {
        sleapc__slp_close(r);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    const int64_t N = pr->n_nodes;
    for (int64_t k = 0; k < r->n_frames; k++) {
        const sleapc_slp_frame *sf = &r->frames[k];
        sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
        f->video = sf->video;
        f->frame_idx = sf->frame_idx;
        f->first = pr->n_insts;
        bool user = false;
        for (int64_t j = 0; j < sf->n_instances; j++) {
            const sleapc_slp_instance *si = &r->instances[sf->first_instance + j];
            if (!si->predicted) {
                user = true;
                continue;
            }
            if (si->skeleton != 0)
                continue;
            sleapc_pred_instance *d = &pr->insts[pr->n_insts];
            *d = (sleapc_pred_instance){.score = si->score, .track = si->track,
                                        .tracking_score = si->tracking_score,
                                        .class_index = -1};
            for (int64_t n = 0; n < N; n++) {
                const sleapc_slp_point *p = &r->points[si->first_point + n];
                const bool vis = p->visible && !isnan(p->x) && !isnan(p->y);
                pr->points[(pr->n_insts * N + n) * 2] = vis ? (float)p->x : NAN;
                pr->points[(pr->n_insts * N + n) * 2 + 1] = vis ? (float)p->y : NAN;
                pr->point_scores[pr->n_insts * N + n] = vis ? (float)p->score : NAN;
            }
            pr->n_insts++;
        }
        f->n = pr->n_insts - f->first;
        if (user && n_user)
            (*n_user)++;
    }
    sleapc__slp_close(r);
    return SLEAPC_OK;
}

static double num(const cJSON *v)
{
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static sleapc_status load_json(const char *path, sleapc_predictions *pr)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return sleapc__fail(SLEAPC_ERR_IO, "%s: cannot open", path);
    fseek(fp, 0, SEEK_END);
    const long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *text = size >= 0 ? sleapc__malloc((size_t)size + 1) : NULL;
    const bool ok = text && fread(text, 1, (size_t)size, fp) == (size_t)size;
    fclose(fp);
    if (!ok) {
        sleapc__free(text);
        return sleapc__fail(text ? SLEAPC_ERR_IO : SLEAPC_ERR_NOMEM, "%s: cannot read", path);
    }
    text[size] = 0;
    cJSON *root = cJSON_Parse(text);
    sleapc__free(text);
    const cJSON *fmt = cJSON_GetObjectItem(root, "format");
    const cJSON *sk = cJSON_GetObjectItem(root, "skeleton");
    const cJSON *nodes = cJSON_GetObjectItem(sk, "nodes");
    const cJSON *frames = cJSON_GetObjectItem(root, "frames");
    const cJSON *videos = cJSON_GetObjectItem(root, "videos");
    if (!root || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, "sleapc-predictions") ||
        !cJSON_IsArray(nodes) || !cJSON_IsArray(frames)) {
        cJSON_Delete(root);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: not a sleapc predictions JSON file", path);
    }
    sleapc_status st = SLEAPC_OK;
    const cJSON *name = cJSON_GetObjectItem(sk, "name");
    pr->skeleton_name = dup_or_empty(cJSON_IsString(name) ? name->valuestring : "");
    pr->n_nodes = cJSON_GetArraySize(nodes);
    const cJSON *edges = cJSON_GetObjectItem(sk, "edges");
    const cJSON *syms = cJSON_GetObjectItem(sk, "symmetries");
    pr->n_edges = cJSON_GetArraySize(edges);
    pr->n_symmetries = cJSON_GetArraySize(syms);
    pr->n_videos = cJSON_GetArraySize(videos);
    pr->node_names = sleapc__calloc((size_t)pr->n_nodes + 1, sizeof(char *));
    pr->edges = sleapc__calloc((size_t)pr->n_edges + 1, sizeof *pr->edges);
    pr->symmetries = sleapc__calloc((size_t)pr->n_symmetries + 1, sizeof *pr->symmetries);
    pr->videos = sleapc__calloc((size_t)pr->n_videos + 1, sizeof *pr->videos);
    if (!pr->skeleton_name || !pr->node_names || !pr->edges || !pr->symmetries || !pr->videos)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < pr->n_nodes; i++) {
        const cJSON *nm = cJSON_GetArrayItem(nodes, i);
        if (!(pr->node_names[i] = dup_or_empty(cJSON_IsString(nm) ? nm->valuestring : "")))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; !st && i < pr->n_edges + pr->n_symmetries; i++) {
        const bool is_edge = i < pr->n_edges;
        const cJSON *e = cJSON_GetArrayItem(is_edge ? edges : syms, is_edge ? i : i - pr->n_edges);
        int *dst = is_edge ? pr->edges[i] : pr->symmetries[i - pr->n_edges];
        for (int j = 0; j < 2; j++) {
            const double v = num(cJSON_GetArrayItem(e, j));
            if (!(v >= 0 && v < pr->n_nodes))
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: bad skeleton edge", path);
            dst[j] = st ? 0 : (int)v;
        }
    }
    for (int i = 0; !st && i < pr->n_videos; i++) {
        const cJSON *v = cJSON_GetArrayItem(videos, i);
        const cJSON *fn = cJSON_GetObjectItem(v, "filename");
        pr->videos[i] = (sleapc_pred_video){
            dup_or_empty(cJSON_IsString(fn) ? fn->valuestring : ""),
            (int64_t)num(cJSON_GetObjectItem(v, "frames")),
            (int64_t)num(cJSON_GetObjectItem(v, "height")),
            (int64_t)num(cJSON_GetObjectItem(v, "width")),
            (int64_t)num(cJSON_GetObjectItem(v, "channels")), NULL, NULL};
        if (!pr->videos[i].filename)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    const cJSON *tracks = cJSON_GetObjectItem(root, "tracks");
    pr->n_tracks = cJSON_GetArraySize(tracks);
    pr->track_names = sleapc__calloc((size_t)pr->n_tracks + 1, sizeof(char *));
    if (!st && !pr->track_names)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < pr->n_tracks; i++) {
        const cJSON *nm = cJSON_GetArrayItem(tracks, i);
        if (!(pr->track_names[i] = dup_or_empty(cJSON_IsString(nm) ? nm->valuestring : "")))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    int64_t n_insts = 0;
    const cJSON *fr;
    cJSON_ArrayForEach(fr, frames) n_insts += cJSON_GetArraySize(cJSON_GetObjectItem(fr, "instances"));
    if (!st)
        st = alloc_body(pr, cJSON_GetArraySize(frames), n_insts);
    const int64_t N = pr->n_nodes;
    cJSON_ArrayForEach(fr, frames)
    {
        if (st)
            break;
        sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
        const double vid = num(cJSON_GetObjectItem(fr, "video"));
        const double fidx = num(cJSON_GetObjectItem(fr, "frame_idx"));
        if (!(vid >= 0 && vid < pr->n_videos) || !(fidx >= 0)) {
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: frame %lld: bad video or frame_idx", path,
                              (long long)(pr->n_frames - 1));
            break;
        }
        f->video = (int)vid;
        f->frame_idx = (int64_t)fidx;
        f->first = pr->n_insts;
        const cJSON *in;
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(fr, "instances"))
        {
            sleapc_pred_instance *d = &pr->insts[pr->n_insts];
            const double trk = num(cJSON_GetObjectItem(in, "track"));
            *d = (sleapc_pred_instance){
                .score = (float)num(cJSON_GetObjectItem(in, "score")),
                .track = trk >= 0 && trk < pr->n_tracks ? (int)trk : -1,
                .tracking_score = (float)num(cJSON_GetObjectItem(in, "tracking_score")),
                .class_index = -1};
            const cJSON *c = cJSON_GetObjectItem(in, "centroid");
            if (cJSON_IsArray(c)) {
                d->has_centroid = true;
                d->centroid[0] = (float)num(cJSON_GetArrayItem(c, 0));
                d->centroid[1] = (float)num(cJSON_GetArrayItem(c, 1));
            }
            const cJSON *pts = cJSON_GetObjectItem(in, "points");
            const cJSON *sc = cJSON_GetObjectItem(in, "point_scores");
            if (cJSON_GetArraySize(pts) != N) {
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: an instance has %d points, not %lld",
                                  path, cJSON_GetArraySize(pts), (long long)N);
                break;
            }
            for (int64_t n = 0; n < N; n++) {
                const cJSON *p = cJSON_GetArrayItem(pts, (int)n);
                float *xy = pr->points + (pr->n_insts * N + n) * 2;
                xy[0] = cJSON_IsArray(p) ? (float)num(cJSON_GetArrayItem(p, 0)) : NAN;
                xy[1] = cJSON_IsArray(p) ? (float)num(cJSON_GetArrayItem(p, 1)) : NAN;
                pr->point_scores[pr->n_insts * N + n] = (float)num(cJSON_GetArrayItem(sc, (int)n));
            }
            pr->n_insts++;
        }
        f->n = pr->n_insts - f->first;
    }
    cJSON_Delete(root);
    return st;
}

sleapc_status sleapc__predictions_load(const char *path, sleapc_predictions *pr,
                                       int64_t *n_user_frames)
{
    if (!path || !pr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "load predictions: no path");
    if (n_user_frames)
        *n_user_frames = 0;
    sleapc_status st;
    if (ends_with(path, ".json"))
        st = load_json(path, pr);
    else if (ends_with(path, ".slp"))
        st = load_slp(path, pr, n_user_frames);
    else
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "%s: predictions to track must be a .slp or sleapc .json file", path);
    if (st)
        sleapc__predictions_free(pr);
    return st;
}
