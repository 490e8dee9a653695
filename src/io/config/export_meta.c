/* export_metadata.json reader (sleap-nn export/metadata.py ExportMetadata). */
#include "io/config/export_meta.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* Upper bounds that no real skeleton or export reaches; they keep hostile
 * files from asking for absurd allocations. */
#define MAX_NAMES 4096
#define MAX_SIDE 65536

static const struct {
    const char *name;
    sleapc_export_kind kind;
} KINDS[] = {
    {"single_instance", SLEAPC_EXPORT_SINGLE_INSTANCE},
    {"centroid", SLEAPC_EXPORT_CENTROID},
    {"centered_instance", SLEAPC_EXPORT_CENTERED_INSTANCE},
    {"topdown", SLEAPC_EXPORT_TOPDOWN},
    {"bottomup", SLEAPC_EXPORT_BOTTOMUP},
    {"multi_class_topdown", SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN},
    {"multi_class_topdown_combined", SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN_COMBINED},
    {"multi_class_bottomup", SLEAPC_EXPORT_MULTI_CLASS_BOTTOMUP},
    {"bbox_centernet", SLEAPC_EXPORT_BBOX_CENTERNET},
    {"bbox_ssd", SLEAPC_EXPORT_BBOX_SSD},
    {"embedding", SLEAPC_EXPORT_EMBEDDING},
};

void sleapc__export_meta_clear(sleapc_export_meta *m)
{
    if (!m)
        return;
    sleapc__names_free(m->node_names, m->n_nodes);
    sleapc__names_free(m->class_names, m->n_classes);
    sleapc__free(m->edges);
    sleapc__free(m->anchor_part);
    memset(m, 0, sizeof *m);
}

sleapc_model_type sleapc__export_pose_type(sleapc_export_kind kind)
{
    switch (kind) {
    case SLEAPC_EXPORT_SINGLE_INSTANCE:
        return SLEAPC_MODEL_TYPE_SINGLE_INSTANCE;
    case SLEAPC_EXPORT_CENTROID:
        return SLEAPC_MODEL_TYPE_CENTROID;
    case SLEAPC_EXPORT_CENTERED_INSTANCE:
    case SLEAPC_EXPORT_TOPDOWN:
        return SLEAPC_MODEL_TYPE_CENTERED_INSTANCE;
    case SLEAPC_EXPORT_BOTTOMUP:
        return SLEAPC_MODEL_TYPE_BOTTOMUP;
    case SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN:
    case SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN_COMBINED:
        return SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
    case SLEAPC_EXPORT_MULTI_CLASS_BOTTOMUP:
        return SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP;
    case SLEAPC_EXPORT_BBOX_CENTERNET:
        return SLEAPC_MODEL_TYPE_BBOX_CENTERNET;
    case SLEAPC_EXPORT_BBOX_SSD:
        return SLEAPC_MODEL_TYPE_BBOX_SSD;
    case SLEAPC_EXPORT_EMBEDDING:
        return SLEAPC_MODEL_TYPE_EMBEDDING;
    case SLEAPC_EXPORT_UNKNOWN:
        break;
    }
    return SLEAPC_MODEL_TYPE_UNKNOWN;
}

/* export/cli.py copies the configs under these names. */
const char *sleapc__export_pose_config_name(sleapc_export_kind kind)
{
    switch (kind) {
    case SLEAPC_EXPORT_TOPDOWN:
        return "training_config_centered_instance.yaml";
    case SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN_COMBINED:
        return "training_config_multi_class_topdown.yaml";
    default:
        return "training_config.yaml";
    }
}

/* An optional key: absent and null are both "not set". */
static const cJSON *opt(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNull(v) ? NULL : v;
}

static sleapc_status bad(const char *path, const char *key, const char *what)
{
    return sleapc__fail(SLEAPC_ERR_FORMAT, "read export metadata: %s: \"%s\" %s", path, key, what);
}

static sleapc_status get_int(const cJSON *root, const char *path, const char *key, int lo, int hi,
                             int *out)
{
    const cJSON *v = opt(root, key);
    if (!v)
        return SLEAPC_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble ||
        v->valuedouble < lo || v->valuedouble > hi)
        return bad(path, key, "is not a whole number in range");
    *out = (int)v->valuedouble;
    return SLEAPC_OK;
}

static sleapc_status get_names(const cJSON *root, const char *path, const char *key, int *n_out,
                               char ***out)
{
    const cJSON *v = opt(root, key);
    if (!v)
        return SLEAPC_OK;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 0 || n > MAX_NAMES)
        return bad(path, key, "is not a list of names");
    if (n == 0)
        return SLEAPC_OK;
    char **names = sleapc__calloc((size_t)n, sizeof *names);
    if (!names)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
    *out = names;
    for (int i = 0; i < n; i++) {
        const cJSON *s = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsString(s))
            return bad(path, key, "holds something that is not a string");
        names[i] = sleapc__strdup(s->valuestring);
        *n_out = i + 1; /* what the clear must free */
        if (!names[i])
            return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
    }
    return SLEAPC_OK;
}

static sleapc_status get_edges(const cJSON *root, const char *path, sleapc_export_meta *m)
{
    const cJSON *v = opt(root, "edge_inds");
    if (!v)
        return SLEAPC_OK;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 0 || n > MAX_NAMES)
        return bad(path, "edge_inds", "is not a list of [source, destination] pairs");
    if (n == 0)
        return SLEAPC_OK;
    m->edges = sleapc__calloc((size_t)n, sizeof *m->edges);
    if (!m->edges)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2)
            return bad(path, "edge_inds", "holds something that is not a pair");
        for (int k = 0; k < 2; k++) {
            const cJSON *x = cJSON_GetArrayItem(e, k);
            if (!cJSON_IsNumber(x) || x->valuedouble != (double)(int)x->valuedouble ||
                x->valuedouble < 0 || x->valuedouble >= m->n_nodes)
                return bad(path, "edge_inds", "names a node that node_names does not have");
            m->edges[i][k] = (int)x->valuedouble;
        }
    }
    m->n_edges = n;
    return SLEAPC_OK;
}

static sleapc_status parse(const cJSON *root, const char *path, sleapc_export_meta *m)
{
    if (!cJSON_IsObject(root))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read export metadata: %s: not a JSON object", path);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!cJSON_IsString(type))
        return bad(path, "model_type", "is missing");
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (strcmp(type->valuestring, KINDS[i].name) == 0)
            m->kind = KINDS[i].kind;
    if (m->kind == SLEAPC_EXPORT_UNKNOWN || strlen(type->valuestring) >= sizeof m->model_type)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "read export metadata: %s: unknown model_type \"%.60s\"", path,
                            type->valuestring);
    strcpy(m->model_type, type->valuestring);

    m->input_scale = 1.0;
    m->input_channels = 1;
    m->output_stride = 1;
    const cJSON *scale = opt(root, "input_scale");
    if (scale && (!cJSON_IsNumber(scale) || !(scale->valuedouble > 0 && scale->valuedouble <= 16)))
        return bad(path, "input_scale", "is not a number in (0, 16]");
    if (scale)
        m->input_scale = scale->valuedouble;
    const cJSON *thr = opt(root, "peak_threshold");
    if (thr && (!cJSON_IsNumber(thr) || !(thr->valuedouble >= 0 && thr->valuedouble <= 1)))
        return bad(path, "peak_threshold", "is not a number in [0, 1]");
    m->has_peak_threshold = thr != NULL;
    m->peak_threshold = thr ? thr->valuedouble : 0.0;

    sleapc_status st = get_int(root, path, "input_channels", 1, 4, &m->input_channels);
    if (!st)
        st = get_int(root, path, "output_stride", 1, 1024, &m->output_stride);
    if (!st)
        st = get_int(root, path, "max_instances", 1, MAX_NAMES, &m->max_instances);
    if (!st)
        st = get_int(root, path, "max_peaks_per_node", 1, MAX_NAMES, &m->max_peaks_per_node);
    if (!st)
        st = get_names(root, path, "node_names", &m->n_nodes, &m->node_names);
    if (!st)
        st = get_names(root, path, "class_names", &m->n_classes, &m->class_names);
    if (!st)
        st = get_edges(root, path, m);
    if (st)
        return st;

    int n_classes = m->n_classes;
    st = get_int(root, path, "n_classes", 0, MAX_NAMES, &n_classes);
    if (!st && m->n_classes && n_classes != m->n_classes)
        st = bad(path, "n_classes", "disagrees with class_names");
    if (st)
        return st;
    if (!m->n_classes && n_classes) {
        /* Classes without names: number them, as sleap-io would show them. */
        m->class_names = sleapc__calloc((size_t)n_classes, sizeof *m->class_names);
        if (!m->class_names)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
        for (int i = 0; i < n_classes; i++) {
            char name[32];
            snprintf(name, sizeof name, "class_%d", i);
            m->class_names[i] = sleapc__strdup(name);
            m->n_classes = i + 1;
            if (!m->class_names[i])
                return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
        }
    }

    const cJSON *crop = opt(root, "crop_size");
    if (crop) {
        const cJSON *h = cJSON_GetArrayItem(crop, 0), *w = cJSON_GetArrayItem(crop, 1);
        if (!cJSON_IsArray(crop) || cJSON_GetArraySize(crop) != 2 || !cJSON_IsNumber(h) ||
            !cJSON_IsNumber(w) || h->valuedouble != w->valuedouble || h->valuedouble < 1 ||
            h->valuedouble > MAX_SIDE || h->valuedouble != (double)(int)h->valuedouble)
            return bad(path, "crop_size", "is not a square [size, size] crop");
        m->crop_size = (int)h->valuedouble;
    }
    const cJSON *anchor = opt(root, "anchor_part");
    if (anchor && !cJSON_IsString(anchor))
        return bad(path, "anchor_part", "is not a node name");
    if (anchor) {
        m->anchor_part = sleapc__strdup(anchor->valuestring);
        if (!m->anchor_part)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__export_meta_parse(const char *text, size_t n, const char *path,
                                        sleapc_export_meta *out)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, n);
    sleapc_status st = parse(root, path, out);
    cJSON_Delete(root);
    if (st)
        sleapc__export_meta_clear(out);
    return st;
}

static sleapc_status copy_names(char **src, int n, char ***dst, int *n_dst)
{
    if (n == 0)
        return SLEAPC_OK;
    *dst = sleapc__calloc((size_t)n, sizeof **dst);
    if (!*dst)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        (*dst)[i] = sleapc__strdup(src[i]);
        *n_dst = i + 1;
        if (!(*dst)[i])
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    return SLEAPC_OK;
}

static sleapc_status fill_config(const sleapc_export_meta *m, const char *path,
                                 sleapc_model_config *cfg)
{
    cfg->model_type = sleapc__export_pose_type(m->kind);
    cfg->unet.in_channels = m->input_channels;
    cfg->scale = m->input_scale;
    cfg->crop_size = m->crop_size;
    cfg->source_path = sleapc__strdup(path);
    cfg->skeleton.name = sleapc__strdup("");
    if (!cfg->source_path || !cfg->skeleton.name)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (m->n_nodes < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "%s: no node_names, and no training config in the folder to name the "
                            "skeleton's nodes",
                            path);
    sleapc_status st = copy_names(m->node_names, m->n_nodes, &cfg->skeleton.node_names,
                                  &cfg->skeleton.n_nodes);
    if (!st && cfg->model_type != SLEAPC_MODEL_TYPE_CENTROID)
        st = copy_names(m->node_names, m->n_nodes, &cfg->part_names, &cfg->n_part_names);
    if (!st)
        st = copy_names(m->class_names, m->n_classes, &cfg->classes, &cfg->n_classes);
    if (st)
        return st;
    if (cfg->model_type == SLEAPC_MODEL_TYPE_CENTROID) {
        cfg->part_names = sleapc__calloc(1, sizeof *cfg->part_names);
        if (!cfg->part_names || !(cfg->part_names[0] = sleapc__strdup("centroid")))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        cfg->n_part_names = 1;
    }
    if (m->n_edges) {
        size_t bytes = (size_t)m->n_edges * sizeof *m->edges;
        cfg->skeleton.edges = sleapc__malloc(bytes);
        cfg->paf_edges = sleapc__malloc(bytes);
        if (!cfg->skeleton.edges || !cfg->paf_edges)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        memcpy(cfg->skeleton.edges, m->edges, bytes);
        memcpy(cfg->paf_edges, m->edges, bytes);
        cfg->skeleton.n_edges = cfg->n_paf_edges = m->n_edges;
    }
    if (m->anchor_part && !(cfg->anchor_part = sleapc__strdup(m->anchor_part)))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    return SLEAPC_OK;
}

sleapc_status sleapc__export_meta_to_config(const sleapc_export_meta *m, const char *path,
                                            sleapc_model_config *cfg)
{
    sleapc_status st = fill_config(m, path, cfg);
    if (st)
        sleapc__model_config_clear(cfg);
    return st;
}
