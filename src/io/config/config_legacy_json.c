/* Legacy SLEAP 1.x training_config.json -> sleapc_model_config. The mapping
 * follows sleap-nn's TrainingJobConfig.load_sleap_config (config/model_config.py
 * model_mapper, config/data_config.py data_mapper); the skeleton decoding
 * follows sleap-io's SkeletonDecoder (formats.md C.6). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/config/model_config.h"

/* A training config is tens of KB; the cap only stops a hostile file from
 * making us read gigabytes. */
#define JSON_MAX_BYTES (64u << 20)
/* Skeletons and class lists are tens of names; the cap keeps the quadratic
 * name lookups of a hostile file cheap. */
#define NAMES_MAX 10000

typedef struct reader {
    const char *path;
    sleapc_model_config *cfg;
} reader;

/* "read config: <file>: <key>: <reason>" */
static sleapc_status fail_at(const reader *r, sleapc_status st, const char *key, const char *fmt,
                             ...) __attribute__((format(printf, 4, 5)));

static sleapc_status fail_at(const reader *r, sleapc_status st, const char *key, const char *fmt,
                             ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return sleapc__fail(st, "read config: %s: %s: %s", r->path, key, why);
}

static sleapc_status nomem(const reader *r)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read config: %s: out of memory", r->path);
}

static const char *kind_name(const cJSON *v)
{
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "a list";
    if (cJSON_IsObject(v))
        return "an object";
    return "null";
}

/* obj[key], or NULL when absent or null. obj may be NULL. */
static const cJSON *get(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* The "a.b" spelling of a key for messages. */
static const char *key_path(char *buf, size_t cap, const char *parent, const char *key)
{
    if (parent && parent[0])
        snprintf(buf, cap, "%s.%s", parent, key);
    else
        snprintf(buf, cap, "%s", key);
    return buf;
}

/* An optional object member: absent/null -> *out NULL. */
static sleapc_status get_object(const reader *r, const cJSON *obj, const char *parent,
                                const char *key, const cJSON **out)
{
    char kp[256];
    *out = get(obj, key);
    if (*out && !cJSON_IsObject(*out))
        return fail_at(r, SLEAPC_ERR_FORMAT, key_path(kp, sizeof kp, parent, key),
                       "expected an object, got %s", kind_name(*out));
    return SLEAPC_OK;
}

static sleapc_status require_object(const reader *r, const cJSON *obj, const char *parent,
                                    const char *key, const cJSON **out)
{
    char kp[256];
    sleapc_status st = get_object(r, obj, parent, key, out);
    if (!st && !*out)
        return fail_at(r, SLEAPC_ERR_FORMAT, key_path(kp, sizeof kp, parent, key), "missing");
    return st;
}

enum int_rule { INT_POSITIVE, INT_POW2 };

/* obj[key] as an int (absent or null: *out unchanged). JSON numbers are
 * doubles; an integer must be integral and in range. */
static sleapc_status read_int(const reader *r, const cJSON *obj, const char *parent,
                              const char *key, enum int_rule rule, int *out)
{
    char kp[256];
    const cJSON *v = get(obj, key);
    if (!v)
        return SLEAPC_OK;
    key_path(kp, sizeof kp, parent, key);
    double d = v->valuedouble;
    if (!cJSON_IsNumber(v) || d != floor(d) || !(fabs(d) < 1e9))
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected an integer, got %s",
                       cJSON_IsNumber(v) ? "a fraction or a huge number" : kind_name(v));
    int i = (int)d;
    if (i <= 0)
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "must be positive, got %d", i);
    if (rule == INT_POW2 && (i & (i - 1)) != 0)
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "must be a power of two, got %d", i);
    *out = i;
    return SLEAPC_OK;
}

static sleapc_status read_positive_double(const reader *r, const cJSON *obj, const char *parent,
                                          const char *key, double *out)
{
    char kp[256];
    const cJSON *v = get(obj, key);
    if (!v)
        return SLEAPC_OK;
    key_path(kp, sizeof kp, parent, key);
    if (!cJSON_IsNumber(v))
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected a number, got %s", kind_name(v));
    if (!(v->valuedouble > 0.0) || !isfinite(v->valuedouble))
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "must be positive, got %g", v->valuedouble);
    *out = v->valuedouble;
    return SLEAPC_OK;
}

static sleapc_status read_bool(const reader *r, const cJSON *obj, const char *parent,
                               const char *key, bool *out)
{
    char kp[256];
    const cJSON *v = get(obj, key);
    if (!v)
        return SLEAPC_OK;
    if (!cJSON_IsBool(v))
        return fail_at(r, SLEAPC_ERR_FORMAT, key_path(kp, sizeof kp, parent, key),
                       "expected true or false, got %s", kind_name(v));
    *out = cJSON_IsTrue(v);
    return SLEAPC_OK;
}

/* obj[key] as a string; absent or null -> *out NULL. */
static sleapc_status read_str(const reader *r, const cJSON *obj, const char *parent,
                              const char *key, const char **out)
{
    char kp[256];
    const cJSON *v = get(obj, key);
    *out = NULL;
    if (!v)
        return SLEAPC_OK;
    if (!cJSON_IsString(v))
        return fail_at(r, SLEAPC_ERR_FORMAT, key_path(kp, sizeof kp, parent, key),
                       "expected a string, got %s", kind_name(v));
    *out = v->valuestring;
    return SLEAPC_OK;
}

static sleapc_status dup_str(const reader *r, const char *s, char **out)
{
    *out = sleapc__strdup(s);
    return *out ? SLEAPC_OK : nomem(r);
}

/* Zeroed arrays; *n_out is set only with the array so that
 * sleapc__model_config_clear can always free what is there. */
static sleapc_status new_names(const reader *r, int n, char ***out, int *n_out)
{
    *out = sleapc__calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return nomem(r);
    *n_out = n;
    return SLEAPC_OK;
}

static sleapc_status new_pairs(const reader *r, int n, int (**out)[2], int *n_out)
{
    *out = sleapc__calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return nomem(r);
    *n_out = n;
    return SLEAPC_OK;
}

static int find_name(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static sleapc_status check_list(const reader *r, const cJSON *v, const char *kp)
{
    if (!cJSON_IsArray(v))
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected a list, got %s", kind_name(v));
    if (cJSON_GetArraySize(v) > NAMES_MAX)
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "more than %d entries", NAMES_MAX);
    return SLEAPC_OK;
}

/* A list of distinct strings into an owned array. */
static sleapc_status read_names(const reader *r, const cJSON *list, const char *kp, char ***out,
                                int *n_out)
{
    sleapc_status st = check_list(r, list, kp);
    int n = cJSON_GetArraySize(list), i = 0;
    if (!st)
        st = new_names(r, n, out, n_out);
    const cJSON *item;
    cJSON_ArrayForEach(item, list)
    {
        if (st)
            break;
        if (!cJSON_IsString(item))
            return fail_at(r, SLEAPC_ERR_FORMAT, kp, "entry %d: expected a string, got %s", i,
                           kind_name(item));
        if (find_name(*out, i, item->valuestring) >= 0)
            return fail_at(r, SLEAPC_ERR_FORMAT, kp, "'%s' listed twice", item->valuestring);
        st = dup_str(r, item->valuestring, &(*out)[i++]);
    }
    return st;
}

/* ---- Skeleton: sleap-io's SkeletonDecoder ---------------------------------
 * Every Node or EdgeType definition gets the next py/id (1, 2, ...) in the
 * order: links (source, target, type of each), then the nodes list; a node
 * whose name was already seen is not numbered again. */

enum { OBJ_NODE, OBJ_EDGE_TYPE };

typedef struct skel_obj {
    int kind;
    int value; /* node: index into names; edge type: 1 body, 2 symmetry */
} skel_obj;

typedef struct skel_decoder {
    const reader *r;
    const char *kp; /* "data.labels.skeletons[0]" */
    char **names;   /* discovered nodes, in order of first appearance */
    int n_names;
    skel_obj *objs; /* py/id - 1 -> object */
    int n_objs, cap_objs;
    int type_ids[8]; /* distinct edge-type values in order of appearance */
    int n_type_ids;
} skel_decoder;

static sleapc_status push_obj(skel_decoder *d, int kind, int value)
{
    if (d->n_objs == d->cap_objs) {
        int cap = d->cap_objs ? d->cap_objs * 2 : 16;
        skel_obj *p = sleapc__realloc(d->objs, (size_t)cap * sizeof *p);
        if (!p)
            return nomem(d->r);
        d->objs = p;
        d->cap_objs = cap;
    }
    d->objs[d->n_objs++] = (skel_obj){kind, value};
    return SLEAPC_OK;
}

/* The name of a {"py/object": "sleap.skeleton.Node", "py/state": ...}:
 * state {"py/tuple": [name, weight]} or {"name": ..., "weight": ...}. */
static sleapc_status node_name(skel_decoder *d, const cJSON *v, const char **out)
{
    const cJSON *state = get(v, "py/state");
    const cJSON *name = NULL;
    if (state) {
        const cJSON *tuple = get(state, "py/tuple");
        name = tuple ? cJSON_GetArrayItem(tuple, 0) : get(state, "name");
    } else {
        name = get(v, "name");
    }
    if (!cJSON_IsString(name))
        return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp, "a skeleton node has no name");
    *out = name->valuestring;
    return SLEAPC_OK;
}

/* Number a node definition unless its name is known. */
static sleapc_status define_node(skel_decoder *d, const cJSON *v)
{
    const char *name;
    sleapc_status st = node_name(d, v, &name);
    if (st || find_name(d->names, d->n_names, name) >= 0)
        return st;
    if (d->n_names >= NAMES_MAX)
        return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp, "more than %d nodes", NAMES_MAX);
    char **p = sleapc__realloc(d->names, (size_t)(d->n_names + 1) * sizeof *p);
    if (!p)
        return nomem(d->r);
    d->names = p;
    st = dup_str(d->r, name, &d->names[d->n_names]);
    if (st)
        return st;
    d->n_names++;
    return push_obj(d, OBJ_NODE, d->n_names - 1);
}

/* {"py/reduce": [{"py/type": "sleap.skeleton.EdgeType"}, {"py/tuple": [1]}]} */
static sleapc_status edge_type_value(skel_decoder *d, const cJSON *v, int *out)
{
    const cJSON *args = cJSON_GetArrayItem(get(v, "py/reduce"), 1);
    const cJSON *val = cJSON_GetArrayItem(get(args, "py/tuple"), 0);
    if (!cJSON_IsNumber(val) || val->valuedouble != floor(val->valuedouble) ||
        fabs(val->valuedouble) > 1e6)
        return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp, "an edge type is not an integer");
    *out = (int)val->valuedouble;
    return SLEAPC_OK;
}

static sleapc_status define_edge_type(skel_decoder *d, const cJSON *v)
{
    int value;
    sleapc_status st = edge_type_value(d, v, &value);
    if (st)
        return st;
    bool known = false;
    for (int i = 0; i < d->n_type_ids; i++)
        known = known || d->type_ids[i] == value;
    if (!known && d->n_type_ids < (int)(sizeof d->type_ids / sizeof d->type_ids[0]))
        d->type_ids[d->n_type_ids++] = value;
    return push_obj(d, OBJ_EDGE_TYPE, value);
}

/* A py/id as an index into objs, or -1. */
static int py_id(const skel_decoder *d, const cJSON *v)
{
    const cJSON *id = get(v, "py/id");
    if (!cJSON_IsNumber(id) || !(id->valuedouble >= 1) || id->valuedouble > d->n_objs ||
        id->valuedouble != floor(id->valuedouble))
        return -1;
    return (int)id->valuedouble - 1;
}

/* A link end: an inline node (looked up by name) or a py/id of a node. */
static sleapc_status resolve_node(skel_decoder *d, const cJSON *v, int *out)
{
    if (get(v, "py/object")) {
        const char *name;
        sleapc_status st = node_name(d, v, &name);
        *out = st ? -1 : find_name(d->names, d->n_names, name);
        return st;
    }
    int i = py_id(d, v);
    if (i < 0 || d->objs[i].kind != OBJ_NODE)
        return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
                       "a link refers to a node that is not defined");
    *out = d->objs[i].value;
    return SLEAPC_OK;
}

/* A link type: inline, a py/id into the shared numbering, or (files with a
 * separate numbering for edge types) the n-th distinct type; absent = body. */
static sleapc_status resolve_type(skel_decoder *d, const cJSON *v, int *out)
{
    *out = 1;
    if (!v)
        return SLEAPC_OK;
    if (get(v, "py/reduce"))
        return edge_type_value(d, v, out);
    int i = py_id(d, v);
    if (i >= 0 && d->objs[i].kind == OBJ_EDGE_TYPE) {
        *out = d->objs[i].value;
        return SLEAPC_OK;
    }
    const cJSON *id = get(v, "py/id");
    for (int k = 0; cJSON_IsNumber(id) && k < d->n_type_ids; k++) {
        if (id->valuedouble == k + 1) {
            *out = d->type_ids[k];
            return SLEAPC_OK;
        }
    }
    return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
                   "a link refers to an edge type that is not defined");
}

/* First pass: number the definitions. */
static sleapc_status number_objects(skel_decoder *d, const cJSON *links, const cJSON *nodes)
{
    static const char *const ends[3] = {"source", "target", "type"};
    const cJSON *link, *ref;
    sleapc_status st = SLEAPC_OK;
    cJSON_ArrayForEach(link, links)
    {
        for (int k = 0; !st && k < 3; k++) {
            const cJSON *v = get(link, ends[k]);
            if (get(v, "py/object"))
                st = define_node(d, v);
            else if (get(v, "py/reduce"))
                st = define_edge_type(d, v);
        }
        if (st)
            return st;
    }
    cJSON_ArrayForEach(ref, nodes)
    {
        const cJSON *id = get(ref, "id");
        if (get(id, "py/object"))
            st = define_node(d, id);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

/* The node order: the nodes list's py/ids, unless it names fewer nodes than
 * were defined (then definition order), as sleap-io does. */
static sleapc_status node_order(skel_decoder *d, const cJSON *nodes, int *order, int *n_order)
{
    int n = 0;
    const cJSON *ref;
    cJSON_ArrayForEach(ref, nodes)
    {
        int i = py_id(d, get(ref, "id"));
        if (i < 0 || d->objs[i].kind != OBJ_NODE)
            continue;
        int node = d->objs[i].value;
        for (int k = 0; k < n; k++)
            if (order[k] == node)
                return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp, "node '%s' listed twice",
                               d->names[node]);
        if (n < d->n_names)
            order[n++] = node;
    }
    if (n < d->n_names) {
        for (n = 0; n < d->n_names; n++)
            order[n] = n;
    }
    *n_order = n;
    return SLEAPC_OK;
}

typedef struct body_edge {
    int insert_idx; /* edge_insert_idx, or the link position when absent */
    int src, dst;   /* indices into names */
} body_edge;

static sleapc_status decode_links(skel_decoder *d, const cJSON *links, body_edge *edges,
                                  int *n_edges, int (*syms)[2], int *n_syms)
{
    const cJSON *link;
    int pos = 0;
    *n_edges = *n_syms = 0;
    cJSON_ArrayForEach(link, links)
    {
        int src, dst, type;
        sleapc_status st = resolve_node(d, get(link, "source"), &src);
        if (!st)
            st = resolve_node(d, get(link, "target"), &dst);
        if (!st)
            st = resolve_type(d, get(link, "type"), &type);
        if (st)
            return st;
        if (src < 0 || dst < 0)
            return fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp, "a link refers to an unknown node");
        const cJSON *idx = get(link, "edge_insert_idx");
        if (type == 1) {
            bool has_idx = cJSON_IsNumber(idx) && fabs(idx->valuedouble) < 1e9;
            edges[(*n_edges)++] = (body_edge){has_idx ? (int)idx->valuedouble : pos, src, dst};
        } else if (type == 2) {
            /* SLEAP stores each symmetry in both directions; keep one. */
            bool seen = false;
            for (int k = 0; k < *n_syms && !seen; k++)
                seen = (syms[k][0] == src && syms[k][1] == dst) ||
                       (syms[k][0] == dst && syms[k][1] == src);
            if (!seen) {
                syms[*n_syms][0] = src;
                syms[*n_syms][1] = dst;
                (*n_syms)++;
            }
        }
        pos++;
    }
    /* SLEAP's Skeleton.edges: body edges in insertion order (stable). */
    for (int i = 1; i < *n_edges; i++) {
        body_edge e = edges[i];
        int j = i;
        for (; j > 0 && edges[j - 1].insert_idx > e.insert_idx; j--)
            edges[j] = edges[j - 1];
        edges[j] = e;
    }
    return SLEAPC_OK;
}

static sleapc_status build_skeleton(skel_decoder *d, const cJSON *links, const cJSON *nodes,
                                    sleapc_skeleton_config *sk)
{
    int n_links = cJSON_GetArraySize(links);
    int *order = sleapc__calloc((size_t)d->n_names + 1, sizeof *order);
    int *where = sleapc__calloc((size_t)d->n_names + 1, sizeof *where);
    body_edge *edges = sleapc__calloc((size_t)n_links + 1, sizeof *edges);
    int(*syms)[2] = sleapc__calloc((size_t)n_links + 1, sizeof *syms);
    int n_order = 0, n_edges = 0, n_syms = 0;
    sleapc_status st = order && where && edges && syms ? SLEAPC_OK : nomem(d->r);
    if (!st)
        st = node_order(d, nodes, order, &n_order);
    if (!st)
        st = decode_links(d, links, edges, &n_edges, syms, &n_syms);
    if (!st)
        st = new_names(d->r, n_order, &sk->node_names, &sk->n_nodes);
    for (int i = 0; !st && i < n_order; i++) {
        where[order[i]] = i;
        st = dup_str(d->r, d->names[order[i]], &sk->node_names[i]);
    }
    if (!st)
        st = new_pairs(d->r, n_edges, &sk->edges, &sk->n_edges);
    for (int i = 0; !st && i < n_edges; i++) {
        sk->edges[i][0] = where[edges[i].src];
        sk->edges[i][1] = where[edges[i].dst];
    }
    if (!st)
        st = new_pairs(d->r, n_syms, &sk->symmetries, &sk->n_symmetries);
    for (int i = 0; !st && i < n_syms; i++) {
        sk->symmetries[i][0] = where[syms[i][0]];
        sk->symmetries[i][1] = where[syms[i][1]];
    }
    sleapc__free(order);
    sleapc__free(where);
    sleapc__free(edges);
    sleapc__free(syms);
    return st;
}

/* data.labels.skeletons[0]; none gives an empty skeleton. */
static sleapc_status read_skeleton(const reader *r, const cJSON *root, sleapc_skeleton_config *sk)
{
    const char *kp = "data.labels.skeletons[0]";
    const cJSON *list = get(get(get(root, "data"), "labels"), "skeletons");
    const cJSON *skel = NULL, *links = NULL, *nodes = NULL;
    const char *name = NULL;
    if (list && !cJSON_IsArray(list))
        return fail_at(r, SLEAPC_ERR_FORMAT, "data.labels.skeletons", "expected a list, got %s",
                       kind_name(list));
    skel = cJSON_GetArrayItem(list, 0);
    if (!skel || cJSON_IsNull(skel))
        return dup_str(r, "", &sk->name);
    if (!cJSON_IsObject(skel))
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected an object, got %s", kind_name(skel));
    links = get(skel, "links");
    nodes = get(skel, "nodes");
    sleapc_status st = SLEAPC_OK;
    if (links)
        st = check_list(r, links, "data.labels.skeletons[0].links");
    if (!st && nodes)
        st = check_list(r, nodes, "data.labels.skeletons[0].nodes");
    if (!st)
        st = read_str(r, get(skel, "graph"), "data.labels.skeletons[0].graph", "name", &name);
    if (st)
        return st;
    skel_decoder d = {.r = r, .kp = kp};
    st = number_objects(&d, links, nodes);
    if (!st)
        st = build_skeleton(&d, links, nodes, sk);
    if (!st)
        st = dup_str(r, name ? name : "", &sk->name);
    for (int i = 0; i < d.n_names; i++)
        sleapc__free(d.names[i]);
    sleapc__free(d.names);
    sleapc__free(d.objs);
    return st;
}

/* ---- data.preprocessing, data.instance_cropping ----------------------- */

static sleapc_status read_preprocessing(const reader *r, const cJSON *root,
                                        sleapc_model_config *cfg)
{
    const cJSON *data, *pre, *crop;
    const char *pp = "data.preprocessing";
    sleapc_status st = get_object(r, root, NULL, "data", &data);
    if (!st)
        st = get_object(r, data, "data", "preprocessing", &pre);
    if (!st)
        st = read_bool(r, pre, pp, "ensure_rgb", &cfg->ensure_rgb);
    if (!st)
        st = read_bool(r, pre, pp, "ensure_grayscale", &cfg->ensure_grayscale);
    if (!st)
        st = read_positive_double(r, pre, pp, "input_scaling", &cfg->scale);
    if (!st)
        st = read_int(r, pre, pp, "pad_to_stride", INT_POSITIVE, &cfg->pad_to_stride);
    /* SLEAP's default is true; sleap-nn maps target_* onto max_* regardless. */
    cfg->resize_and_pad_to_target = true;
    if (!st)
        st = read_bool(r, pre, pp, "resize_and_pad_to_target", &cfg->resize_and_pad_to_target);
    if (!st)
        st = read_int(r, pre, pp, "target_height", INT_POSITIVE, &cfg->max_height);
    if (!st)
        st = read_int(r, pre, pp, "target_width", INT_POSITIVE, &cfg->max_width);
    if (!st)
        st = get_object(r, data, "data", "instance_cropping", &crop);
    if (!st)
        st =
            read_int(r, crop, "data.instance_cropping", "crop_size", INT_POSITIVE, &cfg->crop_size);
    return st;
}

/* ---- model.backbone -------------------------------------------------- */

/* The first non-null backbone entry (SLEAP's oneof); UNet keys as sleap-nn's
 * model_mapper copies them. */
static sleapc_status read_backbone(const reader *r, const cJSON *model, sleapc_model_config *cfg)
{
    const cJSON *bb, *e, *unet = NULL;
    sleapc_status st = require_object(r, model, "model", "backbone", &bb);
    if (st)
        return st;
    const char *name = NULL;
    cJSON_ArrayForEach(e, bb)
    {
        if (!cJSON_IsNull(e)) {
            name = e->string;
            unet = e;
            break;
        }
    }
    if (!name)
        return fail_at(r, SLEAPC_ERR_FORMAT, "model.backbone", "no backbone: every entry is null");
    snprintf(cfg->backbone_name, sizeof cfg->backbone_name, "%s", name);
    if (strcmp(name, "unet") != 0) {
        cfg->backbone_type = SLEAPC_BACKBONE_OTHER;
        return SLEAPC_OK; /* recorded; the model loader refuses what it cannot build */
    }
    if (!cJSON_IsObject(unet))
        return fail_at(r, SLEAPC_ERR_FORMAT, "model.backbone.unet", "expected an object, got %s",
                       kind_name(unet));
    const char *up = "model.backbone.unet";
    sleapc_unet_config *u = &cfg->unet;
    /* The JSON has no kernel_size or convs_per_block: SLEAP hard-codes 3 and 2. */
    u->kernel_size = 3;
    u->convs_per_block = 2;
    st = read_int(r, unet, up, "filters", INT_POSITIVE, &u->filters);
    if (!st)
        st = read_positive_double(r, unet, up, "filters_rate", &u->filters_rate);
    if (!st)
        st = read_int(r, unet, up, "max_stride", INT_POW2, &u->max_stride);
    if (!st)
        st = read_int(r, unet, up, "output_stride", INT_POW2, &u->output_stride);
    if (!st)
        st = read_int(r, unet, up, "stacks", INT_POSITIVE, &u->stacks);
    if (!st)
        st = read_bool(r, unet, up, "middle_block", &u->middle_block);
    if (!st)
        st = read_bool(r, unet, up, "up_interpolate", &u->up_interpolate);
    /* sleap-nn's mapper turns an absent stem_stride into 16 (a stem); SLEAP's
     * own default is null, which is what the key being absent means. */
    if (!st && !cJSON_HasObjectItem(unet, "stem_stride"))
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: %s.stem_stride is absent; using null (no stem) as SLEAP does", r->path,
                    up);
    if (!st)
        st = read_int(r, unet, up, "stem_stride", INT_POW2, &u->stem_stride);
    return st;
}

/* ---- model.heads ----------------------------------------------------- */

/* A confmaps config (flat head objects or the "confmaps" member).
 * part_names null -> the skeleton's nodes; a centroid map has one channel. */
static sleapc_status read_confmaps(const reader *r, const cJSON *cm, const char *kp,
                                   sleapc_model_config *cfg)
{
    const char *anchor = NULL;
    const sleapc_skeleton_config *sk = &cfg->skeleton;
    sleapc_status st = SLEAPC_OK;
    if (cfg->model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE)
        st = read_str(r, cm, kp, "anchor_part", &anchor);
    if (!st && anchor && sk->n_nodes > 0 && find_name(sk->node_names, sk->n_nodes, anchor) < 0)
        return fail_at(r, SLEAPC_ERR_FORMAT, kp, "anchor_part '%s' is not a skeleton node", anchor);
    if (!st && anchor)
        st = dup_str(r, anchor, &cfg->anchor_part);
    if (!st)
        st = read_positive_double(r, cm, kp, "sigma", &cfg->confmaps_sigma);
    if (!st)
        st = read_int(r, cm, kp, "output_stride", INT_POW2, &cfg->confmaps_stride);
    if (st)
        return st;
    if (cfg->model_type == SLEAPC_MODEL_TYPE_CENTROID) {
        st = new_names(r, 1, &cfg->part_names, &cfg->n_part_names);
        if (!st)
            st = dup_str(r, "centroid", &cfg->part_names[0]);
        return st;
    }
    const cJSON *parts = get(cm, "part_names");
    if (parts) {
        char kpp[256];
        return read_names(r, parts, key_path(kpp, sizeof kpp, kp, "part_names"), &cfg->part_names,
                          &cfg->n_part_names);
    }
    st = new_names(r, sk->n_nodes, &cfg->part_names, &cfg->n_part_names);
    for (int i = 0; !st && i < sk->n_nodes; i++)
        st = dup_str(r, sk->node_names[i], &cfg->part_names[i]);
    return st;
}

/* multi_instance.pafs: edges as [[src, dst], ...] node names; null -> the
 * skeleton's edges, mapped by name onto part_names. */
static sleapc_status read_pafs(const reader *r, const cJSON *pafs, const char *kp,
                               sleapc_model_config *cfg)
{
    char ke[256];
    sleapc_status st = read_positive_double(r, pafs, kp, "sigma", &cfg->pafs_sigma);
    if (!st)
        st = read_int(r, pafs, kp, "output_stride", INT_POW2, &cfg->pafs_stride);
    if (st)
        return st;
    const cJSON *edges = get(pafs, "edges");
    key_path(ke, sizeof ke, kp, "edges");
    if (edges) {
        st = check_list(r, edges, ke);
        int n = cJSON_GetArraySize(edges), i = 0;
        if (!st)
            st = new_pairs(r, n, &cfg->paf_edges, &cfg->n_paf_edges);
        const cJSON *pair;
        cJSON_ArrayForEach(pair, edges)
        {
            if (st)
                break;
            if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
                return fail_at(r, SLEAPC_ERR_FORMAT, ke, "entry %d: expected a pair of names", i);
            for (int k = 0; k < 2; k++) {
                const cJSON *end = cJSON_GetArrayItem(pair, k);
                int j = cJSON_IsString(end)
                            ? find_name(cfg->part_names, cfg->n_part_names, end->valuestring)
                            : -1;
                if (j < 0)
                    return fail_at(r, SLEAPC_ERR_FORMAT, ke, "entry %d: %s is not a part name", i,
                                   cJSON_IsString(end) ? end->valuestring : "an entry");
                cfg->paf_edges[i][k] = j;
            }
            i++;
        }
        return st;
    }
    const sleapc_skeleton_config *sk = &cfg->skeleton;
    st = new_pairs(r, sk->n_edges, &cfg->paf_edges, &cfg->n_paf_edges);
    for (int i = 0; !st && i < sk->n_edges; i++) {
        for (int k = 0; k < 2; k++) {
            const char *node = sk->node_names[sk->edges[i][k]];
            int j = find_name(cfg->part_names, cfg->n_part_names, node);
            if (j < 0)
                return fail_at(r, SLEAPC_ERR_FORMAT, ke,
                               "null, and skeleton node '%s' is not in part_names", node);
            cfg->paf_edges[i][k] = j;
        }
    }
    return st;
}

static sleapc_status read_classes(const reader *r, const cJSON *sub, const char *kp,
                                  sleapc_model_config *cfg)
{
    char kc[256];
    const cJSON *classes = get(sub, "classes");
    if (!classes)
        return SLEAPC_OK;
    return read_names(r, classes, key_path(kc, sizeof kc, kp, "classes"), &cfg->classes,
                      &cfg->n_classes);
}

/* multi_class_topdown.class_vectors. sleap-nn's mapper defaults an absent
 * num_fc_layers / num_fc_units to 2 / 1024; the model loader replaces both
 * by what the .h5 holds. */
static sleapc_status read_class_vectors(const reader *r, const cJSON *cv, const char *kp,
                                        sleapc_model_config *cfg)
{
    cfg->class_vectors_fc_layers = 2;
    cfg->class_vectors_fc_units = 1024;
    cfg->class_vectors_stride = cfg->unet.max_stride;
    sleapc_status st = read_classes(r, cv, kp, cfg);
    if (!st) {
        /* SLEAP allows 0 fc layers; read_int refuses 0, so check by hand. */
        const cJSON *n = get(cv, "num_fc_layers");
        if (n && cJSON_IsNumber(n) && n->valuedouble == 0)
            cfg->class_vectors_fc_layers = 0;
        else
            st = read_int(r, cv, kp, "num_fc_layers", INT_POSITIVE, &cfg->class_vectors_fc_layers);
    }
    if (!st)
        st = read_int(r, cv, kp, "num_fc_units", INT_POSITIVE, &cfg->class_vectors_fc_units);
    if (!st)
        st = read_bool(r, cv, kp, "global_pool", &cfg->class_vectors_global_pool);
    if (!st)
        st = read_int(r, cv, kp, "output_stride", INT_POW2, &cfg->class_vectors_stride);
    return st;
}

static const struct {
    const char *key;
    sleapc_model_type type;
} head_types[] = {
    {"single_instance", SLEAPC_MODEL_TYPE_SINGLE_INSTANCE},
    {"centroid", SLEAPC_MODEL_TYPE_CENTROID},
    {"centered_instance", SLEAPC_MODEL_TYPE_CENTERED_INSTANCE},
    {"multi_instance", SLEAPC_MODEL_TYPE_BOTTOMUP},
    {"multi_class_bottomup", SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP},
    {"multi_class_topdown", SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN},
};

/* The first non-null entry of model.heads (SLEAP's oneof). */
static sleapc_status find_head(const reader *r, const cJSON *heads, sleapc_model_config *cfg,
                               const cJSON **head, const char **key)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, heads)
    {
        if (cJSON_IsNull(e))
            continue;
        for (size_t k = 0; k < sizeof head_types / sizeof head_types[0]; k++) {
            if (strcmp(e->string, head_types[k].key) == 0) {
                if (!cJSON_IsObject(e))
                    return fail_at(r, SLEAPC_ERR_FORMAT, "model.heads",
                                   "%s: expected an object, got %s", e->string, kind_name(e));
                cfg->model_type = head_types[k].type;
                *head = e;
                *key = head_types[k].key;
                return SLEAPC_OK;
            }
        }
        return fail_at(r, SLEAPC_ERR_UNSUPPORTED, "model.heads", "unsupported head type '%s'",
                       e->string);
    }
    return fail_at(r, SLEAPC_ERR_FORMAT, "model.heads", "no head: every entry is null");
}

static sleapc_status read_heads(const reader *r, const cJSON *model, sleapc_model_config *cfg)
{
    const cJSON *heads, *head = NULL, *cm = NULL, *sub = NULL;
    const char *key = NULL;
    char kp[128], ks[128];
    sleapc_status st = require_object(r, model, "model", "heads", &heads);
    if (!st)
        st = find_head(r, heads, cfg, &head, &key);
    if (st)
        return st;
    snprintf(kp, sizeof kp, "model.heads.%s", key);
    switch (cfg->model_type) {
    case SLEAPC_MODEL_TYPE_SINGLE_INSTANCE:
    case SLEAPC_MODEL_TYPE_CENTROID:
    case SLEAPC_MODEL_TYPE_CENTERED_INSTANCE:
        /* These heads are flat: the confmaps fields sit in the head itself. */
        return read_confmaps(r, head, kp, cfg);
    case SLEAPC_MODEL_TYPE_BOTTOMUP:
        st = require_object(r, head, kp, "confmaps", &cm);
        snprintf(ks, sizeof ks, "%s.confmaps", kp);
        if (!st)
            st = read_confmaps(r, cm, ks, cfg);
        if (!st)
            st = require_object(r, head, kp, "pafs", &sub);
        snprintf(ks, sizeof ks, "%s.pafs", kp);
        if (!st)
            st = read_pafs(r, sub, ks, cfg);
        return st;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP:
        st = require_object(r, head, kp, "confmaps", &cm);
        snprintf(ks, sizeof ks, "%s.confmaps", kp);
        if (!st)
            st = read_confmaps(r, cm, ks, cfg);
        if (!st)
            st = require_object(r, head, kp, "class_maps", &sub);
        snprintf(ks, sizeof ks, "%s.class_maps", kp);
        if (!st)
            st = read_classes(r, sub, ks, cfg);
        if (!st)
            st = read_int(r, sub, ks, "output_stride", INT_POW2, &cfg->class_maps_stride);
        return st;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN:
        st = require_object(r, head, kp, "confmaps", &cm);
        snprintf(ks, sizeof ks, "%s.confmaps", kp);
        if (!st)
            st = read_confmaps(r, cm, ks, cfg);
        if (!st)
            st = require_object(r, head, kp, "class_vectors", &sub);
        snprintf(ks, sizeof ks, "%s.class_vectors", kp);
        if (!st)
            st = read_class_vectors(r, sub, ks, cfg);
        return st;
    case SLEAPC_MODEL_TYPE_UNKNOWN:
        break;
    }
    return fail_at(r, SLEAPC_ERR_FORMAT, "model.heads", "unknown model type");
}

static sleapc_status read_config(const reader *r, const cJSON *root, sleapc_model_config *cfg)
{
    const cJSON *model;
    if (!cJSON_IsObject(root))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read config: %s: expected a JSON object at the top",
                            r->path);
    sleapc_status st = require_object(r, root, NULL, "model", &model);
    if (!st)
        st = read_backbone(r, model, cfg);
    if (!st)
        st = read_preprocessing(r, root, cfg);
    if (!st)
        st = read_skeleton(r, root, &cfg->skeleton);
    if (!st)
        st = read_heads(r, model, cfg);
    return st;
}

/* The whole file as a NUL-terminated buffer. */
static sleapc_status read_text(const char *path, char **out, size_t *n_out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "read config: %s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = sleapc__malloc(cap);
    sleapc_status st = SLEAPC_OK;
    if (!buf)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read config: %s: out of memory", path);
    while (!st) {
        if (n + 1 == cap) {
            if (cap >= JSON_MAX_BYTES) {
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "read config: %s: larger than %u MB", path,
                                  JSON_MAX_BYTES >> 20);
                break;
            }
            char *p = sleapc__realloc(buf, cap * 2);
            if (!p) {
                st = sleapc__fail(SLEAPC_ERR_NOMEM, "read config: %s: out of memory", path);
                break;
            }
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                st = sleapc__fail(SLEAPC_ERR_IO, "read config: %s: read error", path);
            break;
        }
    }
    fclose(f);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    buf[n] = '\0';
    *out = buf;
    *n_out = n;
    return SLEAPC_OK;
}

/* 1-based line of byte offset `at` in text. */
static int line_of(const char *text, size_t at)
{
    int line = 1;
    for (size_t i = 0; i < at && text[i]; i++)
        line += text[i] == '\n';
    return line;
}

sleapc_status sleapc__config_read_legacy_json(const char *path, sleapc_model_config *cfg)
{
    if (!cfg)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read config: cfg is required");
    sleapc__model_config_defaults(cfg);
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read config: path is required");
    char *text = NULL;
    size_t n = 0;
    sleapc_status st = read_text(path, &text, &n);
    if (st) {
        sleapc__model_config_clear(cfg);
        return st;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, n + 1, &end, true);
    reader r = {.path = path, .cfg = cfg};
    if (!root) {
        size_t at = end && end >= text && end <= text + n ? (size_t)(end - text) : 0;
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read config: %s: not valid JSON (line %d, byte %zu)",
                          path, line_of(text, at), at);
    }
    cfg->legacy = true;
    if (!st)
        st = dup_str(&r, path, &cfg->source_path);
    if (!st)
        st = read_config(&r, root, cfg);
    cJSON_Delete(root);
    sleapc__free(text);
    if (st)
        sleapc__model_config_clear(cfg);
    return st;
}
