/* Public model functions: check arguments, call inward. */
#include "core/error.h"
#include "layers/tiled.h"
#include "model/model_impl.h"
#include "sleapc/model.h"

const char *sleapc_model_type_name(sleapc_model_type type)
{
    return sleapc__model_type_name(type);
}

sleapc_status sleapc_model_load(const char *path, sleapc_model **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "load model: path and out are required");
    return sleapc__model_load(path, out);
}

sleapc_status sleapc_model_load_random(const char *config_yaml, int n_nodes, uint64_t seed,
                                       sleapc_model **out)
{
    if (!config_yaml || !out || n_nodes < 1 || n_nodes > 1000)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "load random model: a config path, out and 1..1000 nodes are required");
    return sleapc__model_load_random(config_yaml, n_nodes, seed, out);
}

void sleapc_model_destroy(sleapc_model *model)
{
    sleapc__model_destroy(model);
}

sleapc_model_type sleapc_model_get_type(const sleapc_model *m)
{
    return m ? m->cfg.model_type : SLEAPC_MODEL_TYPE_UNKNOWN;
}

bool sleapc_model_is_exported(const sleapc_model *m)
{
    return m && m->baked;
}

const char *sleapc_model_export_type(const sleapc_model *m)
{
    return m && m->baked ? m->export_meta.model_type : "";
}

sleapc_status sleapc_model_skeleton(const sleapc_model *m, sleapc_skeleton *out)
{
    if (!m || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "model skeleton: model and out are required");
    sleapc__model_skeleton(m, out);
    return SLEAPC_OK;
}

int sleapc_model_in_channels(const sleapc_model *m)
{
    return m ? m->graph.in_channels : 0;
}

int sleapc_model_max_stride(const sleapc_model *m)
{
    return m ? m->graph.max_stride : 0;
}

double sleapc_model_input_scale(const sleapc_model *m)
{
    return m ? m->cfg.scale : 0.0;
}

int64_t sleapc_model_param_count(const sleapc_model *m)
{
    return m ? sleapc__weights_param_count(&m->weights) : 0;
}

int sleapc_model_n_heads(const sleapc_model *m)
{
    return m ? m->n_heads : 0;
}

sleapc_head_info sleapc_model_head(const sleapc_model *m, int i)
{
    sleapc_head_info h = {0};
    if (m && i >= 0 && i < m->n_heads) {
        h.name = m->heads[i].name;
        h.channels = m->heads[i].channels;
        h.stride = m->heads[i].stride;
    }
    return h;
}

double sleapc_model_gflops(const sleapc_model *m, int64_t height, int64_t width)
{
    return m ? sleapc__graph_flops(&m->graph, 1, height, width) * 1e-9 : 0.0;
}

const char *sleapc_model_backbone_name(const sleapc_model *m)
{
    return m ? m->cfg.backbone_name : "";
}

const char *sleapc_model_backbone_arch(const sleapc_model *m)
{
    if (!m)
        return "";
    return m->arch;
}

void sleapc_model_max_size(const sleapc_model *m, int *height, int *width)
{
    if (height)
        *height = m ? m->cfg.max_height : 0;
    if (width)
        *width = m ? m->cfg.max_width : 0;
}

int sleapc_model_crop_size(const sleapc_model *m)
{
    return m ? m->cfg.crop_size : 0;
}

bool sleapc_model_tiling(const sleapc_model *m, int *tile_size, int *overlap, const char **blend,
                         int *tiles_per_call)
{
    if (!m || !m->cfg.tiling.enabled)
        return false;
    const sleapc_tiling_config *t = &m->cfg.tiling;
    if (tile_size)
        *tile_size = t->tile_size;
    if (overlap)
        *overlap = t->overlap;
    if (blend)
        *blend = sleapc__tile_blend_name(t->blend);
    if (tiles_per_call)
        *tiles_per_call = sleapc__tiled_tiles_per_call(t);
    return true;
}
