#include "io/config/model_heads.h"

/* Static names of the SSD outputs (model_heads.h), per level. */
static const char *const SSD_CLS[SLEAPC_BBOX_LIST_MAX] = {
    "SSDHead.cls.0", "SSDHead.cls.1", "SSDHead.cls.2", "SSDHead.cls.3",
    "SSDHead.cls.4", "SSDHead.cls.5", "SSDHead.cls.6", "SSDHead.cls.7"};
static const char *const SSD_BOX[SLEAPC_BBOX_LIST_MAX] = {
    "SSDHead.box.0", "SSDHead.box.1", "SSDHead.box.2", "SSDHead.box.3",
    "SSDHead.box.4", "SSDHead.box.5", "SSDHead.box.6", "SSDHead.box.7"};

/* A head made by a 1x1 conv. */
static sleapc_head_spec head(const char *name, int channels, int stride, sleapc_act act)
{
    return (sleapc_head_spec){.name = name, .channels = channels, .stride = stride, .act = act};
}

/* SSDHead (model.py get_head): anchors_per_location = scales x ratios,
 * levels at strides output_stride * 2^l. */
static int ssd_heads(const sleapc_bbox_config *b, sleapc_head_spec *h)
{
    int a = b->n_anchor_scales * b->n_aspect_ratios;
    int n = 0;
    for (int l = 0; l < b->ssd_levels && l < SLEAPC_BBOX_LIST_MAX; l++) {
        int stride = b->stride << l;
        h[n++] = (sleapc_head_spec){SSD_CLS[l], a * (b->n_categories + 1), stride,
                                    SLEAPC_ACT_NONE, SLEAPC_HEAD_SSD_CLS, l};
        h[n++] = (sleapc_head_spec){SSD_BOX[l], a * 4, stride, SLEAPC_ACT_NONE,
                                    SLEAPC_HEAD_SSD_BOX, l};
    }
    return n;
}

int sleapc__heads_for_config(const sleapc_model_config *cfg, sleapc_head_spec *h)
{
    int n = cfg->n_part_names;
    switch (cfg->model_type) {
    case SLEAPC_MODEL_TYPE_SINGLE_INSTANCE:
        h[0] = head("SingleInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE);
        return 1;
    case SLEAPC_MODEL_TYPE_CENTROID:
        h[0] = head("CentroidConfmapsHead", 1, cfg->confmaps_stride,
                    cfg->confmaps_sigmoid ? SLEAPC_ACT_SIGMOID : SLEAPC_ACT_NONE);
        return 1;
    case SLEAPC_MODEL_TYPE_CENTERED_INSTANCE:
        h[0] = head("CenteredInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE);
        return 1;
    case SLEAPC_MODEL_TYPE_BOTTOMUP:
        h[0] = head("MultiInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE);
        h[1] = head("PartAffinityFieldsHead", 2 * cfg->n_paf_edges, cfg->pafs_stride, SLEAPC_ACT_NONE);
        return 2;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP:
        h[0] = head("MultiInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE);
        h[1] = head("ClassMapsHead", cfg->n_classes, cfg->class_maps_stride, SLEAPC_ACT_SIGMOID);
        return 2;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN:
        h[0] = head("CenteredInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE);
        h[1] = head("ClassVectorsHead", cfg->n_classes, 0, SLEAPC_ACT_SOFTMAX);
        return 2;
    case SLEAPC_MODEL_TYPE_BBOX_CENTERNET:
        /* The loaded module's forward applies the sigmoid to the heatmap. */
        h[0] = head("BBoxCenterHead", cfg->bbox.n_categories, cfg->bbox.stride,
                    SLEAPC_ACT_SIGMOID);
        h[1] = head("BBoxSizeHead", 2, cfg->bbox.stride, SLEAPC_ACT_NONE);
        h[2] = head("BBoxOffsetHead", 2, cfg->bbox.stride, SLEAPC_ACT_NONE);
        return 3;
    case SLEAPC_MODEL_TYPE_BBOX_SSD:
        return ssd_heads(&cfg->bbox, h);
    case SLEAPC_MODEL_TYPE_EMBEDDING:
        h[0] = head("EmbeddingHead", cfg->embedding.dim, 0, SLEAPC_ACT_NONE);
        return 1;
    case SLEAPC_MODEL_TYPE_UNKNOWN:
        break;
    }
    return 0;
}
