/* Keras 2.x whole-model HDF5 (SLEAP 1.x best_model.h5) -> sleap-nn state-dict
 * names and PyTorch layouts. The name mapping and layout conversion follow
 * sleap-nn's legacy_models.py (load_keras_weights, map_legacy_to_pytorch_layers,
 * convert_keras_to_pytorch_conv2d*), but by exact layer name rather than by
 * substring and shape, so a surprise is an error instead of a skipped layer.
 *
 * This file walks the HDF5 groups and converts layouts; keras_h5_map.c maps
 * the layer names and checks the Keras model_config. */
#include "io/ckpt/keras_h5.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ckpt/keras_h5_impl.h"
#include "io/config/model_heads.h"
#include "io/h5/h5_file.h"

#define PATH_CAP 1024
/* Groups below /model_weights/<layer>: Keras writes one (<layer>/<layer>). */
#define MAX_DEPTH 3
/* A kernel of 2^28 floats is 1 GiB: far beyond any UNet, small enough to read. */
#define MAX_ELEMS ((int64_t)1 << 28)

sleapc_status sleapc__kerash5_fail_layer(const sleapc_kerash5_ctx *c, const char *layer,
                                         const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return sleapc__fail(SLEAPC_ERR_FORMAT, "read weights: %s: layer %s: %s", c->path, layer, why);
}

static sleapc_status nomem(const sleapc_kerash5_ctx *c)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read weights: %s: out of memory", c->path);
}
/* ---- Weights ------------------------------------------------------------ */

typedef struct found {
    char kernel[PATH_CAP];
    char bias[PATH_CAP];
} found;

/* Collect the kernel and bias datasets below a layer's group. */
static sleapc_status walk(const sleapc_kerash5_ctx *c, const char *layer, const char *group,
                          int depth, found *fd)
{
    char **names = NULL;
    int64_t n = 0;
    sleapc_status st = sleapc__h5_list(c->f, group, &names, &n);
    if (st)
        return sleapc__wrap(st, "read weights: layer %s", layer);
    for (int64_t i = 0; !st && i < n; i++) {
        char path[PATH_CAP];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", group, names[i]) >= sizeof path) {
            st = sleapc__kerash5_fail_layer(c, layer, "object name too long");
            break;
        }
        sleapc_h5_kind kind = sleapc__h5_kind(c->f, path);
        if (kind == SLEAPC_H5_KIND_GROUP) {
            st = depth < MAX_DEPTH
                     ? walk(c, layer, path, depth + 1, fd)
                     : sleapc__kerash5_fail_layer(c, layer, "groups nested too deeply");
        } else if (kind != SLEAPC_H5_KIND_DATASET) {
            st = sleapc__kerash5_fail_layer(c, layer, "%s is not a dataset", names[i]);
        } else {
            bool is_kernel = strncmp(names[i], "kernel", 6) == 0;
            bool is_bias = strncmp(names[i], "bias", 4) == 0;
            char *slot = is_kernel ? fd->kernel : is_bias ? fd->bias : NULL;
            if (!slot)
                st = sleapc__kerash5_fail_layer(
                    c, layer, "unexpected weight %s (SLEAP UNets have only kernels and biases)",
                    names[i]);
            else if (slot[0])
                st = sleapc__kerash5_fail_layer(c, layer, "more than one %s",
                                                is_kernel ? "kernel" : "bias");
            else
                snprintf(slot, PATH_CAP, "%s", path);
        }
    }
    sleapc__h5_free_strings(names, n);
    return st;
}

static void shape_str(char *buf, size_t cap, const sleapc_h5_info *in)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < in->ndim && n + 24 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "[", (long long)in->shape[i]);
    snprintf(buf + n, cap - n, "%s", in->ndim ? "]" : "[]");
}

/* Shape and type of one weight dataset, before reading anything. */
static sleapc_status weight_info(const sleapc_kerash5_ctx *c, const char *layer, const char *dset,
                                 const char *what, sleapc_h5_info *in)
{
    sleapc_status st = sleapc__h5_dataset_info(c->f, dset, in);
    if (st)
        return sleapc__wrap(st, "read weights: layer %s", layer);
    if (in->cls != SLEAPC_H5_CLASS_FLOAT)
        return sleapc__kerash5_fail_layer(c, layer, "%s is not floating point", what);
    for (int i = 0; i < in->ndim; i++)
        if (in->shape[i] < 1)
            return sleapc__kerash5_fail_layer(c, layer, "%s has an empty dimension", what);
    if (in->n_elems > MAX_ELEMS)
        return sleapc__kerash5_fail_layer(c, layer,
                                          "%s has %lld elements, more than a UNet layer can have",
                                          what, (long long)in->n_elems);
    return SLEAPC_OK;
}

/* Read dset as float32 into a new aligned block laid out for PyTorch:
 * 4-D kernels permuted (3, 2, 0, 1), 2-D kernels transposed, 1-D copied. */
static sleapc_status read_converted(const sleapc_kerash5_ctx *c, const char *layer,
                                    const char *dset, const sleapc_h5_info *in, float **out)
{
    void *raw = NULL;
    sleapc_status st = sleapc__h5_read(c->f, dset, SLEAPC_H5_F32, &raw, NULL);
    if (st)
        return sleapc__wrap(st, "read weights: layer %s", layer);
    float *dst = sleapc__aligned_alloc((size_t)in->n_elems * sizeof *dst);
    if (!dst) {
        sleapc__free(raw);
        return nomem(c);
    }
    const float *src = raw;
    const int64_t *s = in->shape;
    if (in->ndim == 4) {
        /* Keras (d0, d1, d2, d3) -> (d3, d2, d0, d1): conv HWIO -> OIHW, and
         * transposed conv (kh, kw, out, in) -> (in, out, kh, kw). */
        for (int64_t a = 0; a < s[0]; a++)
            for (int64_t b = 0; b < s[1]; b++)
                for (int64_t p = 0; p < s[2]; p++)
                    for (int64_t q = 0; q < s[3]; q++)
                        dst[((q * s[2] + p) * s[0] + a) * s[1] + b] =
                            src[((a * s[1] + b) * s[2] + p) * s[3] + q];
    } else if (in->ndim == 2) {
        for (int64_t a = 0; a < s[0]; a++)
            for (int64_t b = 0; b < s[1]; b++)
                dst[b * s[0] + a] = src[a * s[1] + b];
    } else {
        memcpy(dst, src, (size_t)in->n_elems * sizeof *dst);
    }
    sleapc__free(raw);
    *out = dst;
    return SLEAPC_OK;
}

/* One weighted layer: check shapes, convert, add under its sleap-nn name. */
static sleapc_status add_layer(sleapc_kerash5_ctx *c, const char *layer,
                               const sleapc_kerash5_map *m, const found *fd)
{
    sleapc_h5_info kin, bin;
    char ks[96], bs[96], key[KEY_CAP + 8];
    sleapc_status st = weight_info(c, layer, fd->kernel, "kernel", &kin);
    if (!st)
        st = weight_info(c, layer, fd->bias, "bias", &bin);
    if (st)
        return st;
    shape_str(ks, sizeof ks, &kin);
    shape_str(bs, sizeof bs, &bin);
    int want_ndim = m->kind == KIND_DENSE ? 2 : 4;
    /* Output channels: conv (kh,kw,in,out), transposed (kh,kw,out,in), dense (in,out). */
    int64_t n_out = kin.ndim != want_ndim   ? -1
                    : m->kind == KIND_CONVT ? kin.shape[2]
                                            : kin.shape[kin.ndim - 1];
    if (kin.ndim != want_ndim)
        return sleapc__kerash5_fail_layer(c, layer, "kernel is %s, a %s kernel has %d dimensions",
                                          ks, kind_class[m->kind], want_ndim);
    if (want_ndim == 4 && kin.shape[0] != kin.shape[1])
        return sleapc__kerash5_fail_layer(c, layer, "kernel is %s, not square", ks);
    if (bin.ndim != 1 || bin.shape[0] != n_out)
        return sleapc__kerash5_fail_layer(c, layer, "bias is %s, kernel %s has %lld outputs", bs,
                                          ks, (long long)n_out);

    snprintf(key, sizeof key, "%s.weight", m->key);
    if (sleapc__weights_find(c->out, key))
        return sleapc__kerash5_fail_layer(c, layer,
                                          "maps onto %s, which another layer already filled", key);
    int64_t pt_shape[4];
    if (want_ndim == 4) {
        int64_t t[4] = {kin.shape[3], kin.shape[2], kin.shape[0], kin.shape[1]};
        memcpy(pt_shape, t, sizeof t);
    } else {
        pt_shape[0] = kin.shape[1];
        pt_shape[1] = kin.shape[0];
    }
    float *data = NULL;
    st = read_converted(c, layer, fd->kernel, &kin, &data);
    if (!st)
        st = sleapc__weights_add(c->out, key, want_ndim, pt_shape, data);
    if (!st)
        st = read_converted(c, layer, fd->bias, &bin, &data);
    snprintf(key, sizeof key, "%s.bias", m->key);
    if (!st)
        st = sleapc__weights_add(c->out, key, 1, bin.shape, data);
    return st;
}

static sleapc_status read_layer(sleapc_kerash5_ctx *c, const char *layer)
{
    char group[PATH_CAP];
    if ((size_t)snprintf(group, sizeof group, "/model_weights/%s", layer) >= sizeof group)
        return sleapc__kerash5_fail_layer(c, layer, "name too long");
    found fd = {{0}, {0}};
    sleapc_status st = walk(c, layer, group, 1, &fd);
    if (st || (!fd.kernel[0] && !fd.bias[0]))
        return st; /* activations, pools, concatenations: no weights */
    sleapc_kerash5_map m;
    switch (sleapc__kerash5_map_layer(c, layer, &m)) {
    case MAP_SKIP:
        sleapc__log(SLEAPC_LOG_INFO, "%s: layer %s is not used by this model type; skipped",
                    c->path, layer);
        return SLEAPC_OK;
    case MAP_UNKNOWN:
        return sleapc__kerash5_fail_layer(c, layer, "not a layer of a SLEAP UNet");
    case MAP_OK:
        break;
    }
    if (!fd.kernel[0] || !fd.bias[0])
        return sleapc__kerash5_fail_layer(c, layer, "has a %s but no %s",
                                          fd.kernel[0] ? "kernel" : "bias",
                                          fd.kernel[0] ? "bias" : "kernel");
    st = sleapc__kerash5_check_layer(c, layer, &m);
    if (!st)
        st = add_layer(c, layer, &m, &fd);
    return st;
}

sleapc_status sleapc__keras_h5_read(const char *path, const sleapc_model_config *cfg,
                                    sleapc_weights *out)
{
    if (!path || !cfg || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read weights: path, cfg and out are required");
    if (out->n)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read weights: %s: out must be empty", path);
    sleapc_kerash5_ctx c = {.path = path, .out = out};
    c.n_heads = sleapc__heads_for_config(cfg, c.heads);
    if (c.n_heads == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "read weights: %s: the config has no model type", path);
    sleapc_status st = sleapc__h5_open(path, &c.f);
    if (st)
        return sleapc__wrap(st, "read weights");
    char **layers = NULL;
    int64_t n = 0;
    if (!sleapc__h5_is_group(c.f, "/model_weights"))
        st = sleapc__fail(SLEAPC_ERR_FORMAT,
                          "read weights: %s: no /model_weights group (not a Keras whole-model "
                          "file)",
                          path);
    if (!st)
        st = sleapc__kerash5_load_config(&c);
    if (!st)
        st = sleapc__h5_list(c.f, "/model_weights", &layers, &n);
    if (!st && n > MAX_LAYERS)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read weights: %s: more than %d layers", path,
                          MAX_LAYERS);
    for (int64_t i = 0; !st && i < n; i++)
        st = read_layer(&c, layers[i]);
    if (!st && out->n == 0)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read weights: %s: no layer has weights", path);
    sleapc__h5_free_strings(layers, n);
    cJSON_Delete(c.keras);
    sleapc__h5_close(c.f);
    if (st)
        sleapc__weights_clear(out);
    return st;
}

sleapc_status sleapc__keras_h5_patch_config(const sleapc_weights *w, const char *path,
                                            sleapc_model_config *cfg)
{
    /* sleap-nn get_keras_first_layer_channels: the first conv's input channels. */
    static const char *const first[] = {
        "model.backbone.encoders.0.encoder_stack.0.blocks.stack0_enc0_conv0.weight",
        "model.backbone.stem.stem_stack.0.blocks.stem0_conv0.weight"};
    for (int i = 0; i < 2; i++) {
        const sleapc_weight *t = sleapc__weights_find(w, first[i]);
        if (t && t->ndim == 4 && t->shape[1] >= 1 && t->shape[1] <= 4) {
            cfg->unet.in_channels = (int)t->shape[1];
            break;
        }
    }
    if (cfg->model_type != SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN)
        return SLEAPC_OK;
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    int n_heads = sleapc__heads_for_config(cfg, heads), h = -1;
    for (int i = 0; i < n_heads; i++)
        if (strcmp(heads[i].name, "ClassVectorsHead") == 0)
            h = i;
    if (h < 0)
        return SLEAPC_OK;
    /* The JSON may omit the MLP sizes (sleap-nn then guesses 2 x 1024), so
     * count the pre_classification layers and read their width. */
    int n_fc = 0, units = 0;
    for (;; n_fc++) {
        char key[KEY_CAP];
        snprintf(key, sizeof key, "model.head_layers.%d.pre_classification%d_fc.weight", h, n_fc);
        const sleapc_weight *t = sleapc__weights_find(w, key);
        if (!t)
            break;
        if (t->ndim != 2 || t->shape[0] < 1 || t->shape[0] > (1 << 24))
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read weights: %s: %s is not a dense kernel",
                                path, key);
        if (n_fc == 0)
            units = (int)t->shape[0];
    }
    if (n_fc != cfg->class_vectors_fc_layers || (n_fc && units != cfg->class_vectors_fc_units))
        sleapc__log(SLEAPC_LOG_INFO,
                    "%s: class vectors: %d fc layers of %d units in the weights (config: %d of %d)",
                    path, n_fc, units, cfg->class_vectors_fc_layers, cfg->class_vectors_fc_units);
    cfg->class_vectors_fc_layers = n_fc;
    if (n_fc)
        cfg->class_vectors_fc_units = units;
    return SLEAPC_OK;
}
