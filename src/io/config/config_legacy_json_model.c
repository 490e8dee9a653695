/* Legacy training_config.json, model part: data.preprocessing and
 * instance_cropping, model.backbone and model.heads, mapped as sleap-nn's
 * model_mapper and data_mapper do. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/config/config_legacy_json_impl.h"
#include "io/config/model_config.h"

/* ---- data.preprocessing, data.instance_cropping ----------------------- */

sleapc_status sleapc__cfgjson_read_preprocessing(const sleapc_cfgjson_reader *r, const cJSON *root,
                                                 sleapc_model_config *cfg)
{
    const cJSON *data, *pre, *crop;
    const char *pp = "data.preprocessing";
    sleapc_status st = sleapc__cfgjson_get_object(r, root, NULL, "data", &data);
    if (!st)
        st = sleapc__cfgjson_get_object(r, data, "data", "preprocessing", &pre);
    if (!st)
        st = sleapc__cfgjson_read_bool(r, pre, pp, "ensure_rgb", &cfg->ensure_rgb);
    if (!st)
        st = sleapc__cfgjson_read_bool(r, pre, pp, "ensure_grayscale", &cfg->ensure_grayscale);
    if (!st)
        st = sleapc__cfgjson_read_positive_double(r, pre, pp, "input_scaling", &cfg->scale);
    if (!st)
        st = sleapc__cfgjson_read_int(r, pre, pp, "pad_to_stride", INT_POSITIVE,
                                      &cfg->pad_to_stride);
    /* SLEAP's default is true; sleap-nn maps target_* onto max_* regardless. */
    cfg->resize_and_pad_to_target = true;
    if (!st)
        st = sleapc__cfgjson_read_bool(r, pre, pp, "resize_and_pad_to_target",
                                       &cfg->resize_and_pad_to_target);
    if (!st)
        st = sleapc__cfgjson_read_int(r, pre, pp, "target_height", INT_POSITIVE, &cfg->max_height);
    if (!st)
        st = sleapc__cfgjson_read_int(r, pre, pp, "target_width", INT_POSITIVE, &cfg->max_width);
    if (!st)
        st = sleapc__cfgjson_get_object(r, data, "data", "instance_cropping", &crop);
    if (!st)
        st = sleapc__cfgjson_read_int(r, crop, "data.instance_cropping", "crop_size", INT_POSITIVE,
                                      &cfg->crop_size);
    return st;
}

/* ---- model.backbone -------------------------------------------------- */

/* The first non-null backbone entry (SLEAP's oneof); UNet keys as sleap-nn's
 * model_mapper copies them. */
sleapc_status sleapc__cfgjson_read_backbone(const sleapc_cfgjson_reader *r, const cJSON *model,
                                            sleapc_model_config *cfg)
{
    const cJSON *bb, *e, *unet = NULL;
    sleapc_status st = sleapc__cfgjson_require_object(r, model, "model", "backbone", &bb);
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
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, "model.backbone",
                                       "no backbone: every entry is null");
    snprintf(cfg->backbone_name, sizeof cfg->backbone_name, "%s", name);
    if (strcmp(name, "unet") != 0) {
        cfg->backbone_type = SLEAPC_BACKBONE_OTHER;
        return SLEAPC_OK; /* recorded; the model loader refuses what it cannot build */
    }
    if (!cJSON_IsObject(unet))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, "model.backbone.unet",
                                       "expected an object, got %s",
                                       sleapc__cfgjson_kind_name(unet));
    const char *up = "model.backbone.unet";
    sleapc_unet_config *u = &cfg->unet;
    /* The JSON has no kernel_size or convs_per_block: SLEAP hard-codes 3 and 2. */
    u->kernel_size = 3;
    u->convs_per_block = 2;
    st = sleapc__cfgjson_read_int(r, unet, up, "filters", INT_POSITIVE, &u->filters);
    if (!st)
        st = sleapc__cfgjson_read_positive_double(r, unet, up, "filters_rate", &u->filters_rate);
    if (!st)
        st = sleapc__cfgjson_read_int(r, unet, up, "max_stride", INT_POW2, &u->max_stride);
    if (!st)
        st = sleapc__cfgjson_read_int(r, unet, up, "output_stride", INT_POW2, &u->output_stride);
    if (!st)
        st = sleapc__cfgjson_read_int(r, unet, up, "stacks", INT_POSITIVE, &u->stacks);
    if (!st)
        st = sleapc__cfgjson_read_bool(r, unet, up, "middle_block", &u->middle_block);
    if (!st)
        st = sleapc__cfgjson_read_bool(r, unet, up, "up_interpolate", &u->up_interpolate);
    /* sleap-nn's mapper turns an absent stem_stride into 16 (a stem); SLEAP's
     * own default is null, which is what the key being absent means. */
    if (!st && !cJSON_HasObjectItem(unet, "stem_stride"))
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: %s.stem_stride is absent; using null (no stem) as SLEAP does", r->path,
                    up);
    if (!st)
        st = sleapc__cfgjson_read_int(r, unet, up, "stem_stride", INT_POW2, &u->stem_stride);
    return st;
}

/* ---- model.heads ----------------------------------------------------- */

/* A confmaps config (flat head objects or the "confmaps" member).
 * part_names null -> the skeleton's nodes; a centroid map has one channel. */
static sleapc_status read_confmaps(const sleapc_cfgjson_reader *r, const cJSON *cm, const char *kp,
                                   sleapc_model_config *cfg)
{
    const char *anchor = NULL;
    const sleapc_skeleton_config *sk = &cfg->skeleton;
    sleapc_status st = SLEAPC_OK;
    if (cfg->model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE)
        st = sleapc__cfgjson_read_str(r, cm, kp, "anchor_part", &anchor);
    if (!st && anchor && sk->n_nodes > 0 &&
        sleapc__cfgjson_find_name(sk->node_names, sk->n_nodes, anchor) < 0)
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp,
                                       "anchor_part '%s' is not a skeleton node", anchor);
    if (!st && anchor)
        st = sleapc__cfgjson_dup_str(r, anchor, &cfg->anchor_part);
    if (!st)
        st = sleapc__cfgjson_read_positive_double(r, cm, kp, "sigma", &cfg->confmaps_sigma);
    if (!st)
        st = sleapc__cfgjson_read_int(r, cm, kp, "output_stride", INT_POW2, &cfg->confmaps_stride);
    if (st)
        return st;
    if (cfg->model_type == SLEAPC_MODEL_TYPE_CENTROID) {
        st = sleapc__cfgjson_new_names(r, 1, &cfg->part_names, &cfg->n_part_names);
        if (!st)
            st = sleapc__cfgjson_dup_str(r, "centroid", &cfg->part_names[0]);
        return st;
    }
    const cJSON *parts = sleapc__cfgjson_get(cm, "part_names");
    if (parts) {
        char kpp[256];
        return sleapc__cfgjson_read_names(
            r, parts, sleapc__cfgjson_key_path(kpp, sizeof kpp, kp, "part_names"), &cfg->part_names,
            &cfg->n_part_names);
    }
    st = sleapc__cfgjson_new_names(r, sk->n_nodes, &cfg->part_names, &cfg->n_part_names);
    for (int i = 0; !st && i < sk->n_nodes; i++)
        st = sleapc__cfgjson_dup_str(r, sk->node_names[i], &cfg->part_names[i]);
    return st;
}

/* multi_instance.pafs: edges as [[src, dst], ...] node names; null -> the
 * skeleton's edges, mapped by name onto part_names. */
static sleapc_status read_pafs(const sleapc_cfgjson_reader *r, const cJSON *pafs, const char *kp,
                               sleapc_model_config *cfg)
{
    char ke[256];
    sleapc_status st = sleapc__cfgjson_read_positive_double(r, pafs, kp, "sigma", &cfg->pafs_sigma);
    if (!st)
        st = sleapc__cfgjson_read_int(r, pafs, kp, "output_stride", INT_POW2, &cfg->pafs_stride);
    if (st)
        return st;
    const cJSON *edges = sleapc__cfgjson_get(pafs, "edges");
    sleapc__cfgjson_key_path(ke, sizeof ke, kp, "edges");
    if (edges) {
        st = sleapc__cfgjson_check_list(r, edges, ke);
        int n = cJSON_GetArraySize(edges), i = 0;
        if (!st)
            st = sleapc__cfgjson_new_pairs(r, n, &cfg->paf_edges, &cfg->n_paf_edges);
        const cJSON *pair;
        cJSON_ArrayForEach(pair, edges)
        {
            if (st)
                break;
            if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
                return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, ke,
                                               "entry %d: expected a pair of names", i);
            for (int k = 0; k < 2; k++) {
                const cJSON *end = cJSON_GetArrayItem(pair, k);
                int j = cJSON_IsString(end)
                            ? sleapc__cfgjson_find_name(cfg->part_names, cfg->n_part_names,
                                                        end->valuestring)
                            : -1;
                if (j < 0)
                    return sleapc__cfgjson_fail_at(
                        r, SLEAPC_ERR_FORMAT, ke, "entry %d: %s is not a part name", i,
                        cJSON_IsString(end) ? end->valuestring : "an entry");
                cfg->paf_edges[i][k] = j;
            }
            i++;
        }
        return st;
    }
    const sleapc_skeleton_config *sk = &cfg->skeleton;
    st = sleapc__cfgjson_new_pairs(r, sk->n_edges, &cfg->paf_edges, &cfg->n_paf_edges);
    for (int i = 0; !st && i < sk->n_edges; i++) {
        for (int k = 0; k < 2; k++) {
            const char *node = sk->node_names[sk->edges[i][k]];
            int j = sleapc__cfgjson_find_name(cfg->part_names, cfg->n_part_names, node);
            if (j < 0)
                return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, ke,
                                               "null, and skeleton node '%s' is not in part_names",
                                               node);
            cfg->paf_edges[i][k] = j;
        }
    }
    return st;
}

static sleapc_status read_classes(const sleapc_cfgjson_reader *r, const cJSON *sub, const char *kp,
                                  sleapc_model_config *cfg)
{
    char kc[256];
    const cJSON *classes = sleapc__cfgjson_get(sub, "classes");
    if (!classes)
        return SLEAPC_OK;
    return sleapc__cfgjson_read_names(r, classes,
                                      sleapc__cfgjson_key_path(kc, sizeof kc, kp, "classes"),
                                      &cfg->classes, &cfg->n_classes);
}

/* multi_class_topdown.class_vectors. sleap-nn's mapper defaults an absent
 * num_fc_layers / num_fc_units to 2 / 1024; the model loader replaces both
 * by what the .h5 holds. */
static sleapc_status read_class_vectors(const sleapc_cfgjson_reader *r, const cJSON *cv,
                                        const char *kp, sleapc_model_config *cfg)
{
    cfg->class_vectors_fc_layers = 2;
    cfg->class_vectors_fc_units = 1024;
    cfg->class_vectors_stride = cfg->unet.max_stride;
    sleapc_status st = read_classes(r, cv, kp, cfg);
    if (!st) {
        /* SLEAP allows 0 fc layers; read_int refuses 0, so check by hand. */
        const cJSON *n = sleapc__cfgjson_get(cv, "num_fc_layers");
        if (n && cJSON_IsNumber(n) && n->valuedouble == 0)
            cfg->class_vectors_fc_layers = 0;
        else
            st = sleapc__cfgjson_read_int(r, cv, kp, "num_fc_layers", INT_POSITIVE,
                                          &cfg->class_vectors_fc_layers);
    }
    if (!st)
        st = sleapc__cfgjson_read_int(r, cv, kp, "num_fc_units", INT_POSITIVE,
                                      &cfg->class_vectors_fc_units);
    if (!st)
        st = sleapc__cfgjson_read_bool(r, cv, kp, "global_pool", &cfg->class_vectors_global_pool);
    if (!st)
        st = sleapc__cfgjson_read_int(r, cv, kp, "output_stride", INT_POW2,
                                      &cfg->class_vectors_stride);
    return st;
}

/* SLEAP 1.x names the bottom-up head "multi_instance" (and has no "bottomup");
 * the other heads carry sleap-nn's model type names. */
static sleapc_model_type legacy_head_type(const char *key)
{
    if (strcmp(key, "bottomup") == 0)
        return SLEAPC_MODEL_TYPE_UNKNOWN;
    return sleapc__model_type_from_name(strcmp(key, "multi_instance") == 0 ? "bottomup" : key);
}

/* The first non-null entry of model.heads (SLEAP's oneof). */
static sleapc_status find_head(const sleapc_cfgjson_reader *r, const cJSON *heads,
                               sleapc_model_config *cfg, const cJSON **head, const char **key)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, heads)
    {
        if (cJSON_IsNull(e))
            continue;
        sleapc_model_type type = legacy_head_type(e->string);
        if (type != SLEAPC_MODEL_TYPE_UNKNOWN) {
            if (!cJSON_IsObject(e))
                return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, "model.heads",
                                               "%s: expected an object, got %s", e->string,
                                               sleapc__cfgjson_kind_name(e));
            cfg->model_type = type;
            *head = e;
            *key = e->string;
            return SLEAPC_OK;
        }
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_UNSUPPORTED, "model.heads",
                                       "unsupported head type '%s'", e->string);
    }
    return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, "model.heads",
                                   "no head: every entry is null");
}

sleapc_status sleapc__cfgjson_read_heads(const sleapc_cfgjson_reader *r, const cJSON *model,
                                         sleapc_model_config *cfg)
{
    const cJSON *heads, *head = NULL, *cm = NULL, *sub = NULL;
    const char *key = NULL;
    char kp[128], ks[128];
    sleapc_status st = sleapc__cfgjson_require_object(r, model, "model", "heads", &heads);
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
        st = sleapc__cfgjson_require_object(r, head, kp, "confmaps", &cm);
        snprintf(ks, sizeof ks, "%s.confmaps", kp);
        if (!st)
            st = read_confmaps(r, cm, ks, cfg);
        if (!st)
            st = sleapc__cfgjson_require_object(r, head, kp, "pafs", &sub);
        snprintf(ks, sizeof ks, "%s.pafs", kp);
        if (!st)
            st = read_pafs(r, sub, ks, cfg);
        return st;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP:
        st = sleapc__cfgjson_require_object(r, head, kp, "confmaps", &cm);
        snprintf(ks, sizeof ks, "%s.confmaps", kp);
        if (!st)
            st = read_confmaps(r, cm, ks, cfg);
        if (!st)
            st = sleapc__cfgjson_require_object(r, head, kp, "class_maps", &sub);
        snprintf(ks, sizeof ks, "%s.class_maps", kp);
        if (!st)
            st = read_classes(r, sub, ks, cfg);
        if (!st)
            st = sleapc__cfgjson_read_int(r, sub, ks, "output_stride", INT_POW2,
                                          &cfg->class_maps_stride);
        return st;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN:
        st = sleapc__cfgjson_require_object(r, head, kp, "confmaps", &cm);
        snprintf(ks, sizeof ks, "%s.confmaps", kp);
        if (!st)
            st = read_confmaps(r, cm, ks, cfg);
        if (!st)
            st = sleapc__cfgjson_require_object(r, head, kp, "class_vectors", &sub);
        snprintf(ks, sizeof ks, "%s.class_vectors", kp);
        if (!st)
            st = read_class_vectors(r, sub, ks, cfg);
        return st;
    case SLEAPC_MODEL_TYPE_BBOX_CENTERNET:
    case SLEAPC_MODEL_TYPE_BBOX_SSD: /* sleap-nn 0.3.5 only: never in a SLEAP 1.x config */
    case SLEAPC_MODEL_TYPE_EMBEDDING:
    case SLEAPC_MODEL_TYPE_UNKNOWN:
        break;
    }
    return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, "model.heads", "unknown model type");
}
