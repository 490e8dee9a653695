/* Loading a sleap-nn ONNX export folder (export.md §1, §4): model.onnx with
 * its post-processing baked in, or model_raw.onnx (backbone + heads)
 * imported into the graph IR; the training config copied next to the graph
 * and the export metadata, checked against each other. */
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

/* export_metadata.json, else the copy export.md §4 embeds in the graph's
 * metadata_props (sleap_nn_metadata; om may be NULL). *found is false when
 * there is neither. */
static sleapc_status read_metadata(const char *dir, const sleapc_onnx_model *om,
                                   sleapc_export_meta *meta, bool *found)
{
    *found = false;
    if (is_file(dir, "export_metadata.json")) {
        char *path = join(dir, "export_metadata.json"), *text = NULL;
        size_t n = 0;
        sleapc_status st = path ? read_text(path, &text, &n)
                                : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        if (!st)
            st = sleapc__export_meta_parse(text, n, path, meta);
        sleapc__free(text);
        sleapc__free(path);
        *found = !st;
        return st;
    }
    const char *embedded = om ? sleapc__onnx_metadata(om, "sleap_nn_metadata") : NULL;
    if (!embedded)
        return SLEAPC_OK;
    sleapc_status st =
        sleapc__export_meta_parse(embedded, strlen(embedded), om->path, meta);
    *found = !st;
    return st;
}

/* The metadata must describe the model the config describes (export.md §4:
 * model_type, input_channels); a crop size the config leaves null is the one
 * the export resolved. */
static sleapc_status check_metadata(const sleapc_export_meta *meta, const char *meta_path,
                                    sleapc_model_config *cfg)
{
    sleapc_model_type want = sleapc__export_pose_type(meta->kind);
    if (want != cfg->model_type)
        return sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "read export metadata: %s: model_type \"%s\", but the training config %s is a %s model",
            meta_path, meta->model_type, cfg->source_path ? cfg->source_path : "",
            sleapc__model_type_name(cfg->model_type));
    if (meta->input_channels != cfg->unet.in_channels)
        return sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "read export metadata: %s: input_channels %d, but the training config has %d",
            meta_path, meta->input_channels, cfg->unet.in_channels);
    if (cfg->crop_size == 0)
        cfg->crop_size = meta->crop_size;
    return SLEAPC_OK;
}

/* The raw network export: model_raw.onnx imported into the graph IR, run
 * like a checkpoint's graph. */
static sleapc_status load_raw(sleapc_model *m)
{
    char *yaml = join(m->dir, "training_config.yaml");
    m->weights_path = join(m->dir, "model_raw.onnx");
    sleapc_onnx_model *om = NULL;
    sleapc_status st = SLEAPC_OK;
    if (!yaml || !m->weights_path)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    else if (!is_file(m->dir, "training_config.yaml"))
        st = sleapc__fail(SLEAPC_ERR_IO, "%s: ONNX export without training_config.yaml", m->dir);
    if (!st) {
        sleapc__model_config_defaults(&m->cfg);
        st = sleapc__config_read_yaml(yaml, &m->cfg);
    }
    bool found = false;
    if (!st)
        st = read_metadata(m->dir, NULL, &m->export_meta, &found);
    m->has_export_meta = found;
    if (!st && found)
        st = check_metadata(&m->export_meta, "export_metadata.json", &m->cfg);
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
    return st;
}

/* The image input of a baked graph: (B, C, H, W), uint8 or float32, C fixed
 * or taken from the metadata. */
static sleapc_status baked_channels(const sleapc_onnx_model *om, const sleapc_export_meta *meta,
                                    int *channels)
{
    const sleapc_onnx_graph *g = &om->graph;
    const sleapc_onnx_value *in = NULL;
    for (int i = 0; i < g->n_inputs && !in; i++)
        if (!sleapc__onnx_initializer(g, g->inputs[i].name))
            in = &g->inputs[i];
    if (!in || in->ndim != 4 ||
        (in->dtype != SLEAPC_ONNX_DTYPE_UINT8 && in->dtype != SLEAPC_ONNX_DTYPE_FLOAT))
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "%s: expected one (B, C, H, W) uint8 or float32 image input",
                            om->path);
    *channels = meta->input_channels;
    if (in->shape[1] > 0 && in->shape[1] != meta->input_channels)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "%s: the graph's input \"%s\" takes %lld channels, the export "
                            "metadata says input_channels %d",
                            om->path, in->name, (long long)in->shape[1], meta->input_channels);
    return SLEAPC_OK;
}

/* model.onnx with post-processing baked in (sleap-nn's export path): the
 * graph, its metadata, and the pose model's training config when the folder
 * has it (else the skeleton from the metadata). */
static sleapc_status load_baked(sleapc_model *m)
{
    m->weights_path = join(m->dir, "model.onnx");
    if (!m->weights_path)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    sleapc_status st = sleapc__onnx_read(m->weights_path, &m->baked);
    bool found = false;
    if (!st)
        st = read_metadata(m->dir, m->baked, &m->export_meta, &found);
    if (!st && !found)
        st = sleapc__fail(SLEAPC_ERR_FORMAT,
                          "%s: no export_metadata.json and no sleap_nn_metadata in model.onnx: "
                          "cannot tell which model type the graph is",
                          m->dir);
    m->has_export_meta = found;
    if (st)
        return st;
    const sleapc_export_meta *meta = &m->export_meta;
    const char *config_name = sleapc__export_pose_config_name(meta->kind);
    sleapc__model_config_defaults(&m->cfg);
    if (is_file(m->dir, config_name)) {
        char *yaml = join(m->dir, config_name);
        st = yaml ? sleapc__config_read_yaml(yaml, &m->cfg)
                  : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        if (!st)
            st = check_metadata(meta, "export metadata", &m->cfg);
        sleapc__free(yaml);
    } else {
        st = sleapc__export_meta_to_config(meta, m->weights_path, &m->cfg);
    }
    int channels = 0;
    if (!st)
        st = baked_channels(m->baked, meta, &channels);
    m->graph.in_channels = channels;
    m->graph.max_stride = 1;
    return st;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

sleapc_status sleapc__model_load_export(sleapc_model *m, const char *path)
{
    /* Like sleap-nn's auto-detection, a folder with model.onnx is an export
     * run with its baked post-processing; naming model_raw.onnx (or a folder
     * with only that) runs the bare network with sleapc's own layers. */
    bool raw = strcmp(base_name(path), "model_raw.onnx") == 0 || !is_file(m->dir, "model.onnx");
    return raw ? load_raw(m) : load_baked(m);
}
