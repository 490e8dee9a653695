/* sleap-nn training_config.yaml -> sleapc_model_config. Keys and defaults
 * follow sleap-nn's config/data_config.py and config/model_config.py. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/config/config_yaml_bbox.h"
#include "io/config/config_yaml_embedding.h"
#include "io/config/config_yaml_crop.h"
#include "io/config/config_yaml_tiling.h"
#include "io/config/config_yaml_tree.h"
#include "io/config/model_config.h"

/* Skeletons and class lists are tens of names; the cap keeps the quadratic
 * name lookups of a hostile file cheap. */
#define NAMES_MAX 10000

enum int_rule { INT_ANY, INT_POSITIVE, INT_POW2 };

static sleapc_status nomem(const sleapc_yaml_tree *t)
{
    return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_NOMEM, "out of memory");
}

/* parent.rel as an int (absent or null: dflt, unchecked), then the rule. */
static sleapc_status read_int(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                              int dflt, enum int_rule rule, int *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_int(t, &r, NULL, dflt, out);
    if (st || sleapc__yaml_is_null(&r))
        return st;
    if (rule != INT_ANY && *out <= 0)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be positive, got %d", *out);
    if (rule == INT_POW2 && (*out & (*out - 1)) != 0)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be a power of two, got %d", *out);
    return SLEAPC_OK;
}

static sleapc_status read_positive_double(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                          const char *rel, double dflt, double *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_double(t, &r, NULL, dflt, out);
    if (!st && !sleapc__yaml_is_null(&r) && !(*out > 0.0))
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be positive, got %g", *out);
    return st;
}

static sleapc_status dup_str(const sleapc_yaml_tree *t, const char *s, char **out)
{
    *out = sleapc__strdup(s);
    return *out ? SLEAPC_OK : nomem(t);
}

/* Zeroed arrays of n names or index pairs. *n_out is set only with the
 * array, so sleapc__model_config_clear can always free what is there. */
static sleapc_status new_names(const sleapc_yaml_tree *t, int n, char ***out, int *n_out)
{
    *out = sleapc__calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return nomem(t);
    *n_out = n;
    return SLEAPC_OK;
}

static sleapc_status new_pairs(const sleapc_yaml_tree *t, int n, int (**out)[2], int *n_out)
{
    *out = sleapc__calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return nomem(t);
    *n_out = n;
    return SLEAPC_OK;
}

static sleapc_status check_list(sleapc_yaml_tree *t, const sleapc_yaml_ref *r)
{
    if (!sleapc__yaml_is_seq(r))
        return sleapc__yaml_fail(t, r, SLEAPC_ERR_FORMAT, "expected a list");
    if (sleapc__yaml_seq_len(r) > NAMES_MAX)
        return sleapc__yaml_fail(t, r, SLEAPC_ERR_FORMAT, "more than %d entries", NAMES_MAX);
    return SLEAPC_OK;
}

/* A name written either plainly or as a {name: ...} mapping (sleap-io's
 * SkeletonYAMLEncoder writes nodes, edge ends and symmetry members that way). */
static sleapc_status read_name(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, const char **out)
{
    sleapc_yaml_ref nr = *r;
    sleapc_status st = SLEAPC_OK;
    if (sleapc__yaml_is_map(r))
        st = sleapc__yaml_get(t, r, "name", &nr);
    if (!st)
        st = sleapc__yaml_str(t, &nr, NULL, out);
    if (!st && !*out)
        return sleapc__yaml_fail(t, &nr, SLEAPC_ERR_FORMAT, "expected a name");
    return st;
}

/* A list of names into an owned array. */
static sleapc_status read_names(sleapc_yaml_tree *t, const sleapc_yaml_ref *list, char ***out,
                                int *n_out)
{
    sleapc_status st = check_list(t, list);
    int n = sleapc__yaml_seq_len(list);
    if (!st)
        st = new_names(t, n, out, n_out);
    for (int i = 0; !st && i < n; i++) {
        sleapc_yaml_ref item = sleapc__yaml_seq_item(t, list, i);
        const char *name;
        st = read_name(t, &item, &name);
        if (!st)
            st = dup_str(t, name, &(*out)[i]);
    }
    return st;
}

static int find_name(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* The index in names of the name at r; an unknown name is SLEAPC_ERR_FORMAT. */
static sleapc_status resolve_name(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, char *const *names,
                                  int n, const char *what, int *out)
{
    const char *name;
    sleapc_status st = read_name(t, r, &name);
    if (st)
        return st;
    *out = find_name(names, n, name);
    if (*out < 0)
        return sleapc__yaml_fail(t, r, SLEAPC_ERR_FORMAT, "unknown %s '%s'", what, name);
    return SLEAPC_OK;
}

/* A [a, b] pair of names (each plain or {name: ...}) into indices. */
static sleapc_status resolve_pair(sleapc_yaml_tree *t, const sleapc_yaml_ref *pair,
                                  char *const *names, int n, const char *what, int out[2])
{
    if (!sleapc__yaml_is_seq(pair) || sleapc__yaml_seq_len(pair) != 2)
        return sleapc__yaml_fail(t, pair, SLEAPC_ERR_FORMAT, "expected a pair of names");
    for (int k = 0; k < 2; k++) {
        sleapc_yaml_ref end = sleapc__yaml_seq_item(t, pair, k);
        sleapc_status st = resolve_name(t, &end, names, n, what, &out[k]);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static sleapc_status read_skeleton_nodes(sleapc_yaml_tree *t, const sleapc_yaml_ref *skel,
                                         sleapc_skeleton_config *sk)
{
    sleapc_yaml_ref nodes;
    sleapc_status st = sleapc__yaml_get(t, skel, "nodes", &nodes);
    if (st || sleapc__yaml_is_null(&nodes))
        return st;
    st = read_names(t, &nodes, &sk->node_names, &sk->n_nodes);
    for (int i = 0; !st && i < sk->n_nodes; i++) {
        if (find_name(sk->node_names, i, sk->node_names[i]) >= 0) {
            sleapc_yaml_ref item = sleapc__yaml_seq_item(t, &nodes, i);
            return sleapc__yaml_fail(t, &item, SLEAPC_ERR_FORMAT, "node '%s' listed twice",
                                     sk->node_names[i]);
        }
    }
    return st;
}

/* edges: [{source: {name: A}, destination: {name: B}}, ...] */
static sleapc_status read_skeleton_edges(sleapc_yaml_tree *t, const sleapc_yaml_ref *skel,
                                         sleapc_skeleton_config *sk)
{
    sleapc_yaml_ref edges;
    sleapc_status st = sleapc__yaml_get(t, skel, "edges", &edges);
    if (st || sleapc__yaml_is_null(&edges))
        return st;
    st = check_list(t, &edges);
    int n = sleapc__yaml_seq_len(&edges);
    if (!st)
        st = new_pairs(t, n, &sk->edges, &sk->n_edges);
    for (int i = 0; !st && i < n; i++) {
        sleapc_yaml_ref e = sleapc__yaml_seq_item(t, &edges, i), end;
        static const char *const ends[2] = {"source", "destination"};
        for (int k = 0; !st && k < 2; k++) {
            st = sleapc__yaml_require(t, &e, ends[k], &end);
            if (!st)
                st = resolve_name(t, &end, sk->node_names, sk->n_nodes, "node", &sk->edges[i][k]);
        }
    }
    return st;
}

/* symmetries: [[{name: L}, {name: R}], ...] (sleap-io) or [[L, R], ...]. */
static sleapc_status read_skeleton_symmetries(sleapc_yaml_tree *t, const sleapc_yaml_ref *skel,
                                              sleapc_skeleton_config *sk)
{
    sleapc_yaml_ref syms;
    sleapc_status st = sleapc__yaml_get(t, skel, "symmetries", &syms);
    if (st || sleapc__yaml_is_null(&syms))
        return st;
    st = check_list(t, &syms);
    int n = sleapc__yaml_seq_len(&syms);
    if (!st)
        st = new_pairs(t, n, &sk->symmetries, &sk->n_symmetries);
    for (int i = 0; !st && i < n; i++) {
        sleapc_yaml_ref pair = sleapc__yaml_seq_item(t, &syms, i);
        st = resolve_pair(t, &pair, sk->node_names, sk->n_nodes, "node", sk->symmetries[i]);
    }
    return st;
}

/* data_config.skeletons[0]; no skeletons gives an empty skeleton. */
static sleapc_status read_skeleton(sleapc_yaml_tree *t, const sleapc_yaml_ref *data,
                                   sleapc_skeleton_config *sk)
{
    sleapc_yaml_ref list;
    sleapc_status st = sleapc__yaml_get(t, data, "skeletons", &list);
    if (!st && !sleapc__yaml_is_null(&list) && !sleapc__yaml_is_seq(&list))
        st = sleapc__yaml_fail(t, &list, SLEAPC_ERR_FORMAT, "expected a list");
    const char *name = NULL;
    if (!st && sleapc__yaml_seq_len(&list) > 0) {
        sleapc_yaml_ref skel = sleapc__yaml_seq_item(t, &list, 0);
        if (!sleapc__yaml_is_map(&skel))
            return sleapc__yaml_fail(t, &skel, SLEAPC_ERR_FORMAT, "expected a mapping");
        st = sleapc__yaml_str(t, &skel, "name", &name);
        if (!st)
            st = read_skeleton_nodes(t, &skel, sk);
        if (!st)
            st = read_skeleton_edges(t, &skel, sk);
        if (!st)
            st = read_skeleton_symmetries(t, &skel, sk);
    }
    if (!st)
        st = dup_str(t, name ? name : "", &sk->name);
    return st;
}

static sleapc_status read_preprocessing(sleapc_yaml_tree *t, const sleapc_yaml_ref *data,
                                        sleapc_model_config *cfg)
{
    sleapc_yaml_ref pre, scale, crop;
    sleapc_status st = sleapc__yaml_get(t, data, "preprocessing", &pre);
    /* sleap-nn 0.3.5's box-scaled crops: read here, checked against stage 1
     * when the layer is made (layer.c). */
    if (!st)
        st = sleapc__config_read_crop_mode(t, data, &pre, cfg);
    if (!st)
        st = sleapc__yaml_bool(t, &pre, "ensure_rgb", false, &cfg->ensure_rgb);
    if (!st)
        st = sleapc__yaml_bool(t, &pre, "ensure_grayscale", false, &cfg->ensure_grayscale);
    if (!st)
        st = read_int(t, &pre, "max_height", 0, INT_POSITIVE, &cfg->max_height);
    if (!st)
        st = read_int(t, &pre, "max_width", 0, INT_POSITIVE, &cfg->max_width);
    if (!st)
        st = sleapc__config_read_tiling(t, &pre, cfg);
    /* Legacy configs may hold scale as a list; sleap-nn uses its first element. */
    if (!st)
        st = sleapc__yaml_get(t, &pre, "scale", &scale);
    if (!st && sleapc__yaml_is_seq(&scale)) {
        if (sleapc__yaml_seq_len(&scale) == 0)
            return sleapc__yaml_fail(t, &scale, SLEAPC_ERR_FORMAT, "empty list");
        scale = sleapc__yaml_seq_item(t, &scale, 0);
    }
    if (!st)
        st = read_positive_double(t, &scale, NULL, 1.0, &cfg->scale);
    /* crop_size may be [side] or [h, w] (sleap-nn export/utils.py resolve_crop_size);
     * crops here are square. */
    if (!st)
        st = sleapc__yaml_get(t, &pre, "crop_size", &crop);
    if (!st && sleapc__yaml_is_seq(&crop)) {
        int n = sleapc__yaml_seq_len(&crop), side[2] = {0, 0};
        if (n != 1 && n != 2)
            return sleapc__yaml_fail(t, &crop, SLEAPC_ERR_FORMAT, "expected 1 or 2 sizes");
        for (int i = 0; !st && i < n; i++) {
            sleapc_yaml_ref item = sleapc__yaml_seq_item(t, &crop, i);
            st = read_int(t, &item, NULL, 0, INT_POSITIVE, &side[i]);
        }
        if (!st && n == 2 && side[0] != side[1])
            return sleapc__yaml_fail(t, &crop, SLEAPC_ERR_UNSUPPORTED, "non-square crop %dx%d",
                                     side[0], side[1]);
        cfg->crop_size = side[0];
        return st;
    }
    if (!st)
        st = read_int(t, &crop, NULL, 0, INT_POSITIVE, &cfg->crop_size);
    return st;
}

/* model_config.backbone_config: the first non-null entry, in file order
 * (sleap-nn config/utils.py get_backbone_type_from_cfg). */
static sleapc_status read_backbone(sleapc_yaml_tree *t, const sleapc_yaml_ref *model,
                                   sleapc_model_config *cfg)
{
    sleapc_yaml_ref bb, unet;
    sleapc_status st = sleapc__yaml_require(t, model, "backbone_config", &bb);
    if (st)
        return st;
    if (!sleapc__yaml_is_map(&bb))
        return sleapc__yaml_fail(t, &bb, SLEAPC_ERR_FORMAT, "expected a mapping");
    const char *name = NULL;
    for (int i = 0; !name && i < sleapc__yaml_map_len(&bb); i++) {
        const char *key;
        sleapc_yaml_ref e = sleapc__yaml_map_entry(t, &bb, i, &key);
        if (!sleapc__yaml_is_null(&e))
            name = key ? key : "?";
    }
    if (!name)
        return sleapc__yaml_fail(t, &bb, SLEAPC_ERR_FORMAT, "no backbone: every entry is null");
    snprintf(cfg->backbone_name, sizeof cfg->backbone_name, "%s", name);
    if (strcmp(name, "convnext") == 0)
        cfg->backbone_type = SLEAPC_BACKBONE_CONVNEXT;
    else if (strcmp(name, "swint") == 0)
        cfg->backbone_type = SLEAPC_BACKBONE_SWINT;
    else if (strcmp(name, "unet") != 0)
        cfg->backbone_type = SLEAPC_BACKBONE_OTHER;
    if (cfg->backbone_type == SLEAPC_BACKBONE_CONVNEXT ||
        cfg->backbone_type == SLEAPC_BACKBONE_SWINT) {
        sleapc_yaml_ref sub;
        st = sleapc__yaml_get(t, &bb, name, &sub);
        if (!st)
            st = sleapc__config_read_vit(t, &sub, cfg->backbone_type == SLEAPC_BACKBONE_SWINT,
                                         &cfg->vit);
        if (!st)
            cfg->unet.in_channels = cfg->vit.in_channels;
        return st;
    }
    if (cfg->backbone_type != SLEAPC_BACKBONE_UNET)
        return SLEAPC_OK; /* recorded; the model builder refuses what it cannot build */

    sleapc_unet_config *u = &cfg->unet;
    st = sleapc__yaml_get(t, &bb, "unet", &unet);
    if (!st && !sleapc__yaml_is_map(&unet))
        st = sleapc__yaml_fail(t, &unet, SLEAPC_ERR_FORMAT, "expected a mapping");
    if (!st)
        st = read_int(t, &unet, "in_channels", u->in_channels, INT_POSITIVE, &u->in_channels);
    if (!st)
        st = read_int(t, &unet, "kernel_size", u->kernel_size, INT_POSITIVE, &u->kernel_size);
    if (!st)
        st = read_int(t, &unet, "filters", u->filters, INT_POSITIVE, &u->filters);
    if (!st)
        st = read_positive_double(t, &unet, "filters_rate", u->filters_rate, &u->filters_rate);
    if (!st)
        st = read_int(t, &unet, "max_stride", u->max_stride, INT_POW2, &u->max_stride);
    if (!st)
        st = read_int(t, &unet, "stem_stride", 0, INT_POW2, &u->stem_stride);
    if (!st)
        st = sleapc__yaml_bool(t, &unet, "middle_block", u->middle_block, &u->middle_block);
    if (!st)
        st = sleapc__yaml_bool(t, &unet, "up_interpolate", u->up_interpolate, &u->up_interpolate);
    if (!st)
        st = read_int(t, &unet, "stacks", u->stacks, INT_POSITIVE, &u->stacks);
    if (!st)
        st = read_int(t, &unet, "convs_per_block", u->convs_per_block, INT_POSITIVE,
                      &u->convs_per_block);
    if (!st)
        st = read_int(t, &unet, "output_stride", u->output_stride, INT_POW2, &u->output_stride);
    return st;
}

/* <head>.confmaps. part_names null -> the skeleton's nodes; a centroid map has
 * one channel. */
static sleapc_status read_confmaps(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                   sleapc_model_config *cfg)
{
    sleapc_yaml_ref cm, parts, anchor_ref;
    const char *anchor = NULL;
    const sleapc_skeleton_config *sk = &cfg->skeleton;
    sleapc_status st = sleapc__yaml_require(t, head, "confmaps", &cm);
    if (!st && cfg->model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE)
        st = sleapc__yaml_get(t, &cm, "anchor_part", &anchor_ref);
    if (!st && cfg->model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE)
        st = sleapc__yaml_str(t, &anchor_ref, NULL, &anchor);
    /* sleap-nn looks the anchor up among the skeleton's node names. */
    if (!st && anchor && sk->n_nodes > 0 && find_name(sk->node_names, sk->n_nodes, anchor) < 0)
        return sleapc__yaml_fail(t, &anchor_ref, SLEAPC_ERR_FORMAT, "unknown node '%s'", anchor);
    if (!st && anchor)
        st = dup_str(t, anchor, &cfg->anchor_part);
    /* How a crop centre is made from an instance's points (sleap-nn 0.3.5
     * #586): read for the crop-consuming model, checked where it is used. */
    const char *method = NULL, *fallback = NULL;
    if (!st && cfg->model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE)
        st = sleapc__yaml_str(t, &cm, "centroid_method", &method);
    if (!st && cfg->model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE)
        st = sleapc__yaml_str(t, &cm, "centroid_fallback", &fallback);
    if (!st && method)
        st = dup_str(t, method, &cfg->centroid_method);
    if (!st && fallback)
        st = dup_str(t, fallback, &cfg->centroid_fallback);
    if (!st && cfg->model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE)
        st = sleapc__config_read_centroid_method(t, &cm, cfg);
    if (!st)
        st = read_positive_double(t, &cm, "sigma", cfg->confmaps_sigma, &cfg->confmaps_sigma);
    if (!st)
        st = read_int(t, &cm, "output_stride", cfg->confmaps_stride, INT_POW2,
                      &cfg->confmaps_stride);
    if (st)
        return st;

    if (cfg->model_type == SLEAPC_MODEL_TYPE_CENTROID) {
        /* sleap-nn 0.3.5 (heads.py CentroidConfmapsHead): a sigmoid on the
         * head's output, trained and run as (0, 1) probabilities. */
        st = sleapc__yaml_bool(t, &cm, "use_sigmoid_activation", false, &cfg->confmaps_sigmoid);
        if (!st)
            st = new_names(t, 1, &cfg->part_names, &cfg->n_part_names);
        if (!st)
            st = dup_str(t, "centroid", &cfg->part_names[0]);
        return st;
    }
    st = sleapc__yaml_get(t, &cm, "part_names", &parts);
    if (!st && !sleapc__yaml_is_null(&parts))
        return read_names(t, &parts, &cfg->part_names, &cfg->n_part_names);
    if (!st)
        st = new_names(t, sk->n_nodes, &cfg->part_names, &cfg->n_part_names);
    for (int i = 0; !st && i < sk->n_nodes; i++)
        st = dup_str(t, sk->node_names[i], &cfg->part_names[i]);
    return st;
}

/* bottomup.pafs. edges null -> the skeleton's edges, mapped by node name onto
 * part_names. */
static sleapc_status read_pafs(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                               sleapc_model_config *cfg)
{
    sleapc_yaml_ref pafs, edges;
    sleapc_status st = sleapc__yaml_require(t, head, "pafs", &pafs);
    if (!st)
        st = read_positive_double(t, &pafs, "sigma", cfg->pafs_sigma, &cfg->pafs_sigma);
    if (!st)
        st = read_int(t, &pafs, "output_stride", cfg->pafs_stride, INT_POW2, &cfg->pafs_stride);
    if (!st)
        st = sleapc__yaml_get(t, &pafs, "edges", &edges);
    if (st)
        return st;
    if (!sleapc__yaml_is_null(&edges)) {
        st = check_list(t, &edges);
        int n = sleapc__yaml_seq_len(&edges);
        if (!st)
            st = new_pairs(t, n, &cfg->paf_edges, &cfg->n_paf_edges);
        for (int i = 0; !st && i < n; i++) {
            sleapc_yaml_ref pair = sleapc__yaml_seq_item(t, &edges, i);
            st = resolve_pair(t, &pair, cfg->part_names, cfg->n_part_names, "part",
                              cfg->paf_edges[i]);
        }
        return st;
    }
    const sleapc_skeleton_config *sk = &cfg->skeleton;
    st = new_pairs(t, sk->n_edges, &cfg->paf_edges, &cfg->n_paf_edges);
    for (int i = 0; !st && i < sk->n_edges; i++) {
        for (int k = 0; k < 2; k++) {
            const char *node = sk->node_names[sk->edges[i][k]];
            int j = find_name(cfg->part_names, cfg->n_part_names, node);
            if (j < 0)
                return sleapc__yaml_fail(t, &edges, SLEAPC_ERR_FORMAT,
                                         "null, and skeleton node '%s' is not in part_names", node);
            cfg->paf_edges[i][k] = j;
        }
    }
    return st;
}

static sleapc_status read_classes(sleapc_yaml_tree *t, const sleapc_yaml_ref *sub,
                                  sleapc_model_config *cfg)
{
    sleapc_yaml_ref classes;
    sleapc_status st = sleapc__yaml_get(t, sub, "classes", &classes);
    if (st || sleapc__yaml_is_null(&classes))
        return st; /* null until training fills in the track names */
    return read_names(t, &classes, &cfg->classes, &cfg->n_classes);
}

/* class_output: "track" (the default) or "identity" (sleap-nn 0.3.5
 * ClassMapConfig / ClassVectorsConfig; predictor.py _multiclass_class_output). */
static sleapc_status read_class_output(sleapc_yaml_tree *t, const sleapc_yaml_ref *sub,
                                       sleapc_model_config *cfg)
{
    sleapc_yaml_ref ref;
    const char *out = NULL;
    sleapc_status st = sleapc__yaml_get(t, sub, "class_output", &ref);
    if (!st && !sleapc__yaml_is_null(&ref))
        st = sleapc__yaml_str(t, &ref, NULL, &out);
    if (st || !out)
        return st;
    if (strcmp(out, "identity") == 0)
        cfg->class_identity = true;
    else if (strcmp(out, "track") != 0)
        return sleapc__yaml_fail(t, &ref, SLEAPC_ERR_FORMAT,
                                 "unknown value '%s' (expected track or identity)",
                                 out);
    return SLEAPC_OK;
}

/* multi_class_bottomup.class_maps / multi_class_topdown.class_vectors */
static sleapc_status read_class_head(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                     sleapc_model_config *cfg)
{
    sleapc_yaml_ref sub;
    sleapc_status st;
    if (cfg->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP) {
        st = sleapc__yaml_require(t, head, "class_maps", &sub);
        if (!st)
            st = read_classes(t, &sub, cfg);
        if (!st)
            st = read_class_output(t, &sub, cfg);
        if (!st)
            st = read_int(t, &sub, "output_stride", cfg->class_maps_stride, INT_POW2,
                          &cfg->class_maps_stride);
        return st;
    }
    /* Its output_stride is forced to max_stride at training time. */
    cfg->class_vectors_stride = cfg->unet.max_stride;
    st = sleapc__yaml_require(t, head, "class_vectors", &sub);
    if (!st)
        st = read_classes(t, &sub, cfg);
    if (!st)
        st = read_class_output(t, &sub, cfg);
    if (!st)
        st = read_int(t, &sub, "num_fc_layers", cfg->class_vectors_fc_layers, INT_POSITIVE,
                      &cfg->class_vectors_fc_layers);
    if (!st)
        st = read_int(t, &sub, "num_fc_units", cfg->class_vectors_fc_units, INT_POSITIVE,
                      &cfg->class_vectors_fc_units);
    if (!st)
        st = sleapc__yaml_bool(t, &sub, "global_pool", cfg->class_vectors_global_pool,
                               &cfg->class_vectors_global_pool);
    if (!st)
        st = read_int(t, &sub, "output_stride", cfg->class_vectors_stride, INT_POW2,
                      &cfg->class_vectors_stride);
    return st;
}

/* The first non-null entry of head_configs, in file order (sleap-nn
 * config/utils.py get_model_type_from_cfg). */
static sleapc_status find_head(sleapc_yaml_tree *t, const sleapc_yaml_ref *heads,
                               sleapc_model_config *cfg, sleapc_yaml_ref *head)
{
    if (!sleapc__yaml_is_map(heads))
        return sleapc__yaml_fail(t, heads, SLEAPC_ERR_FORMAT, "expected a mapping");
    for (int i = 0; i < sleapc__yaml_map_len(heads); i++) {
        const char *key;
        *head = sleapc__yaml_map_entry(t, heads, i, &key);
        if (sleapc__yaml_is_null(head))
            continue;
        cfg->model_type = sleapc__model_type_from_name(key);
        if (cfg->model_type != SLEAPC_MODEL_TYPE_UNKNOWN)
            return SLEAPC_OK;
        return sleapc__yaml_fail(t, head, SLEAPC_ERR_UNSUPPORTED, "unsupported head type '%s'",
                                 key ? key : "?");
    }
    return sleapc__yaml_fail(t, heads, SLEAPC_ERR_FORMAT, "no head: every entry is null");
}

static sleapc_status read_config(sleapc_yaml_tree *t, sleapc_model_config *cfg)
{
    sleapc_yaml_ref root = sleapc__yaml_root(t), model, heads, head, data;
    if (!sleapc__yaml_is_map(&root))
        return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT, "expected a mapping at the top");
    sleapc_status st = sleapc__yaml_require(t, &root, "model_config", &model);
    if (!st)
        st = sleapc__yaml_require(t, &model, "head_configs", &heads);
    if (!st)
        st = find_head(t, &heads, cfg, &head);
    if (!st)
        st = read_backbone(t, &model, cfg);
    if (!st)
        st = sleapc__yaml_get(t, &root, "data_config", &data);
    if (!st)
        st = read_preprocessing(t, &data, cfg);
    if (!st)
        st = read_skeleton(t, &data, &cfg->skeleton);
    /* Box detectors have no confidence maps (and may have no skeleton). */
    bool bbox = cfg->model_type == SLEAPC_MODEL_TYPE_BBOX_CENTERNET ||
                cfg->model_type == SLEAPC_MODEL_TYPE_BBOX_SSD;
    if (!st && bbox)
        return sleapc__config_read_bbox(t, &head, cfg);
    /* An embedding model embeds crops: no confidence maps either. */
    if (!st && cfg->model_type == SLEAPC_MODEL_TYPE_EMBEDDING) {
        sleapc_yaml_ref pre;
        st = sleapc__yaml_get(t, &data, "preprocessing", &pre);
        if (!st)
            st = sleapc__yaml_bool(t, &pre, "burn_in", false, &cfg->embedding.burn_in);
        return st ? st : sleapc__config_read_embedding(t, &head, cfg);
    }
    if (!st)
        st = read_confmaps(t, &head, cfg);
    if (!st && cfg->model_type == SLEAPC_MODEL_TYPE_BOTTOMUP)
        st = read_pafs(t, &head, cfg);
    if (!st && (cfg->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP ||
                cfg->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN))
        st = read_class_head(t, &head, cfg);
    return st;
}

sleapc_status sleapc__config_read_yaml(const char *path, sleapc_model_config *cfg)
{
    if (!cfg)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read config: cfg is required");
    sleapc__model_config_defaults(cfg);
    if (!path) {
        sleapc__model_config_clear(cfg);
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read config: path is required");
    }
    sleapc_yaml_tree t;
    sleapc_status st = sleapc__yaml_tree_load(&t, "read config", path);
    if (!st)
        st = dup_str(&t, path, &cfg->source_path);
    if (!st)
        st = read_config(&t, cfg);
    sleapc__yaml_tree_free(&t);
    if (st)
        sleapc__model_config_clear(cfg);
    return st;
}
