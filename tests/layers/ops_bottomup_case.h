/* Shared by the PAF and grouping tests: one bottom-up reference case with its
 * skeleton (from the model's training config), its scored PAF graph and the
 * grouping parameters of its predict call. Header-only (static inline). */
#ifndef SLEAPC_TESTS_OPS_BOTTOMUP_CASE_H
#define SLEAPC_TESTS_OPS_BOTTOMUP_CASE_H

#include <cjson/cJSON.h>
#include <string.h>
#include <sys/stat.h>

#include "io/config/model_config.h"
#include "layers/ops/grouping.h"
#include "core/paf.h"
#include "ops_ref_cases.h"

#define BU_MAX_EDGES 64

typedef struct bu_case {
    const char *id;
    cJSON *manifest;
    char stage[64];
    int n_nodes, n_edges;
    int edges[BU_MAX_EDGES][2];
    int paf_stride;
    sleapc_tensor input, pafs, cms;
    sleapc_tensor peaks, peak_vals, peak_channel_inds;         /* scored inputs */
    sleapc_tensor edge_inds, edge_peak_inds, line_scores;      /* scored outputs */
    sleapc_paf_score_opts score_opts;
    sleapc_grouping_opts group_opts;
    int64_t max_instances; /* 0 = None */
    float input_scale;
    float eff_scale[16];
} bu_case;

static inline void bu_case_free(bu_case *c)
{
    sleapc_tensor *ts[] = { &c->input, &c->pafs, &c->cms, &c->peaks, &c->peak_vals,
                            &c->peak_channel_inds, &c->edge_inds, &c->edge_peak_inds,
                            &c->line_scores };
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        sleapc__free(ts[i]->data);
        ts[i]->data = NULL;
    }
    cJSON_Delete(c->manifest);
    c->manifest = NULL;
}

/* Index of name in a cJSON array of strings, or -1. */
static inline int bu_name_index(const cJSON *names, const char *name)
{
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, names)
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, name) == 0)
            return i;
        i++;
    }
    return -1;
}

/* Legacy SLEAP training_config.json: model.heads.multi_instance. */
static inline bool bu_skeleton_json(const char *path, bu_case *c)
{
    size_t size = 0;
    unsigned char *text = test_read_file(path, &size);
    CHECK_MSG(text != NULL, "%s: cannot read %s", c->id, path);
    if (!text)
        return false;
    cJSON *root = cJSON_ParseWithLength((const char *)text, size);
    free(text);
    const cJSON *mi = ref_obj(ref_obj(ref_obj(root, "model"), "heads"), "multi_instance");
    const cJSON *names = ref_obj(ref_obj(mi, "confmaps"), "part_names");
    const cJSON *edges = ref_obj(ref_obj(mi, "pafs"), "edges");
    bool ok = cJSON_IsArray(names) && cJSON_IsArray(edges) &&
              cJSON_GetArraySize(edges) <= BU_MAX_EDGES;
    c->n_nodes = ok ? cJSON_GetArraySize(names) : 0;
    c->n_edges = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, edges)
    {
        if (!ok)
            break;
        const cJSON *sn = cJSON_GetArrayItem(e, 0), *dn = cJSON_GetArrayItem(e, 1);
        int s = cJSON_IsString(sn) ? bu_name_index(names, sn->valuestring) : -1;
        int d = cJSON_IsString(dn) ? bu_name_index(names, dn->valuestring) : -1;
        ok = ok && s >= 0 && d >= 0;
        c->edges[c->n_edges][0] = s;
        c->edges[c->n_edges][1] = d;
        c->n_edges++;
    }
    cJSON_Delete(root);
    CHECK_MSG(ok, "%s: no multi_instance skeleton in %s", c->id, path);
    return ok;
}

/* The skeleton of the case's model: training_config.yaml (sleap-nn) or
 * training_config.json (legacy SLEAP). */
static inline bool bu_skeleton(bu_case *c)
{
    const cJSON *dirs = ref_obj(c->manifest, "model_dirs");
    const cJSON *d0 = cJSON_GetArrayItem(dirs, 0);
    const char *prefix = "shared/data/";
    if (!cJSON_IsString(d0) || strncmp(d0->valuestring, prefix, strlen(prefix)) != 0) {
        CHECK_MSG(false, "%s: unexpected model_dirs", c->id);
        return false;
    }
    char rel[1024], path[4096];
    struct stat st;
    snprintf(rel, sizeof rel, "%s/training_config.yaml", d0->valuestring + strlen(prefix));
    snprintf(path, sizeof path, "%s", test_data_path(rel));
    if (stat(path, &st) != 0) {
        snprintf(rel, sizeof rel, "%s/training_config.json", d0->valuestring + strlen(prefix));
        snprintf(path, sizeof path, "%s", test_data_path(rel));
        return bu_skeleton_json(path, c);
    }
    sleapc_model_config cfg;
    sleapc_status s = sleapc__config_read_yaml(path, &cfg);
    CHECK_MSG(s == SLEAPC_OK, "%s: %s", c->id, sleapc_last_error());
    if (s != SLEAPC_OK)
        return false;
    bool ok = cfg.n_paf_edges <= BU_MAX_EDGES;
    c->n_nodes = cfg.n_part_names;
    c->n_edges = ok ? cfg.n_paf_edges : 0;
    for (int k = 0; k < c->n_edges; k++) {
        c->edges[k][0] = cfg.paf_edges[k][0];
        c->edges[k][1] = cfg.paf_edges[k][1];
    }
    sleapc__model_config_clear(&cfg);
    CHECK_MSG(ok, "%s: too many edges", c->id);
    return ok;
}

static inline bool bu_load_array(bu_case *c, const char *suffix, sleapc_tensor *t)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", c->stage, suffix);
    return ref_load(c->id, name, t);
}

/* Load everything; false (after a failed CHECK) when something is missing. */
static inline bool bu_case_load(const char *id, bu_case *c)
{
    memset(c, 0, sizeof *c);
    c->id = id;
    c->manifest = ref_manifest(id);
    const char *stage = c->manifest ? ref_stage(c->manifest, 0) : NULL;
    if (!stage)
        return false;
    snprintf(c->stage, sizeof c->stage, "%s", stage);
    if (!bu_skeleton(c))
        return false;
    bool ok = bu_load_array(c, "input", &c->input) &&
              bu_load_array(c, "head.PartAffinityFieldsHead", &c->pafs) &&
              bu_load_array(c, "head.MultiInstanceConfmapsHead", &c->cms) &&
              bu_load_array(c, "scored.peaks", &c->peaks) &&
              bu_load_array(c, "scored.peak_vals", &c->peak_vals) &&
              bu_load_array(c, "scored.peak_channel_inds", &c->peak_channel_inds) &&
              bu_load_array(c, "scored.edge_inds", &c->edge_inds) &&
              bu_load_array(c, "scored.edge_peak_inds", &c->edge_peak_inds) &&
              bu_load_array(c, "scored.line_scores", &c->line_scores);
    if (!ok)
        return false;
    CHECK_MSG(c->pafs.shape[1] == 2 * c->n_edges && c->cms.shape[1] == c->n_nodes,
              "%s: heads do not fit the skeleton", id);
    /* Strides follow from the geometry: input rows per map row. */
    c->paf_stride = (int)(c->input.shape[3] / c->pafs.shape[2]);
    CHECK(c->paf_stride * c->pafs.shape[2] == c->input.shape[3]);

    const cJSON *call = ref_obj(c->manifest, "predict_call");
    c->score_opts = sleapc__paf_score_opts_default();
    c->score_opts.paf_stride = c->paf_stride;
    c->score_opts.n_points = (int)ref_num(call, "n_points", 10);
    c->score_opts.max_edge_length_ratio = ref_num(call, "max_edge_length_ratio", 0.25);
    c->score_opts.dist_penalty_weight = ref_num(call, "dist_penalty_weight", 1.0);
    c->group_opts = sleapc__grouping_opts_default();
    c->group_opts.min_line_scores = ref_num(call, "min_line_scores", 0.25);
    c->group_opts.min_instance_peaks = ref_num(call, "min_instance_peaks", 0);
    c->max_instances = (int64_t)ref_num(call, "max_instances", 0);

    const cJSON *info = ref_obj(c->manifest, "preprocess_info");
    c->input_scale = (float)ref_num(info, "input_scale", 1.0);
    const cJSON *eff = ref_obj(info, "eff_scale");
    for (int b = 0; b < 16; b++) {
        const cJSON *v = cJSON_GetArrayItem(eff, b);
        c->eff_scale[b] = cJSON_IsNumber(v) ? (float)v->valuedouble : 1.0f;
    }
    return true;
}

/* Case ids that hold a scored bottom-up PAF graph. */
static inline int bu_list_cases(ref_cases *all, const char **ids, int cap)
{
    ref_list_cases(all);
    int n = 0;
    for (int i = 0; i < all->n && n < cap; i++) {
        if (ref_has(all->ids[i], "bottomup.scored.peaks"))
            ids[n++] = all->ids[i];
    }
    return n;
}

#endif
