/* Legacy training_config.json, skeleton part: sleap-io's SkeletonDecoder for
 * the jsonpickle-encoded data.labels.skeletons[0] (formats.md C.6): py/id
 * numbering of nodes and edge types, the node order, then the edges. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/config/config_legacy_json_impl.h"
#include "io/config/model_config.h"

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
    const sleapc_cfgjson_reader *r;
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
            return sleapc__cfgjson_nomem(d->r);
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
    *out = NULL;
    const cJSON *state = sleapc__cfgjson_get(v, "py/state");
    const cJSON *name = NULL;
    if (state) {
        const cJSON *tuple = sleapc__cfgjson_get(state, "py/tuple");
        name = tuple ? cJSON_GetArrayItem(tuple, 0) : sleapc__cfgjson_get(state, "name");
    } else {
        name = sleapc__cfgjson_get(v, "name");
    }
    if (!cJSON_IsString(name))
        return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
                                       "a skeleton node has no name");
    *out = name->valuestring;
    return SLEAPC_OK;
}

/* Number a node definition unless its name is known. */
static sleapc_status define_node(skel_decoder *d, const cJSON *v)
{
    const char *name;
    sleapc_status st = node_name(d, v, &name);
    if (st || sleapc__cfgjson_find_name(d->names, d->n_names, name) >= 0)
        return st;
    if (d->n_names >= NAMES_MAX)
        return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp, "more than %d nodes",
                                       NAMES_MAX);
    char **p = sleapc__realloc(d->names, (size_t)(d->n_names + 1) * sizeof *p);
    if (!p)
        return sleapc__cfgjson_nomem(d->r);
    d->names = p;
    st = sleapc__cfgjson_dup_str(d->r, name, &d->names[d->n_names]);
    if (st)
        return st;
    d->n_names++;
    return push_obj(d, OBJ_NODE, d->n_names - 1);
}

/* {"py/reduce": [{"py/type": "sleap.skeleton.EdgeType"}, {"py/tuple": [1]}]} */
static sleapc_status edge_type_value(skel_decoder *d, const cJSON *v, int *out)
{
    const cJSON *args = cJSON_GetArrayItem(sleapc__cfgjson_get(v, "py/reduce"), 1);
    const cJSON *val = cJSON_GetArrayItem(sleapc__cfgjson_get(args, "py/tuple"), 0);
    if (!cJSON_IsNumber(val) || val->valuedouble != floor(val->valuedouble) ||
        fabs(val->valuedouble) > 1e6)
        return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
                                       "an edge type is not an integer");
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
    const cJSON *id = sleapc__cfgjson_get(v, "py/id");
    if (!cJSON_IsNumber(id) || !(id->valuedouble >= 1) || id->valuedouble > d->n_objs ||
        id->valuedouble != floor(id->valuedouble))
        return -1;
    return (int)id->valuedouble - 1;
}

/* A link end: an inline node (looked up by name) or a py/id of a node. */
static sleapc_status resolve_node(skel_decoder *d, const cJSON *v, int *out)
{
    if (sleapc__cfgjson_get(v, "py/object")) {
        const char *name;
        sleapc_status st = node_name(d, v, &name);
        *out = st ? -1 : sleapc__cfgjson_find_name(d->names, d->n_names, name);
        return st;
    }
    int i = py_id(d, v);
    if (i < 0 || d->objs[i].kind != OBJ_NODE)
        return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
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
    if (sleapc__cfgjson_get(v, "py/reduce"))
        return edge_type_value(d, v, out);
    int i = py_id(d, v);
    if (i >= 0 && d->objs[i].kind == OBJ_EDGE_TYPE) {
        *out = d->objs[i].value;
        return SLEAPC_OK;
    }
    const cJSON *id = sleapc__cfgjson_get(v, "py/id");
    for (int k = 0; cJSON_IsNumber(id) && k < d->n_type_ids; k++) {
        if (id->valuedouble == k + 1) {
            *out = d->type_ids[k];
            return SLEAPC_OK;
        }
    }
    return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
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
            const cJSON *v = sleapc__cfgjson_get(link, ends[k]);
            if (sleapc__cfgjson_get(v, "py/object"))
                st = define_node(d, v);
            else if (sleapc__cfgjson_get(v, "py/reduce"))
                st = define_edge_type(d, v);
        }
        if (st)
            return st;
    }
    cJSON_ArrayForEach(ref, nodes)
    {
        const cJSON *id = sleapc__cfgjson_get(ref, "id");
        if (sleapc__cfgjson_get(id, "py/object"))
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
        int i = py_id(d, sleapc__cfgjson_get(ref, "id"));
        if (i < 0 || d->objs[i].kind != OBJ_NODE)
            continue;
        int node = d->objs[i].value;
        for (int k = 0; k < n; k++)
            if (order[k] == node)
                return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
                                               "node '%s' listed twice", d->names[node]);
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
        sleapc_status st = resolve_node(d, sleapc__cfgjson_get(link, "source"), &src);
        if (!st)
            st = resolve_node(d, sleapc__cfgjson_get(link, "target"), &dst);
        if (!st)
            st = resolve_type(d, sleapc__cfgjson_get(link, "type"), &type);
        if (st)
            return st;
        if (src < 0 || dst < 0)
            return sleapc__cfgjson_fail_at(d->r, SLEAPC_ERR_FORMAT, d->kp,
                                           "a link refers to an unknown node");
        const cJSON *idx = sleapc__cfgjson_get(link, "edge_insert_idx");
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
    sleapc_status st = order && where && edges && syms ? SLEAPC_OK : sleapc__cfgjson_nomem(d->r);
    if (!st)
        st = node_order(d, nodes, order, &n_order);
    if (!st)
        st = decode_links(d, links, edges, &n_edges, syms, &n_syms);
    if (!st)
        st = sleapc__cfgjson_new_names(d->r, n_order, &sk->node_names, &sk->n_nodes);
    for (int i = 0; !st && i < n_order; i++) {
        where[order[i]] = i;
        st = sleapc__cfgjson_dup_str(d->r, d->names[order[i]], &sk->node_names[i]);
    }
    if (!st)
        st = sleapc__cfgjson_new_pairs(d->r, n_edges, &sk->edges, &sk->n_edges);
    for (int i = 0; !st && i < n_edges; i++) {
        sk->edges[i][0] = where[edges[i].src];
        sk->edges[i][1] = where[edges[i].dst];
    }
    if (!st)
        st = sleapc__cfgjson_new_pairs(d->r, n_syms, &sk->symmetries, &sk->n_symmetries);
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
sleapc_status sleapc__cfgjson_read_skeleton(const sleapc_cfgjson_reader *r, const cJSON *root,
                                            sleapc_skeleton_config *sk)
{
    const char *kp = "data.labels.skeletons[0]";
    const cJSON *list = sleapc__cfgjson_get(
        sleapc__cfgjson_get(sleapc__cfgjson_get(root, "data"), "labels"), "skeletons");
    const cJSON *skel = NULL, *links = NULL, *nodes = NULL;
    const char *name = NULL;
    if (list && !cJSON_IsArray(list))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, "data.labels.skeletons",
                                       "expected a list, got %s", sleapc__cfgjson_kind_name(list));
    skel = cJSON_GetArrayItem(list, 0);
    if (!skel || cJSON_IsNull(skel))
        return sleapc__cfgjson_dup_str(r, "", &sk->name);
    if (!cJSON_IsObject(skel))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected an object, got %s",
                                       sleapc__cfgjson_kind_name(skel));
    links = sleapc__cfgjson_get(skel, "links");
    nodes = sleapc__cfgjson_get(skel, "nodes");
    sleapc_status st = SLEAPC_OK;
    if (links)
        st = sleapc__cfgjson_check_list(r, links, "data.labels.skeletons[0].links");
    if (!st && nodes)
        st = sleapc__cfgjson_check_list(r, nodes, "data.labels.skeletons[0].nodes");
    if (!st)
        st = sleapc__cfgjson_read_str(r, sleapc__cfgjson_get(skel, "graph"),
                                      "data.labels.skeletons[0].graph", "name", &name);
    if (st)
        return st;
    skel_decoder d = {.r = r, .kp = kp};
    st = number_objects(&d, links, nodes);
    if (!st)
        st = build_skeleton(&d, links, nodes, sk);
    if (!st)
        st = sleapc__cfgjson_dup_str(r, name ? name : "", &sk->name);
    for (int i = 0; i < d.n_names; i++)
        sleapc__free(d.names[i]);
    sleapc__free(d.names);
    sleapc__free(d.objs);
    return st;
}
