/* The sleapc-predictions JSON format (README "Output formats"): missing values
 * are null, every processed frame appears, instances in the layer's order. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/results.h"

/* A float, or null when it is NaN/inf (JSON has no NaN). */
static cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *pair(double a, double b)
{
    cJSON *arr = cJSON_CreateArray();
    if (arr) {
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(a));
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(b));
    }
    return arr;
}

static cJSON *int_pairs(const int (*v)[2], int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        cJSON_AddItemToArray(arr, pair(v[i][0], v[i][1]));
    return arr;
}

static cJSON *instance_json(const sleapc_predictions *pr, int64_t k)
{
    const sleapc_pred_instance *in = &pr->insts[k];
    const float *pts = pr->points + k * pr->n_nodes * 2;
    const float *sc = pr->point_scores + k * pr->n_nodes;
    cJSON *o = cJSON_CreateObject();
    cJSON *points = cJSON_AddArrayToObject(o, "points");
    cJSON *scores = cJSON_AddArrayToObject(o, "point_scores");
    for (int n = 0; n < pr->n_nodes; n++) {
        bool missing = isnan(pts[2 * n]) || isnan(pts[2 * n + 1]);
        cJSON_AddItemToArray(points, missing ? cJSON_CreateNull() : pair(pts[2 * n], pts[2 * n + 1]));
        cJSON_AddItemToArray(scores, missing ? cJSON_CreateNull() : num_or_null(sc[n]));
    }
    cJSON_AddItemToObject(o, "score", num_or_null(in->score));
    cJSON_AddItemToObject(o, "track", in->track >= 0 ? cJSON_CreateNumber(in->track) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "tracking_score", num_or_null(in->tracking_score));
    if (in->has_centroid)
        cJSON_AddItemToObject(o, "centroid", pair(in->centroid[0], in->centroid[1]));
    if (pr->multiclass)
        cJSON_AddItemToObject(o, "class", in->class_index >= 0 ? cJSON_CreateNumber(in->class_index)
                                                              : cJSON_CreateNull());
    return o;
}

sleapc_status sleapc__predictions_write_json(const sleapc_predictions *pr, FILE *f)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    cJSON_AddStringToObject(root, "format", "sleapc-predictions");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON *sk = cJSON_AddObjectToObject(root, "skeleton");
    cJSON_AddStringToObject(sk, "name", pr->skeleton_name ? pr->skeleton_name : "");
    cJSON_AddItemToObject(sk, "nodes",
                          cJSON_CreateStringArray((const char *const *)pr->node_names, pr->n_nodes));
    cJSON_AddItemToObject(sk, "edges", int_pairs((const int(*)[2])pr->edges, pr->n_edges));
    cJSON_AddItemToObject(sk, "symmetries",
                          int_pairs((const int(*)[2])pr->symmetries, pr->n_symmetries));
    cJSON *videos = cJSON_AddArrayToObject(root, "videos");
    for (int i = 0; i < pr->n_videos; i++) {
        const sleapc_pred_video *v = &pr->videos[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "filename", v->filename);
        cJSON_AddNumberToObject(o, "frames", (double)v->n_frames);
        cJSON_AddNumberToObject(o, "height", (double)v->height);
        cJSON_AddNumberToObject(o, "width", (double)v->width);
        cJSON_AddNumberToObject(o, "channels", (double)v->channels);
        cJSON_AddItemToArray(videos, o);
    }
    cJSON_AddItemToObject(root, "tracks",
                          cJSON_CreateStringArray((const char *const *)pr->track_names, pr->n_tracks));
    cJSON *frames = cJSON_AddArrayToObject(root, "frames");
    for (int64_t k = 0; k < pr->n_frames; k++) {
        const sleapc_pred_frame *fr = &pr->frames[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "video", fr->video);
        cJSON_AddNumberToObject(o, "frame_idx", (double)fr->frame_idx);
        cJSON *insts = cJSON_AddArrayToObject(o, "instances");
        for (int64_t i = 0; i < fr->n; i++)
            cJSON_AddItemToArray(insts, instance_json(pr, fr->first + i));
        cJSON_AddItemToArray(frames, o);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory while formatting JSON");
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && fputc('\n', f) != EOF;
    cJSON_free(text);
    return ok ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_IO, "cannot write the JSON text");
}
