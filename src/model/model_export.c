/* Loading a sleap-nn ONNX export folder (export.md §1, §4): the training
 * config copied next to the graph, the export metadata as a cross-check, and
 * model_raw.onnx (backbone + heads) imported into the graph IR. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/onnx/onnx_read.h"
#include "model/from_onnx.h"
#include "model/model_export.h"

/* export_metadata.json is under 2 KB; anything this big is not one. */
#define METADATA_MAX_BYTES (1 << 20)

static bool is_file(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return false;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool sleapc__model_is_export(const char *dir)
{
    return !is_file(dir, "best.ckpt") &&
           (is_file(dir, "model_raw.onnx") || is_file(dir, "model.onnx"));
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sleapc__malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static sleapc_status read_text(const char *path, char **out, size_t *n_out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "read export metadata: %s: cannot open", path);
    char *buf = sleapc__malloc(METADATA_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, METADATA_MAX_BYTES + 1, f) : 0;
    bool err = ferror(f);
    fclose(f);
    if (!buf)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read export metadata: out of memory");
    if (err || n > METADATA_MAX_BYTES) {
        sleapc__free(buf);
        return sleapc__fail(err ? SLEAPC_ERR_IO : SLEAPC_ERR_FORMAT, "read export metadata: %s: %s",
                            path, err ? "read error" : "larger than 1 MiB");
    }
    buf[n] = '\0';
    *out = buf;
    *n_out = n;
    return SLEAPC_OK;
}

/* The metadata must describe the model the config describes (export.md §4:
 * model_type, input_channels); a crop size the config leaves null is the one
 * the export resolved. */
static sleapc_status apply_metadata(const char *path, sleapc_model_config *cfg)
{
    char *text = NULL;
    size_t n = 0;
    sleapc_status st = read_text(path, &text, &n);
    if (st)
        return st;
    cJSON *root = cJSON_ParseWithLength(text, n);
    sleapc__free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read export metadata: %s: not a JSON object", path);
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const cJSON *chan = cJSON_GetObjectItemCaseSensitive(root, "input_channels");
    const cJSON *crop = cJSON_GetObjectItemCaseSensitive(root, "crop_size");
    const char *want = sleapc_model_type_name(cfg->model_type);
    if (type && (!cJSON_IsString(type) || strcmp(type->valuestring, want) != 0))
        st = sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "read export metadata: %s: model_type \"%s\", but the training config is a %s model",
            path, cJSON_IsString(type) ? type->valuestring : "?", want);
    else if (chan && (!cJSON_IsNumber(chan) || chan->valuedouble != cfg->unet.in_channels))
        st = sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "read export metadata: %s: input_channels %g, but the training config has %d", path,
            cJSON_IsNumber(chan) ? chan->valuedouble : -1.0, cfg->unet.in_channels);
    if (!st && cfg->crop_size == 0 && cJSON_IsArray(crop) && cJSON_GetArraySize(crop) == 2) {
        const cJSON *h = cJSON_GetArrayItem(crop, 0), *w = cJSON_GetArrayItem(crop, 1);
        if (cJSON_IsNumber(h) && cJSON_IsNumber(w) && h->valuedouble == w->valuedouble &&
            h->valuedouble >= 1 && h->valuedouble <= 65536)
            cfg->crop_size = (int)h->valuedouble;
    }
    cJSON_Delete(root);
    return st;
}

sleapc_status sleapc__model_load_export(sleapc_model *m)
{
    char *yaml = join(m->dir, "training_config.yaml");
    char *meta = join(m->dir, "export_metadata.json");
    m->weights_path = join(m->dir, "model_raw.onnx");
    sleapc_onnx_model *om = NULL;
    sleapc_status st = SLEAPC_OK;
    if (!yaml || !meta || !m->weights_path)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    else if (!is_file(m->dir, "model_raw.onnx"))
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                          "%s: ONNX export with post-processing baked into model.onnx: sleapc runs "
                          "model_raw.onnx (backbone and heads) only",
                          m->dir);
    else if (!is_file(m->dir, "training_config.yaml"))
        st = sleapc__fail(SLEAPC_ERR_IO, "%s: ONNX export without training_config.yaml", m->dir);
    if (!st) {
        sleapc__model_config_defaults(&m->cfg);
        st = sleapc__config_read_yaml(yaml, &m->cfg);
    }
    if (!st && is_file(m->dir, "export_metadata.json"))
        st = apply_metadata(meta, &m->cfg);
    if (!st) {
        m->n_heads = sleapc__heads_for_config(&m->cfg, m->heads);
        if (m->n_heads == 0)
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: unknown model type", yaml);
    }
    if (!st)
        st = sleapc__onnx_read(m->weights_path, &om);
    if (!st)
        st = sleapc__graph_from_onnx(om, m->heads, m->n_heads, &m->weights, &m->graph);
    if (!st && m->graph.in_channels != m->cfg.unet.in_channels)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: the graph takes %d channels, the config says %d",
                          m->weights_path, m->graph.in_channels, m->cfg.unet.in_channels);
    sleapc__onnx_destroy(om);
    sleapc__free(yaml);
    sleapc__free(meta);
    return st;
}
