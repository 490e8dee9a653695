#include "io/config/model_heads.h"

int sleapc__heads_for_config(const sleapc_model_config *cfg, sleapc_head_spec *h)
{
    int n = cfg->n_part_names;
    switch (cfg->model_type) {
    case SLEAPC_MODEL_TYPE_SINGLE_INSTANCE:
        h[0] = (sleapc_head_spec){"SingleInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE};
        return 1;
    case SLEAPC_MODEL_TYPE_CENTROID:
        h[0] = (sleapc_head_spec){"CentroidConfmapsHead", 1, cfg->confmaps_stride,
                                  cfg->confmaps_sigmoid ? SLEAPC_ACT_SIGMOID : SLEAPC_ACT_NONE};
        return 1;
    case SLEAPC_MODEL_TYPE_CENTERED_INSTANCE:
        h[0] = (sleapc_head_spec){"CenteredInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE};
        return 1;
    case SLEAPC_MODEL_TYPE_BOTTOMUP:
        h[0] = (sleapc_head_spec){"MultiInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE};
        h[1] = (sleapc_head_spec){"PartAffinityFieldsHead", 2 * cfg->n_paf_edges, cfg->pafs_stride, SLEAPC_ACT_NONE};
        return 2;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP:
        h[0] = (sleapc_head_spec){"MultiInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE};
        h[1] = (sleapc_head_spec){"ClassMapsHead", cfg->n_classes, cfg->class_maps_stride, SLEAPC_ACT_SIGMOID};
        return 2;
    case SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN:
        h[0] = (sleapc_head_spec){"CenteredInstanceConfmapsHead", n, cfg->confmaps_stride, SLEAPC_ACT_NONE};
        h[1] = (sleapc_head_spec){"ClassVectorsHead", cfg->n_classes, 0, SLEAPC_ACT_SOFTMAX};
        return 2;
    case SLEAPC_MODEL_TYPE_UNKNOWN:
        break;
    }
    return 0;
}
