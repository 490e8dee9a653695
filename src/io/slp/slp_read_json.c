/* Decoding the JSON stored in .slp files: the metadata skeletons (node-link
 * graphs over a global node list, formats D.2), video descriptions (D.3),
 * tracks and suggestions. Mirrors sleap-io read_skeletons / make_video. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/slp/slp_json.h"
#include "io/slp/slp_read_impl.h"

#define FAIL_FORMAT(...) sleapc__fail(SLEAPC_ERR_FORMAT, "read labels: %s: " __VA_ARGS__)

static sleapc_status nomem(const sleapc_slp *r)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", r->path);
}

/* A JSON number that is an integer in [lo, hi]. */
static bool get_int(const cJSON *j, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    double v = j->valuedouble;
    if (!(v >= lo && v <= hi) || floor(v) != v)
        return false;
    *out = (int64_t)v;
    return true;
}

static char *dup_string(const cJSON *j)
{
    return sleapc__strdup(cJSON_IsString(j) && j->valuestring ? j->valuestring : "");
}

/* ---- Skeletons -------------------------------------------------------- */

typedef struct link {
    int src, dst;  /* skeleton-local node indices */
    int type;      /* 1 body edge, 2 symmetry */
    int64_t order; /* edge_insert_idx, or a large number after them */
} link;

static int cmp_links(const void *a, const void *b)
{
    const link *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* EdgeType of one link: {"py/reduce": [{"py/type": ...}, {"py/tuple": [t]}]}
 * defines a type, {"py/id": n} refers to the n-th type defined in this
 * skeleton (formats D.2: decode by definition order, not by value). */
static bool link_type(const cJSON *type, int *defined, int *n_defined, int *out)
{
    const cJSON *red = cJSON_GetObjectItemCaseSensitive(type, "py/reduce");
    if (cJSON_IsArray(red)) {
        const cJSON *tup = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(red, 1), "py/tuple");
        int64_t t;
        if (!get_int(cJSON_GetArrayItem(tup, 0), 0, 1000, &t))
            return false;
        if (*n_defined < 64)
            defined[(*n_defined)++] = (int)t;
        *out = (int)t;
        return true;
    }
    int64_t id;
    if (!get_int(cJSON_GetObjectItemCaseSensitive(type, "py/id"), 1, *n_defined, &id))
        return false;
    *out = defined[id - 1];
    return true;
}

static bool has_symmetry(const sleapc_slp_skeleton *s, int a, int b)
{
    for (int i = 0; i < s->n_symmetries; i++)
        if ((s->symmetries[i][0] == a && s->symmetries[i][1] == b) ||
            (s->symmetries[i][0] == b && s->symmetries[i][1] == a))
            return true;
    return false;
}

static sleapc_status parse_links(sleapc_slp *r, int k, const cJSON *links, const int *ids,
                                 sleapc_slp_skeleton *s)
{
    int n = cJSON_GetArraySize(links);
    link *ls = sleapc__calloc((size_t)n + 1, sizeof *ls);
    s->edges = sleapc__calloc((size_t)n + 1, sizeof *s->edges);
    s->symmetries = sleapc__calloc((size_t)n + 1, sizeof *s->symmetries);
    if (!ls || !s->edges || !s->symmetries) {
        sleapc__free(ls);
        return nomem(r);
    }
    int defined[64], n_defined = 0, n_ls = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *l = cJSON_GetArrayItem(links, i);
        int64_t src, dst, order = INT64_MAX / 2 + i;
        int type = 0;
        if (!get_int(cJSON_GetObjectItemCaseSensitive(l, "source"), 0, 1e9, &src) ||
            !get_int(cJSON_GetObjectItemCaseSensitive(l, "target"), 0, 1e9, &dst) ||
            !link_type(cJSON_GetObjectItemCaseSensitive(l, "type"), defined, &n_defined, &type)) {
            sleapc__free(ls);
            return FAIL_FORMAT("skeleton %d: link %d: bad source, target or type", r->path, k, i);
        }
        get_int(cJSON_GetObjectItemCaseSensitive(l, "edge_insert_idx"), 0, 1e15, &order);
        /* Links name global node ids; map them to this skeleton's order. */
        int a = -1, b = -1;
        for (int j = 0; j < s->n_nodes; j++) {
            if (ids[j] == src)
                a = j;
            if (ids[j] == dst)
                b = j;
        }
        if (a < 0 || b < 0) {
            sleapc__free(ls);
            return FAIL_FORMAT("skeleton %d: link %d names a node outside the skeleton", r->path, k,
                               i);
        }
        ls[n_ls++] = (link){a, b, type, order};
    }
    /* SLEAP's Skeleton.edges lists body edges by insertion index; links
     * are stored in graph-iteration order. qsort is not stable, but the
     * order key is unique (the index, or the position after them). */
    qsort(ls, (size_t)n_ls, sizeof *ls, cmp_links);
    for (int i = 0; i < n_ls; i++) {
        if (ls[i].type == 1) {
            s->edges[s->n_edges][0] = ls[i].src;
            s->edges[s->n_edges++][1] = ls[i].dst;
        } else if (ls[i].type == 2 && !has_symmetry(s, ls[i].src, ls[i].dst)) {
            /* Old SLEAP files store each symmetry in both directions. */
            s->symmetries[s->n_symmetries][0] = ls[i].src;
            s->symmetries[s->n_symmetries++][1] = ls[i].dst;
        }
    }
    sleapc__free(ls);
    return SLEAPC_OK;
}

static sleapc_status parse_skeleton(sleapc_slp *r, int k, const cJSON *sk, char **global,
                                    int n_global, sleapc_slp_skeleton *s)
{
    /* Newer files wrap the graph: {"description", "nx_graph", "preview_image"}. */
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(sk, "nx_graph");
    if (cJSON_IsObject(g))
        sk = g;
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(sk, "graph");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(sk, "nodes");
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(sk, "links");
    if (!cJSON_IsArray(nodes) || (links && !cJSON_IsArray(links)))
        return FAIL_FORMAT("skeleton %d: no node list", r->path, k);
    if (!(s->name = dup_string(cJSON_GetObjectItemCaseSensitive(graph, "name"))))
        return nomem(r);
    s->n_nodes = cJSON_GetArraySize(nodes);
    s->node_names = sleapc__calloc((size_t)s->n_nodes + 1, sizeof *s->node_names);
    int *ids = sleapc__calloc((size_t)s->n_nodes + 1, sizeof *ids);
    if (!s->node_names || !ids) {
        sleapc__free(ids);
        return nomem(r);
    }
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; !st && i < s->n_nodes; i++) {
        int64_t id;
        const cJSON *jn = cJSON_GetArrayItem(nodes, i);
        /* Node k of the skeleton is global node "id" (point rows follow). */
        if (!get_int(cJSON_GetObjectItemCaseSensitive(jn, "id"), 0, n_global - 1, &id))
            st = FAIL_FORMAT("skeleton %d: node %d: id is not an index into the %d nodes", r->path,
                             k, i, n_global);
        else if (!(s->node_names[i] = sleapc__strdup(global[id])))
            st = nomem(r);
        else
            ids[i] = (int)id;
    }
    if (!st)
        st = parse_links(r, k, links, ids, s);
    sleapc__free(ids);
    return st;
}

static sleapc_status parse_provenance(sleapc_slp *r, const cJSON *prov)
{
    char *text = cJSON_IsObject(prov) ? cJSON_PrintUnformatted(prov) : NULL;
    r->provenance = sleapc__strdup(text ? text : "{}");
    if (text)
        cJSON_free(text);
    return r->provenance ? SLEAPC_OK : nomem(r);
}

sleapc_status sleapc__slp_parse_metadata(sleapc_slp *r, const char *json)
{
    cJSON *root = cJSON_Parse(json);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return FAIL_FORMAT("/metadata json: not a JSON object", r->path);
    }
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    const cJSON *skels = cJSON_GetObjectItemCaseSensitive(root, "skeletons");
    int n_global = cJSON_IsArray(nodes) ? cJSON_GetArraySize(nodes) : 0;
    char **global = sleapc__calloc((size_t)n_global + 1, sizeof *global);
    sleapc_status st = global ? SLEAPC_OK : nomem(r);
    for (int i = 0; !st && i < n_global; i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, i), "name");
        if (!cJSON_IsString(name))
            st = FAIL_FORMAT("/metadata json: node %d has no name", r->path, i);
        else if (!(global[i] = dup_string(name)))
            st = nomem(r);
    }
    if (!st && skels && !cJSON_IsArray(skels))
        st = FAIL_FORMAT("/metadata json: skeletons is not a list", r->path);
    if (!st) {
        int n = cJSON_GetArraySize(skels);
        r->skeletons = sleapc__calloc((size_t)n + 1, sizeof *r->skeletons);
        st = r->skeletons ? SLEAPC_OK : nomem(r);
        for (int k = 0; !st && k < n; k++) {
            r->n_skeletons = k + 1;
            st = parse_skeleton(r, k, cJSON_GetArrayItem(skels, k), global, n_global,
                                &r->skeletons[k]);
        }
    }
    if (!st)
        st = parse_provenance(r, cJSON_GetObjectItemCaseSensitive(root, "provenance"));
    for (int i = 0; global && i < n_global; i++)
        sleapc__free(global[i]);
    sleapc__free(global);
    cJSON_Delete(root);
    return st;
}

/* ---- Videos, tracks, suggestions --------------------------------------- */

static int64_t int_or(const cJSON *j, int64_t fallback)
{
    int64_t v;
    return get_int(j, 0, 9e15, &v) ? v : fallback;
}

sleapc_status sleapc__slp_parse_video(sleapc_slp *r, int index, const char *json,
                                      sleapc_slp_video *v)
{
    v->n_frames = v->height = v->width = v->channels = -1;
    v->grayscale = -1;
    /* A file name that is not UTF-8 is stored escaped (surrogateescape);
     * its bytes come back here. */
    char *raw = sleapc__json_surrogate_bytes(json);
    if (!raw)
        return nomem(r);
    cJSON *root = cJSON_Parse(raw);
    sleapc__free(raw);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return FAIL_FORMAT("/videos_json[%d]: not a JSON object", r->path, index);
    }
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(root, "backend");
    if (!cJSON_IsObject(be))
        be = root;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(be, "filename");
    if (!cJSON_IsString(name))
        name = cJSON_GetObjectItemCaseSensitive(root, "filename");
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(be, "dataset");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(be, "filenames");
    v->filename = dup_string(name);
    v->backend_type = dup_string(cJSON_GetObjectItemCaseSensitive(be, "type"));
    bool ok = v->filename && v->backend_type;
    if (ok && cJSON_IsString(ds) && ds->valuestring && ds->valuestring[0])
        ok = (v->dataset = dup_string(ds)) != NULL;
    if (ok && cJSON_IsArray(files)) {
        int n = cJSON_GetArraySize(files);
        v->filenames = sleapc__calloc((size_t)n + 1, sizeof *v->filenames);
        ok = v->filenames != NULL;
        for (int i = 0; ok && i < n; i++) {
            ok = (v->filenames[i] = dup_string(cJSON_GetArrayItem(files, i))) != NULL;
            v->n_filenames = i + 1;
        }
        v->n_frames = n;
    }
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(be, "shape");
    if (cJSON_IsArray(shape) && cJSON_GetArraySize(shape) == 4) {
        v->n_frames = int_or(cJSON_GetArrayItem(shape, 0), -1);
        v->height = int_or(cJSON_GetArrayItem(shape, 1), -1);
        v->width = int_or(cJSON_GetArrayItem(shape, 2), -1);
        v->channels = int_or(cJSON_GetArrayItem(shape, 3), -1);
    } else {
        /* Image sequences cache their size as height_/width_/channels_. */
        v->height = int_or(cJSON_GetObjectItemCaseSensitive(be, "height_"), -1);
        v->width = int_or(cJSON_GetObjectItemCaseSensitive(be, "width_"), -1);
        v->channels = int_or(cJSON_GetObjectItemCaseSensitive(be, "channels_"), -1);
    }
    const cJSON *fps = cJSON_GetObjectItemCaseSensitive(be, "fps");
    if (cJSON_IsNumber(fps) && fps->valuedouble > 0 && fps->valuedouble <= 1e6)
        v->fps = fps->valuedouble;
    const cJSON *gray = cJSON_GetObjectItemCaseSensitive(be, "grayscale");
    if (cJSON_IsBool(gray))
        v->grayscale = cJSON_IsTrue(gray);
    else if (v->channels > 0)
        v->grayscale = v->channels == 1;
    cJSON_Delete(root);
    return ok ? SLEAPC_OK : nomem(r);
}

sleapc_status sleapc__slp_parse_track(sleapc_slp *r, int index, const char *json, char **name)
{
    *name = NULL;
    cJSON *root = cJSON_Parse(json);
    const cJSON *n = cJSON_GetArrayItem(root, 1);
    sleapc_status st = SLEAPC_OK;
    if (!cJSON_IsArray(root) || !cJSON_IsString(n))
        st = FAIL_FORMAT("/tracks_json[%d]: not [spawned_on, \"name\"]", r->path, index);
    else if (!(*name = dup_string(n)))
        st = nomem(r);
    cJSON_Delete(root);
    return st;
}

sleapc_status sleapc__slp_parse_suggestion(sleapc_slp *r, int index, const char *json,
                                           sleapc_slp_suggestion *s)
{
    cJSON *root = cJSON_Parse(json);
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(root, "video");
    int64_t video = -1, frame = -1;
    /* The video index is stored as a string ("0"); accept a number too. */
    if (cJSON_IsString(jv) && jv->valuestring) {
        char *end = NULL;
        long long x = strtoll(jv->valuestring, &end, 10);
        if (end && end != jv->valuestring && !*end && x >= 0 && x < r->n_videos)
            video = x;
    } else {
        get_int(jv, 0, r->n_videos - 1, &video);
    }
    get_int(cJSON_GetObjectItemCaseSensitive(root, "frame_idx"), 0, 9e15, &frame);
    cJSON_Delete(root);
    if (video < 0 || frame < 0)
        return FAIL_FORMAT("/suggestions_json[%d]: bad video or frame_idx", r->path, index);
    s->video = (int)video;
    s->frame_idx = frame;
    return SLEAPC_OK;
}
