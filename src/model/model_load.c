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
    if (cfg->backbone_type != SLEAPC_BACKBONE_OTHER)
        return SLEAPC_OK;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                        "%s: unsupported backbone \"%s\" (sleapc runs UNet, ConvNeXt and SwinT models)",
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
    if (!st)
        sleapc__backbone_describe(&m->cfg, m->arch, sizeof m->arch);
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
    st = sleapc__build_backbone(&m->cfg, &m->weights, m->weights_path, true, &m->graph);
    if (st)
        goto fail;
    m->n_heads = sleapc__heads_for_config(&m->cfg, m->heads);
    sleapc__backbone_describe(&m->cfg, m->arch, sizeof m->arch);
    sleapc__free(yaml);
    *out = m;
    return SLEAPC_OK;
fail:
    sleapc__free(yaml);
    sleapc__model_destroy(m);
    return sleapc__wrap(st, "load model %s", path);
}

static size_t list4(char *buf, size_t cap, const char *label, const int *v)
{
    return (size_t)snprintf(buf, cap, "%s [%d,%d,%d,%d]", label, v[0], v[1], v[2], v[3]);
}

void sleapc__backbone_describe(const sleapc_model_config *cfg, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
#define ADD(...) (n += n < cap ? (size_t)snprintf(buf + n, cap - n, __VA_ARGS__) : 0)
    if (cfg->backbone_type == SLEAPC_BACKBONE_UNET) {
        const sleapc_unet_config *u = &cfg->unet;
        ADD("filters %d, filters_rate %g, max_stride %d, kernel %d, convs_per_block %d, %s",
            u->filters, u->filters_rate, u->max_stride, u->kernel_size, u->convs_per_block,
            u->up_interpolate ? "bilinear upsampling" : "transposed convs");
        return;
    }
    if (cfg->backbone_type != SLEAPC_BACKBONE_CONVNEXT && cfg->backbone_type != SLEAPC_BACKBONE_SWINT)
        return;
    const sleapc_vit_config *v = &cfg->vit;
    bool swint = cfg->backbone_type == SLEAPC_BACKBONE_SWINT;
    ADD("model_type %s%s: ", v->model_type, v->preset ? " (preset)" : "");
    if (n < cap)
        n += list4(buf + n, cap - n, "depths", v->depths);
    if (swint) {
        ADD(", embed %d", v->channels[0]);
        if (n < cap)
            n += list4(buf + n, cap - n, ", heads", v->num_heads);
        ADD(", window %d", v->window_size);
    } else if (n < cap) {
        n += list4(buf + n, cap - n, ", channels", v->channels);
    }
    ADD(", stem %d/%d, filters_rate %g, kernel %d, convs_per_block %d, %s",
        v->stem_patch_kernel, v->stem_patch_stride, v->filters_rate, v->kernel_size,
        v->convs_per_block, v->up_interpolate ? "bilinear upsampling" : "transposed convs");
#undef ADD
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
