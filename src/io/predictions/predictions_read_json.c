/* Predictions from sleapc's own JSON (the "sleapc-predictions" format that
 * io/json/predictions_json.c writes). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/predictions/predictions_read_impl.h"

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* n node pairs, each naming one of n_nodes nodes. */
static sleapc_status json_pairs(const cJSON *arr, int (*dst)[2], int n, int n_nodes)
{
    for (int i = 0; i < n; i++) {
        const cJSON *p = cJSON_GetArrayItem(arr, i);
        if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2)
            return SLEAPC_ERR_FORMAT;
        for (int j = 0; j < 2; j++) {
            const cJSON *v = cJSON_GetArrayItem(p, j);
            if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < n_nodes))
                return SLEAPC_ERR_FORMAT;
            dst[i][j] = v->valueint;
        }
    }
    return SLEAPC_OK;
}

static sleapc_status dup_string(const cJSON *v, char **out)
{
    *out = sleapc__strdup(cJSON_IsString(v) ? v->valuestring : "");
    return *out ? SLEAPC_OK : sleapc__pred_read_nomem();
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
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: skeleton nodes, videos or frames missing",
                            path);
    int64_t n_insts = 0;
    const cJSON *f, *it;
    cJSON_ArrayForEach(f, frames)
    {
        n_insts += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f, "instances"));
    }
    sleapc_status st =
        sleapc__pred_read_alloc(pr, cJSON_GetArraySize(nodes), cJSON_GetArraySize(edges),
                                cJSON_GetArraySize(syms), cJSON_GetArraySize(tracks),
                                cJSON_GetArraySize(videos), cJSON_GetArraySize(frames), n_insts);
    if (!st)
        st = dup_string(cJSON_GetObjectItemCaseSensitive(sk, "name"), &pr->skeleton_name);
    for (int i = 0; !st && i < pr->n_nodes; i++)
        st = dup_string(cJSON_GetArrayItem(nodes, i), &pr->node_names[i]);
    for (int i = 0; !st && i < pr->n_tracks; i++)
        st = dup_string(cJSON_GetArrayItem(tracks, i), &pr->track_names[i]);
    if (!st && (json_pairs(edges, pr->edges, pr->n_edges, pr->n_nodes) ||
                json_pairs(syms, pr->symmetries, pr->n_symmetries, pr->n_nodes)))
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
            const cJSON *pts = cJSON_GetObjectItemCaseSensitive(it, "points");
            const cJSON *scs = cJSON_GetObjectItemCaseSensitive(it, "point_scores");
            if (cJSON_GetArraySize(pts) != pr->n_nodes) {
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: an instance has %d points, not %d", path,
                                  cJSON_GetArraySize(pts), pr->n_nodes);
                break;
            }
            int64_t q = pr->n_insts++;
            sleapc_pred_instance *o = &pr->insts[q];
            const cJSON *track = cJSON_GetObjectItemCaseSensitive(it, "track");
            const cJSON *cls = cJSON_GetObjectItemCaseSensitive(it, "class");
            const cJSON *cen = cJSON_GetObjectItemCaseSensitive(it, "centroid");
            o->score = (float)num(it, "score", NAN);
            o->track = cJSON_IsNumber(track) ? track->valueint : -1;
            if (o->track < -1 || o->track >= pr->n_tracks) {
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: an instance names track %d of %d", path,
                                  o->track, pr->n_tracks);
                break;
            }
            o->tracking_score = (float)num(it, "tracking_score", NAN);
            o->class_index = cJSON_IsNumber(cls) ? cls->valueint : -1;
            pr->multiclass = pr->multiclass || cls != NULL;
            o->has_centroid = cJSON_IsArray(cen) && cJSON_GetArraySize(cen) == 2;
            if (o->has_centroid) {
                o->centroid[0] = (float)cJSON_GetArrayItem(cen, 0)->valuedouble;
                o->centroid[1] = (float)cJSON_GetArrayItem(cen, 1)->valuedouble;
            }
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
        if (!st && (d->video < 0 || d->video >= pr->n_videos || d->frame_idx < 0))
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: frame %lld names a bad video or index", path,
                              (long long)(pr->n_frames - 1));
    }
    return st;
}

sleapc_status sleapc__pred_read_json(const char *path, sleapc_predictions *pr,
                                     int64_t *n_user_frames)
{
    (void)n_user_frames; /* the format holds predictions only */
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
        return text ? sleapc__fail(SLEAPC_ERR_IO, "%s: cannot read", path)
                    : sleapc__pred_read_nomem();
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
