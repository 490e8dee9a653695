/* Metadata, video and track JSON for a predictions .slp, key for key and in
 * the order sleap-io 0.9.5 writes them (serialize_skeletons, write_metadata,
 * video_to_dict, write_tracks), with compact separators. */
#include "io/slp/slp_write_json.h"

#include <ctype.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/slp/slp_json.h"

static const char *edge_type_def =
    "{\"py/reduce\":[{\"py/type\":\"sleap.skeleton.EdgeType\"},{\"py/tuple\":[%d]}]}";

static void put_skeleton(sleapc_json_text *t, const sleapc_predictions *pr)
{
    sleapc__json_put(t, "{\"directed\":true,\"graph\":{\"name\":");
    sleapc__json_put_string(t, pr->skeleton_name);
    sleapc__json_putf(t, ",\"num_edges_inserted\":%d},\"links\":[", pr->n_edges);
    /* Body edges first, numbered by insertion; the first spells out the
     * EdgeType (1 = body) and later ones refer back to it as py/id 1. */
    for (int i = 0; i < pr->n_edges; i++) {
        sleapc__json_putf(t,
                          "%s{\"edge_insert_idx\":%d,\"key\":0,\"source\":%d,\"target\":%d,"
                          "\"type\":",
                          i ? "," : "", i, pr->edges[i][0], pr->edges[i][1]);
        if (i == 0)
            sleapc__json_putf(t, edge_type_def, 1);
        else
            sleapc__json_put(t, "{\"py/id\":1}");
        sleapc__json_put(t, "}");
    }
    /* Then symmetries, without an insertion index (EdgeType 2, py/id 2). */
    for (int i = 0; i < pr->n_symmetries; i++) {
        sleapc__json_putf(t, "%s{\"key\":0,\"source\":%d,\"target\":%d,\"type\":",
                          i || pr->n_edges ? "," : "", pr->symmetries[i][0], pr->symmetries[i][1]);
        if (i == 0)
            sleapc__json_putf(t, edge_type_def, 2);
        else
            sleapc__json_put(t, "{\"py/id\":2}");
        sleapc__json_put(t, "}");
    }
    sleapc__json_put(t, "],\"multigraph\":true,\"nodes\":[");
    for (int i = 0; i < pr->n_nodes; i++)
        sleapc__json_putf(t, "%s{\"id\":%d}", i ? "," : "", i);
    sleapc__json_put(t, "]}");
}

sleapc_status sleapc__slp_metadata_json(const sleapc_predictions *pr, char **out)
{
    *out = NULL;
    sleapc_json_text t = {0};
    sleapc__json_put(&t, "{\"version\":\"2.0.0\",\"skeletons\":[");
    put_skeleton(&t, pr);
    /* One skeleton, so the global node list is its nodes in order. */
    sleapc__json_put(&t, "],\"nodes\":[");
    for (int i = 0; i < pr->n_nodes; i++) {
        sleapc__json_put(&t, i ? ",{\"name\":" : "{\"name\":");
        sleapc__json_put_string(&t, pr->node_names[i]);
        sleapc__json_put(&t, ",\"weight\":1.0}");
    }
    sleapc__json_put(&t, "],\"videos\":[],\"tracks\":[],\"suggestions\":[],"
                         "\"negative_anchors\":{},\"provenance\":");
    sleapc_status st = sleapc__json_put_object_text(&t, pr->provenance);
    sleapc__json_put(&t, "}");
    if (!st)
        st = sleapc__json_status(&t, "metadata JSON");
    if (st) {
        sleapc__json_free(&t);
        return st;
    }
    *out = sleapc__json_take(&t);
    return SLEAPC_OK;
}

/* scheme://...: a stream's URL, which is not a path. */
static bool is_url(const char *s)
{
    const char *sep = strstr(s, "://");
    if (!sep || sep == s)
        return false;
    for (const char *c = s; c < sep; c++)
        if (!isalnum((unsigned char)*c) && *c != '+' && *c != '-' && *c != '.')
            return false;
    return true;
}

/* sleap-io sanitize_filename: POSIX separators. Also drops repeated
 * slashes, as pathlib does; a live source's URL is kept as given (its "//"
 * is not a path's). */
static char *sanitize_filename(const char *name)
{
    char *s = sleapc__strdup(name ? name : "");
    if (!s || is_url(s))
        return s;
    size_t j = 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i] == '\\' ? '/' : s[i];
        if (c == '/' && j > 0 && s[j - 1] == '/')
            continue;
        s[j++] = c;
    }
    s[j] = '\0';
    return s;
}

/* The original video a package recorded, as "source_video" (sleap-io keeps
 * it beside a reference to the package); left out unless it is a JSON
 * object. */
static void put_source_video(sleapc_json_text *t, const char *source_json, const char *c,
                             const char *k)
{
    sleapc_json_text src = {0};
    if (source_json && !sleapc__json_put_object_text(&src, source_json) &&
        !sleapc__json_status(&src, "source video JSON")) {
        char *text = sleapc__json_take(&src);
        sleapc__json_putf(t, "%s\"source_video\"%s", c, k);
        sleapc__json_put(t, text);
        sleapc__free(text);
    }
    sleapc__json_free(&src);
    sleapc__clear_error();
}

sleapc_status sleapc__slp_video_json(const sleapc_pred_video *v, bool backend_only, bool spaced,
                                     char **out)
{
    *out = NULL;
    const char *c = spaced ? ", " : ",", *k = spaced ? ": " : ":";
    char *name = sanitize_filename(v->filename);
    if (!name)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "format video JSON: out of memory");
    /* Frames embedded in a package: sleap-io's HDF5Video pointing at it. */
    bool in_package = v->dataset && v->dataset[0];
    sleapc_json_text t = {0};
    if (!backend_only) {
        sleapc__json_putf(&t, "{\"filename\"%s", k);
        sleapc__json_put_string(&t, name);
        sleapc__json_putf(&t, "%s\"backend\"%s", c, k);
    }
    sleapc__json_putf(&t, "{\"type\"%s\"%s\"%s\"shape\"%s", k,
                      in_package ? "HDF5Video" : "MediaVideo", c, k);
    /* video.shape is (frames, height, width, channels), null when unknown. */
    if (v->n_frames > 0 && v->height > 0 && v->width > 0 && v->channels > 0)
        sleapc__json_putf(&t, "[%lld%s%lld%s%lld%s%lld]", (long long)v->n_frames, c,
                          (long long)v->height, c, (long long)v->width, c, (long long)v->channels);
    else
        sleapc__json_put(&t, "null");
    sleapc__json_putf(&t, "%s\"filename\"%s", c, k);
    sleapc__json_put_string(&t, name);
    const char *gray = v->channels == 1 ? "true" : v->channels > 1 ? "false" : "null";
    sleapc_json_text fps = {0};
    if (v->fps > 0)
        sleapc__json_put_double(&fps, v->fps);
    else
        sleapc__json_put(&fps, "null");
    if (in_package) {
        sleapc__json_putf(&t, "%s\"dataset\"%s", c, k);
        sleapc__json_put_string(&t, v->dataset);
        sleapc__json_putf(&t,
                          "%s\"input_format\"%s\"channels_last\"%s\"convert_range\"%sfalse"
                          "%s\"has_embedded_images\"%strue%s\"grayscale\"%s%s%s\"fps\"%s%s}",
                          c, k, c, k, c, k, c, k, gray, c, k, fps.s ? fps.s : "null");
    } else {
        sleapc__json_putf(&t, "%s\"grayscale\"%s%s", c, k, gray);
        sleapc__json_putf(&t,
                          "%s\"bgr\"%strue%s\"dataset\"%s\"\"%s\"input_format\"%s\"\"%s\"fps\"%s%s}",
                          c, k, c, k, c, k, c, k, fps.s ? fps.s : "null");
    }
    if (!backend_only) {
        if (in_package)
            put_source_video(&t, v->source_json, c, k);
        sleapc__json_put(&t, "}");
    }
    sleapc__free(name);
    sleapc_status st = sleapc__json_status(&fps, "video JSON");
    if (!st)
        st = sleapc__json_status(&t, "video JSON");
    sleapc__json_free(&fps);
    if (st) {
        sleapc__json_free(&t);
        return st;
    }
    *out = sleapc__json_take(&t);
    return SLEAPC_OK;
}

sleapc_status sleapc__slp_track_json(const char *name, char **out)
{
    *out = NULL;
    sleapc_json_text t = {0};
    sleapc__json_put(&t, "[0,");
    sleapc__json_put_string(&t, name ? name : "");
    sleapc__json_put(&t, "]");
    sleapc_status st = sleapc__json_status(&t, "track JSON");
    if (st) {
        sleapc__json_free(&t);
        return st;
    }
    *out = sleapc__json_take(&t);
    return SLEAPC_OK;
}
