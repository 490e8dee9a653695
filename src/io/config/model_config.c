#include "io/config/model_config.h"

#include <string.h>

#include "core/alloc.h"

/* sleap-nn's model type names (head_configs keys), the one table of them. */
static const struct {
    const char *name;
    sleapc_model_type type;
} MODEL_TYPES[] = {
    {"single_instance", SLEAPC_MODEL_TYPE_SINGLE_INSTANCE},
    {"centroid", SLEAPC_MODEL_TYPE_CENTROID},
    {"centered_instance", SLEAPC_MODEL_TYPE_CENTERED_INSTANCE},
    {"bottomup", SLEAPC_MODEL_TYPE_BOTTOMUP},
    {"multi_class_bottomup", SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP},
    {"multi_class_topdown", SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN},
    {"bbox_centernet", SLEAPC_MODEL_TYPE_BBOX_CENTERNET},
    {"bbox_ssd", SLEAPC_MODEL_TYPE_BBOX_SSD},
    {"embedding", SLEAPC_MODEL_TYPE_EMBEDDING},
};

const char *sleapc__model_type_name(sleapc_model_type type)
{
    for (size_t k = 0; k < sizeof MODEL_TYPES / sizeof MODEL_TYPES[0]; k++)
        if (MODEL_TYPES[k].type == type)
            return MODEL_TYPES[k].name;
    return "unknown";
}

sleapc_model_type sleapc__model_type_from_name(const char *name)
{
    for (size_t k = 0; name && k < sizeof MODEL_TYPES / sizeof MODEL_TYPES[0]; k++)
        if (strcmp(name, MODEL_TYPES[k].name) == 0)
            return MODEL_TYPES[k].type;
    return SLEAPC_MODEL_TYPE_UNKNOWN;
}

/* The dataclass defaults of sleap-nn's config/model_config.py and
 * config/data_config.py (UNetConfig, PreprocessingConfig, *ConfMapsConfig,
 * PAFConfig, ClassMapConfig, ClassVectorsConfig). */
void sleapc__model_config_defaults(sleapc_model_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model_type = SLEAPC_MODEL_TYPE_UNKNOWN;
    cfg->backbone_type = SLEAPC_BACKBONE_UNET;
    memcpy(cfg->backbone_name, "unet", 5);

    cfg->unet.in_channels = 1;
    cfg->unet.kernel_size = 3;
    cfg->unet.filters = 32;
    cfg->unet.filters_rate = 1.5;
    cfg->unet.max_stride = 16;
    cfg->unet.stem_stride = 0;
    cfg->unet.middle_block = true;
    cfg->unet.up_interpolate = true;
    cfg->unet.stacks = 1;
    cfg->unet.convs_per_block = 2;
    cfg->unet.output_stride = 1;

    cfg->ensure_rgb = false;
    cfg->ensure_grayscale = false;
    cfg->scale = 1.0;
    sleapc__tiling_config_defaults(&cfg->tiling);

    cfg->confmaps_sigma = 5.0;
    cfg->confmaps_stride = 1;
    cfg->pafs_sigma = 15.0;
    cfg->pafs_stride = 1;
    cfg->class_maps_stride = 1;
    cfg->class_vectors_fc_layers = 1;
    cfg->class_vectors_fc_units = 64;
    cfg->class_vectors_global_pool = true;
    cfg->class_vectors_stride = cfg->unet.max_stride;
    sleapc__bbox_config_defaults(&cfg->bbox);
    cfg->embedding = (sleapc_embedding_config){.dim = 128, .fc_layers = 1, .fc_units = 256,
                                               .pool = SLEAPC_EMBEDDING_POOL_GEM,
                                               .normalize = true,
                                               .stride = cfg->unet.max_stride};
}

/* BBoxCenterHeadConfig / SSDHeadConfig defaults; stride is set by the type. */
void sleapc__bbox_config_defaults(sleapc_bbox_config *b)
{
    static const double scales[] = {1.0, 1.26, 1.587}, ratios[] = {0.5, 1.0, 2.0};
    memset(b, 0, sizeof *b);
    b->stride = 4;
    b->ssd_levels = 3;
    b->n_anchor_scales = 3;
    b->n_aspect_ratios = 3;
    for (int i = 0; i < 3; i++) {
        b->anchor_scales[i] = scales[i];
        b->aspect_ratios[i] = ratios[i];
    }
    b->box_variances[0] = b->box_variances[1] = 0.1;
    b->box_variances[2] = b->box_variances[3] = 0.2;
    b->head_channels = 128;
    b->head_convs = 1;
}

void sleapc__tiling_config_defaults(sleapc_tiling_config *t)
{
    memset(t, 0, sizeof *t);
    t->overlap = -1;
    t->min_overlap_fraction = 0.25;
    t->blend = SLEAPC_TILE_BLEND_GAUSSIAN;
    t->sigma_scale = 0.125;
    memcpy(t->accumulator_device, "auto", 5);
    t->cpu_thresh = 0.4;
    memcpy(t->sampling, "foreground", 11);
    t->tile_fg_fraction = 0.5;
    t->center_jitter = 0.5;
    t->min_visible_keypoints = 1;
}

void sleapc__names_free(char **names, int n)
{
    if (!names)
        return;
    for (int i = 0; i < n; i++)
        sleapc__free(names[i]);
    sleapc__free(names);
}

void sleapc__model_config_clear(sleapc_model_config *cfg)
{
    if (!cfg)
        return;
    sleapc__free(cfg->source_path);
    sleapc__free(cfg->skeleton.name);
    sleapc__names_free(cfg->skeleton.node_names, cfg->skeleton.n_nodes);
    sleapc__free(cfg->skeleton.edges);
    sleapc__free(cfg->skeleton.symmetries);
    sleapc__names_free(cfg->part_names, cfg->n_part_names);
    sleapc__free(cfg->anchor_part);
    sleapc__free(cfg->centroid_method);
    sleapc__free(cfg->centroid_fallback);
    sleapc__free(cfg->paf_edges);
    sleapc__names_free(cfg->classes, cfg->n_classes);
    sleapc__names_free(cfg->bbox.categories, cfg->bbox.n_categories);
    memset(cfg, 0, sizeof *cfg);
}

const char *sleapc__tile_blend_name(sleapc_tile_blend b)
{
    switch (b) {
    case SLEAPC_TILE_BLEND_GAUSSIAN:
        return "gaussian";
    case SLEAPC_TILE_BLEND_PYRAMID:
        return "pyramid";
    case SLEAPC_TILE_BLEND_CONSTANT:
        return "constant";
    }
    return "?";
}
