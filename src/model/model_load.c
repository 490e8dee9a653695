/* Finds a model folder's files, reads them, and builds the graph. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ckpt/ckpt.h"
#include "io/ckpt/keras_h5.h"
#include "model/model_export.h"
#include "model/model_impl.h"

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A folder path, or the folder of a file inside it (best.ckpt, *.yaml). */
static sleapc_status model_dir_of(const char *path, char **out)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return sleapc__fail(SLEAPC_ERR_IO, "%s: no such file or folder", path);
    char *dir = sleapc__strdup(path);
    if (!dir)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!S_ISDIR(st.st_mode)) {
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            strcpy(dir, ".");
    }
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        dir[--n] = '\0';
    *out = dir;
    return SLEAPC_OK;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sleapc__malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static sleapc_status check_backbone(const sleapc_model_config *cfg)
{
    if (cfg->backbone_type == SLEAPC_BACKBONE_UNET)
        return SLEAPC_OK;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: unsupported backbone \"%s\" (sleapc runs UNet models)",
                        cfg->source_path ? cfg->source_path : "config", cfg->backbone_name);
}

/* A SLEAP 1.x folder: training_config.json + best_model.h5 (Keras). */
static sleapc_status load_legacy(sleapc_model *m, const char *json)
{
    sleapc__free(m->weights_path);
    m->weights_path = join(m->dir, "best_model.h5");
    if (!m->weights_path)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!file_exists(m->weights_path))
        return sleapc__fail(SLEAPC_ERR_IO,
                            "%s: training_config.json (SLEAP 1.x) but no best_model.h5 in this "
                            "folder",
                            m->dir);
    sleapc_status st = sleapc__config_read_legacy_json(json, &m->cfg);
    if (!st)
        st = check_backbone(&m->cfg);
    if (!st)
        st = sleapc__keras_h5_read(m->weights_path, &m->cfg, &m->weights);
    if (!st)
        st = sleapc__keras_h5_patch_config(&m->weights, m->weights_path, &m->cfg);
    /* SLEAP's own numbers, so TensorFlow's "same" Conv2DTranspose placement
     * (architectures.md §6b). Strict: the reader already dropped the heads
     * this model type does not use (OffsetRefinementHead), so any other
     * left-over tensor means config and weights disagree. */
    if (!st)
        st = sleapc__build_unet(&m->cfg, &m->weights, m->weights_path, true, true, &m->graph);
    if (!st)
        m->n_heads = sleapc__heads_for_config(&m->cfg, m->heads);
    return st;
}

sleapc_status sleapc__model_load(const char *path, sleapc_model **out)
{
    *out = NULL;
    sleapc_model *m = sleapc__calloc(1, sizeof *m);
    if (!m)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "load model: %s: out of memory", path);
    char *yaml = NULL;
    sleapc_status st = model_dir_of(path, &m->dir);
    if (st)
        goto fail;
    if (sleapc__model_is_export(m->dir)) {
        st = sleapc__model_load_export(m, path);
        if (st)
            goto fail;
        *out = m;
        return SLEAPC_OK;
    }
    yaml = join(m->dir, "training_config.yaml");
    m->weights_path = join(m->dir, "best.ckpt");
    if (!yaml || !m->weights_path) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (!file_exists(yaml)) {
        char *json = join(m->dir, "training_config.json");
        if (!json)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        else if (file_exists(json))
            st = load_legacy(m, json);
        else
            st = sleapc__fail(SLEAPC_ERR_IO,
                              "%s: no training_config.yaml (sleap-nn) or training_config.json "
                              "(SLEAP 1.x) in this folder",
                              m->dir);
        sleapc__free(json);
        if (st)
            goto fail;
        sleapc__free(yaml);
        *out = m;
        return SLEAPC_OK;
    }
    if (!file_exists(m->weights_path)) {
        st = sleapc__fail(SLEAPC_ERR_IO, "%s: no best.ckpt in this folder", m->dir);
        goto fail;
    }
    sleapc__model_config_defaults(&m->cfg);
    st = sleapc__config_read_yaml(yaml, &m->cfg);
    if (st)
        goto fail;
    st = check_backbone(&m->cfg);
    if (st)
        goto fail;
    st = sleapc__ckpt_read(m->weights_path, &m->weights);
    if (st)
        goto fail;
    st = sleapc__build_unet(&m->cfg, &m->weights, m->weights_path, true, false, &m->graph);
    if (st)
        goto fail;
    m->n_heads = sleapc__heads_for_config(&m->cfg, m->heads);
    sleapc__free(yaml);
    *out = m;
    return SLEAPC_OK;
fail:
    sleapc__free(yaml);
    sleapc__model_destroy(m);
    return sleapc__wrap(st, "load model %s", path);
}

void sleapc__model_destroy(sleapc_model *m)
{
    if (!m)
        return;
    sleapc__graph_clear(&m->graph);
    sleapc__onnx_destroy(m->baked);
    sleapc__export_meta_clear(&m->export_meta);
    sleapc__weights_clear(&m->weights);
    sleapc__model_config_clear(&m->cfg);
    sleapc__free(m->dir);
    sleapc__free(m->weights_path);
    sleapc__free(m);
}
