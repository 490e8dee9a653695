/* A model from a training config alone, with random weights: benchmarks of
 * realistic network sizes without a trained checkpoint. Configs without a
 * skeleton (sleap-nn's sample configs) get the benchmark skeleton of the
 * reference timings: n_nodes nodes in a chain (n_nodes - 1 PAF edges) and,
 * for multi-class heads, two classes. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/model.h"
#include "model/weights_random.h"
#include "sleapc/model.h"

/* Names "node0".. and a chain of edges when the config has none. */
static sleapc_status synth_skeleton(sleapc_model_config *cfg, int n_nodes)
{
    if (cfg->n_part_names > 0 || cfg->model_type == SLEAPC_MODEL_TYPE_CENTROID)
        return SLEAPC_OK;
    /* The reader may have left empty arrays: replace them. */
    sleapc__free(cfg->part_names);
    cfg->part_names = sleapc__calloc((size_t)n_nodes, sizeof(char *));
    if (!cfg->part_names)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_nodes; i++) {
        char name[32];
        snprintf(name, sizeof name, "node%d", i);
        if (!(cfg->part_names[i] = sleapc__strdup(name)))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        cfg->n_part_names = i + 1;
    }
    if (cfg->model_type == SLEAPC_MODEL_TYPE_BOTTOMUP && cfg->n_paf_edges == 0) {
        sleapc__free(cfg->paf_edges);
        cfg->paf_edges = sleapc__calloc((size_t)n_nodes, sizeof *cfg->paf_edges);
        if (!cfg->paf_edges)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        for (int i = 0; i + 1 < n_nodes; i++) {
            cfg->paf_edges[i][0] = i;
            cfg->paf_edges[i][1] = i + 1;
        }
        cfg->n_paf_edges = n_nodes - 1;
    }
    bool multiclass = cfg->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP ||
                      cfg->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
    if (multiclass && cfg->n_classes == 0) {
        sleapc__free(cfg->classes);
        cfg->classes = sleapc__calloc(2, sizeof(char *));
        if (!cfg->classes || !(cfg->classes[0] = sleapc__strdup("class0")) ||
            !(cfg->classes[1] = sleapc__strdup("class1")))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        cfg->n_classes = 2;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__model_load_random(const char *config_yaml, int n_nodes, uint64_t seed,
                                        sleapc_model **out)
{
    *out = NULL;
    sleapc_model *m = sleapc__calloc(1, sizeof *m);
    if (!m)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    sleapc_status st = SLEAPC_OK;
    if (!(m->dir = sleapc__strdup(config_yaml)) || !(m->weights_path = sleapc__strdup("(random)")))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st) {
        sleapc__model_config_defaults(&m->cfg);
        st = sleapc__config_read_yaml(config_yaml, &m->cfg);
    }
    if (!st && m->cfg.backbone_type != SLEAPC_BACKBONE_UNET)
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: unsupported backbone \"%s\"", config_yaml,
                          m->cfg.backbone_name);
    if (!st)
        st = synth_skeleton(&m->cfg, n_nodes);
    if (!st)
        st = sleapc__weights_random_for_config(&m->cfg, seed, &m->weights);
    if (!st)
        st = sleapc__build_unet(&m->cfg, &m->weights, "(random weights)", true, false, &m->graph);
    if (st) {
        sleapc__model_destroy(m);
        return sleapc__wrap(st, "load random model %s", config_yaml);
    }
    m->n_heads = sleapc__heads_for_config(&m->cfg, m->heads);
    *out = m;
    return SLEAPC_OK;
}
