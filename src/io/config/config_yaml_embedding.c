/* head_configs.embedding.embedding (sleap-nn 0.3.5 config/model_config.py
 * EmbeddingHeadConfig; heads.py EmbeddingHead): what the network needs and
 * what decides the crops; the training objective is left unread. */
#include "io/config/config_yaml_embedding.h"

#include <string.h>

/* A bound on the head's sizes that keeps a hostile file's product small. */
#define EMBEDDING_SIZE_MAX 65536
#define EMBEDDING_FC_MAX 64

/* parent.rel as an int in [min, max] (absent or null: *out unchanged). */
static sleapc_status read_int(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                              int min, int max, int *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_int(t, &r, NULL, *out, out);
    if (st || sleapc__yaml_is_null(&r))
        return st;
    if (*out < min || *out > max)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be in [%d, %d], got %d", min,
                                 max, *out);
    return SLEAPC_OK;
}

/* pool: gem | max | avg. Null is sleap-nn's "default for this backbone"
 * (heads.py default_embedding_pool): avg only for a frozen pretrained
 * encoder, which sleapc does not run, so gem. */
static sleapc_status read_pool(sleapc_yaml_tree *t, const sleapc_yaml_ref *leaf,
                               sleapc_embedding_pool *pool)
{
    sleapc_yaml_ref r;
    const char *s = NULL;
    sleapc_status st = sleapc__yaml_get(t, leaf, "pool", &r);
    if (!st)
        st = sleapc__yaml_str(t, &r, NULL, &s);
    if (st || !s)
        return st;
    if (strcmp(s, "gem") == 0)
        *pool = SLEAPC_EMBEDDING_POOL_GEM;
    else if (strcmp(s, "max") == 0)
        *pool = SLEAPC_EMBEDDING_POOL_MAX;
    else if (strcmp(s, "avg") == 0)
        *pool = SLEAPC_EMBEDDING_POOL_AVG;
    else
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_UNSUPPORTED,
                                 "unsupported pool '%s' (gem, max or avg)", s);
    return SLEAPC_OK;
}

/* What decides the crops (EmbeddingDataset): the carrier (pose or mask)
 * and the crop centre (anchor_part, centroid_method; null: the centre of
 * mass of the visible points). */
static sleapc_status read_crop_rules(sleapc_yaml_tree *t, const sleapc_yaml_ref *leaf,
                                     sleapc_embedding_config *e)
{
    const char *mode = NULL, *anchor = NULL, *method = NULL;
    sleapc_status st = sleapc__yaml_str(t, leaf, "detection_mode", &mode);
    if (!st)
        st = sleapc__yaml_str(t, leaf, "anchor_part", &anchor);
    if (!st)
        st = sleapc__yaml_str(t, leaf, "centroid_method", &method);
    if (st)
        return st;
    e->mask_mode = mode && strcmp(mode, "mask") == 0;
    e->custom_centroid = anchor || (method && strcmp(method, "center_of_mass") != 0);
    return SLEAPC_OK;
}

sleapc_status sleapc__config_read_embedding(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                            sleapc_model_config *cfg)
{
    sleapc_embedding_config *e = &cfg->embedding;
    sleapc_yaml_ref leaf;
    e->stride = cfg->unet.max_stride;
    if (!sleapc__yaml_is_map(head))
        return sleapc__yaml_fail(t, head, SLEAPC_ERR_FORMAT, "expected a mapping");
    sleapc_status st = sleapc__yaml_require(t, head, "embedding", &leaf);
    if (!st && !sleapc__yaml_is_map(&leaf))
        return sleapc__yaml_fail(t, &leaf, SLEAPC_ERR_FORMAT, "expected a mapping");
    if (!st)
        st = read_int(t, &leaf, "embedding_dim", 1, EMBEDDING_SIZE_MAX, &e->dim);
    if (!st)
        st = read_int(t, &leaf, "num_fc_layers", 0, EMBEDDING_FC_MAX, &e->fc_layers);
    if (!st)
        st = read_int(t, &leaf, "num_fc_units", 1, EMBEDDING_SIZE_MAX, &e->fc_units);
    if (!st)
        st = read_pool(t, &leaf, &e->pool);
    if (!st)
        st = sleapc__yaml_bool(t, &leaf, "normalize", e->normalize, &e->normalize);
    if (!st)
        st = read_int(t, &leaf, "output_stride", 1, 1024, &e->stride);
    if (!st)
        st = read_crop_rules(t, &leaf, e);
    return st;
}
