/* The sleapc-predictions JSON format (docs/cli.md, "Output formats"): missing values
 * are null, every processed frame appears, instances in the layer's order. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "io/json/predictions_json.h"
#include "io/slp/slp_json.h"

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

/* A file name as JSON. cJSON writes its bytes as they are, so a name that
 * is not UTF-8 would make the file invalid JSON; such a name is written with
 * each stray byte as \udc80..\udcff, as Python's json.dumps writes a name
 * decoded with surrogateescape (json.loads then os.fsencode give the bytes
 * back). */
static void add_filename(cJSON *o, const char *name)
{
    sleapc_json_text t = {0};
    sleapc__json_put_string(&t, name ? name : "");
    char *lit = sleapc__json_take(&t);
    if (lit && strstr(lit, "\\udc"))
        cJSON_AddItemToObject(o, "filename", cJSON_CreateRaw(lit));
    else
        cJSON_AddStringToObject(o, "filename", name ? name : "");
    sleapc__free(lit);
}

/* Prints o (consumed) without its last n_cut characters. */
static bool put_json(cJSON *o, size_t n_cut, FILE *f)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return false;
    size_t n = strlen(text);
    n = n > n_cut ? n - n_cut : 0;
    bool ok = fwrite(text, 1, n, f) == n;
    cJSON_free(text);
    return ok;
}

/* Everything but the frames, ending in "frames":[] (the last member). */
static cJSON *header_json(const sleapc_predictions *pr)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
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
        add_filename(o, v->filename);
        cJSON_AddNumberToObject(o, "frames", (double)v->n_frames);
        cJSON_AddNumberToObject(o, "height", (double)v->height);
        cJSON_AddNumberToObject(o, "width", (double)v->width);
        cJSON_AddNumberToObject(o, "channels", (double)v->channels);
        cJSON_AddItemToArray(videos, o);
    }
    cJSON_AddItemToObject(root, "tracks",
                          cJSON_CreateStringArray((const char *const *)pr->track_names, pr->n_tracks));
    cJSON_AddArrayToObject(root, "frames");
    return root;
}

static cJSON *frame_json(const sleapc_predictions *pr, int64_t k)
{
    const sleapc_pred_frame *fr = &pr->frames[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "video", fr->video);
    cJSON_AddNumberToObject(o, "frame_idx", (double)fr->frame_idx);
    cJSON *insts = cJSON_AddArrayToObject(o, "instances");
    for (int64_t i = 0; i < fr->n; i++)
        cJSON_AddItemToArray(insts, instance_json(pr, fr->first + i));
    return o;
}

sleapc_status sleapc__predictions_write_json(const sleapc_predictions *pr, FILE *f)
{
    sleapc_results_memory m;
    sleapc_results_source src;
    sleapc__results_source_memory(pr, &m, &src);
    return sleapc__predictions_write_json_from(pr, &src, f);
}

/* The text is what printing one whole tree gives: the header up to
 * "frames":[, the frames one by one, then ]}. */
sleapc_status sleapc__predictions_write_json_from(const sleapc_predictions *head,
                                                  sleapc_results_source *src, FILE *f)
{
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    if (st)
        return st;
    if (!put_json(header_json(head), 2, f))
        return sleapc__fail(ferror(f) ? SLEAPC_ERR_IO : SLEAPC_ERR_NOMEM,
                            ferror(f) ? "cannot write the JSON text"
                                      : "out of memory while formatting JSON");
    bool first = true;
    while (b->n_frames > 0) {
        for (int64_t k = 0; k < b->n_frames; k++) {
            if ((!first && fputc(',', f) == EOF) || !put_json(frame_json(b, k), 0, f))
                return sleapc__fail(ferror(f) ? SLEAPC_ERR_IO : SLEAPC_ERR_NOMEM,
                                    ferror(f) ? "cannot write the JSON text"
                                              : "out of memory while formatting JSON");
            first = false;
        }
        if ((st = src->next(src->ctx, &b)))
            return st;
    }
    if (fputs("]}\n", f) == EOF || ferror(f))
        return sleapc__fail(SLEAPC_ERR_IO, "cannot write the JSON text");
    return SLEAPC_OK;
}
