/* Keras reader, naming half: which sleap-nn parameter each Keras layer of a
 * SLEAP UNet fills, and checks of the file's Keras model_config against what
 * the graph builder runs, so a layer that would be mis-run is refused. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/suffix.h"
#include "io/ckpt/keras_h5_impl.h"

static const char *act_name(sleapc_act act)
{
    switch (act) {
    case SLEAPC_ACT_RELU:
        return "relu";
    case SLEAPC_ACT_SIGMOID:
        return "sigmoid";
    case SLEAPC_ACT_SOFTMAX:
        return "softmax";
    case SLEAPC_ACT_GELU:
        return "gelu";
    case SLEAPC_ACT_NONE:
        break;
    }
    return "linear";
}

static int head_index(const sleapc_kerash5_ctx *c, const char *name)
{
    for (int h = 0; h < c->n_heads; h++)
        if (strcmp(c->heads[h].name, name) == 0)
            return h;
    return -1;
}

/* "CentroidConfmapsHead_0" -> "CentroidConfmapsHead": Keras numbers repeated
 * layer names, sleap-nn strips a trailing _<digits> from head names. */
static void strip_index_suffix(const char *name, char *base, size_t cap)
{
    snprintf(base, cap, "%s", name);
    char *u = strrchr(base, '_');
    if (!u || !u[1])
        return;
    const char *p = u + 1;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p == '\0')
        *u = '\0';
}

static void set_map(sleapc_kerash5_map *m, sleapc_kerash5_kind kind, const char *act,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set_map(sleapc_kerash5_map *m, sleapc_kerash5_kind kind, const char *act,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->key, sizeof m->key, fmt, ap);
    va_end(ap);
    m->kind = kind;
    m->act = act;
}

/* The backbone layers of SLEAP's UNet (sleap/nn/architectures/unet.py and
 * encoder_decoder.py name them exactly as sleap-nn does). A pattern matches
 * only when printing its numbers back gives the name itself. */
static bool map_backbone(const char *name, sleapc_kerash5_map *m)
{
    char canon[KEY_CAP];
    int b = -1, i = -1, j = -1, s0 = -1, s1 = -1;
    if (sscanf(name, "stack0_enc%d_conv%d", &b, &i) == 2 && b >= 0 && i >= 0) {
        snprintf(canon, sizeof canon, "stack0_enc%d_conv%d", b, i);
        if (strcmp(canon, name) == 0) {
            set_map(m, KIND_CONV, "linear", "model.backbone.encoders.0.encoder_stack.%d.blocks.%s",
                    b, name);
            return true;
        }
    }
    if (sscanf(name, "stack0_enc%d_middle_expand_conv%d", &b, &i) == 2 && b >= 0 && i >= 0) {
        snprintf(canon, sizeof canon, "stack0_enc%d_middle_expand_conv%d", b, i);
        if (strcmp(canon, name) == 0) {
            set_map(m, KIND_CONV, "linear", "model.backbone.middle_blocks.0.blocks.%s", name);
            return true;
        }
    }
    if (sscanf(name, "stack0_enc%d_middle_contract_conv%d", &b, &i) == 2 && b >= 0 && i >= 0) {
        snprintf(canon, sizeof canon, "stack0_enc%d_middle_contract_conv%d", b, i);
        if (strcmp(canon, name) == 0) {
            set_map(m, KIND_CONV, "linear", "model.backbone.middle_blocks.1.blocks.%s", name);
            return true;
        }
    }
    if (sscanf(name, "stack0_dec%d_s%d_to_s%d_trans_conv", &j, &s0, &s1) == 3 && j >= 0 && s0 > 0 &&
        s1 > 0) {
        snprintf(canon, sizeof canon, "stack0_dec%d_s%d_to_s%d_trans_conv", j, s0, s1);
        if (strcmp(canon, name) == 0) {
            set_map(m, KIND_CONVT, "linear", "model.backbone.decoders.0.decoder_stack.%d.blocks.%s",
                    j, name);
            return true;
        }
    }
    if (sscanf(name, "stack0_dec%d_s%d_to_s%d_refine_conv%d", &j, &s0, &s1, &i) == 4 && j >= 0 &&
        s0 > 0 && s1 > 0 && i >= 0) {
        snprintf(canon, sizeof canon, "stack0_dec%d_s%d_to_s%d_refine_conv%d", j, s0, s1, i);
        if (strcmp(canon, name) == 0) {
            set_map(m, KIND_CONV, "linear", "model.backbone.decoders.0.decoder_stack.%d.blocks.%s",
                    j, name);
            return true;
        }
    }
    if (sscanf(name, "stem%d_conv%d", &b, &i) == 2 && b >= 0 && i >= 0) {
        snprintf(canon, sizeof canon, "stem%d_conv%d", b, i);
        if (strcmp(canon, name) == 0) {
            set_map(m, KIND_CONV, "linear", "model.backbone.stem.stem_stack.%d.blocks.%s", b, name);
            return true;
        }
    }
    return false;
}

/* Where the weights of layer `name` go, in sleap-nn's head order. */
enum sleapc_kerash5_map_result sleapc__kerash5_map_layer(const sleapc_kerash5_ctx *c,
                                                         const char *name, sleapc_kerash5_map *m)
{
    char canon[KEY_CAP], base[KEY_CAP];
    int i = -1;
    if (map_backbone(name, m))
        return MAP_OK;
    if (sscanf(name, "pre_classification%d_fc", &i) == 1 && i >= 0) {
        snprintf(canon, sizeof canon, "pre_classification%d_fc", i);
        if (strcmp(canon, name) == 0) {
            int h = head_index(c, "ClassVectorsHead");
            if (h < 0)
                return MAP_SKIP;
            set_map(m, KIND_DENSE, "linear", "model.head_layers.%d.%s", h, name);
            return MAP_OK;
        }
    }
    strip_index_suffix(name, base, sizeof base);
    int h = head_index(c, base);
    if (h >= 0 && strcmp(base, "ClassVectorsHead") == 0) {
        set_map(m, KIND_DENSE, act_name(c->heads[h].act), "model.head_layers.%d.%s", h, base);
        return MAP_OK;
    }
    if (h >= 0) {
        set_map(m, KIND_CONV, act_name(c->heads[h].act), "model.head_layers.%d.%s.0", h, base);
        return MAP_OK;
    }
    return sleapc__ends_with(base, "Head") ? MAP_SKIP : MAP_UNKNOWN;
}

/* ---- Keras model_config ------------------------------------------------ */

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static bool str_is(const cJSON *v, const char *s)
{
    return cJSON_IsString(v) && strcmp(v->valuestring, s) == 0;
}

/* v is [a, b]; absent_ok when an absent key means Keras' default [a, b]. */
static bool pair_is(const cJSON *v, int a, int b, bool absent_ok)
{
    if (!v)
        return absent_ok;
    const cJSON *x = cJSON_GetArrayItem(v, 0), *y = cJSON_GetArrayItem(v, 1);
    return cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 && cJSON_IsNumber(x) &&
           cJSON_IsNumber(y) && x->valuedouble == a && y->valuedouble == b;
}

static const char *class_of(const cJSON *layer)
{
    const cJSON *cls = member(layer, "class_name");
    return cJSON_IsString(cls) ? cls->valuestring : "(none)";
}

static const cJSON *keras_layer(const sleapc_kerash5_ctx *c, const char *name)
{
    const cJSON *l;
    cJSON_ArrayForEach(l, c->layers)
    {
        if (str_is(member(l, "name"), name))
            return l;
    }
    return NULL;
}

/* The layer kinds of SLEAP's UNet and the options the graph IR implements:
 * an unknown kind would be silently mis-run, so it is refused. */
static sleapc_status check_keras_graph(const sleapc_kerash5_ctx *c)
{
    static const char *const known[] = {
        "InputLayer",   "Conv2D",      "Conv2DTranspose",    "Activation", "MaxPooling2D",
        "UpSampling2D", "Concatenate", "GlobalMaxPooling2D", "Flatten",    "Dense"};
    const cJSON *l;
    cJSON_ArrayForEach(l, c->layers)
    {
        const cJSON *name = member(l, "name"), *cfg = member(l, "config");
        const char *cls = class_of(l), *lname = cJSON_IsString(name) ? name->valuestring : "?";
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0] && !ok; k++)
            ok = strcmp(cls, known[k]) == 0;
        if (!ok)
            return sleapc__kerash5_fail_layer(
                c, lname, "Keras layer kind %s is not part of a SLEAP UNet", cls);
        if (strcmp(cls, "UpSampling2D") == 0 && (!pair_is(member(cfg, "size"), 2, 2, false) ||
                                                 !str_is(member(cfg, "interpolation"), "bilinear")))
            return sleapc__kerash5_fail_layer(c, lname, "UpSampling2D must be bilinear x2");
        if (strcmp(cls, "MaxPooling2D") == 0 && (!pair_is(member(cfg, "pool_size"), 2, 2, false) ||
                                                 !pair_is(member(cfg, "strides"), 2, 2, true)))
            return sleapc__kerash5_fail_layer(c, lname, "MaxPooling2D must be 2x2 with stride 2");
    }
    return SLEAPC_OK;
}

/* A weighted layer's Keras class and options against what the builder runs. */
sleapc_status sleapc__kerash5_check_layer(const sleapc_kerash5_ctx *c, const char *name,
                                          const sleapc_kerash5_map *m)
{
    if (!c->layers)
        return SLEAPC_OK;
    const cJSON *l = keras_layer(c, name);
    if (!l)
        return sleapc__kerash5_fail_layer(c, name,
                                          "has weights but is not in the file's model_config");
    const cJSON *cfg = member(l, "config");
    const char *cls = class_of(l), *want = kind_class[m->kind];
    if (strcmp(cls, want) != 0)
        return sleapc__kerash5_fail_layer(c, name, "is a Keras %s, expected a %s", cls, want);
    const cJSON *act = member(cfg, "activation");
    if (!str_is(act, m->act))
        return sleapc__kerash5_fail_layer(c, name, "activation %s, expected %s",
                                          cJSON_IsString(act) ? act->valuestring : "(none)",
                                          m->act);
    if (cJSON_IsFalse(member(cfg, "use_bias")))
        return sleapc__kerash5_fail_layer(c, name, "has no bias");
    if (m->kind == KIND_DENSE)
        return SLEAPC_OK;
    const cJSON *fmt = member(cfg, "data_format");
    if (!str_is(member(cfg, "padding"), "same") || (fmt && !str_is(fmt, "channels_last")) ||
        !pair_is(member(cfg, "dilation_rate"), 1, 1, true))
        return sleapc__kerash5_fail_layer(
            c, name, "must use padding \"same\", channels_last and no dilation");
    if (m->kind == KIND_CONV && !pair_is(member(cfg, "strides"), 1, 1, true))
        return sleapc__kerash5_fail_layer(c, name, "convolution stride must be 1");
    if (m->kind == KIND_CONVT) {
        const cJSON *op = member(cfg, "output_padding");
        if (!pair_is(member(cfg, "strides"), 2, 2, false) ||
            !pair_is(member(cfg, "kernel_size"), 3, 3, false) || (op && !cJSON_IsNull(op)))
            return sleapc__kerash5_fail_layer(c, name,
                                              "transposed convolution must be 3x3 with stride 2");
    }
    return SLEAPC_OK;
}

/* The root attribute model_config (JSON of the Keras Functional model), when
 * present; files without it are checked by layer names only. */
sleapc_status sleapc__kerash5_load_config(sleapc_kerash5_ctx *c)
{
    if (!sleapc__h5_attr_exists(c->f, "/", "model_config")) {
        sleapc__log(SLEAPC_LOG_WARN, "%s: no model_config attribute; layer kinds taken from names",
                    c->path);
        return SLEAPC_OK;
    }
    char *text = NULL;
    sleapc_status st = sleapc__h5_attr_string(c->f, "/", "model_config", &text);
    if (st)
        return sleapc__wrap(st, "read weights");
    c->keras = cJSON_Parse(text);
    sleapc__free(text);
    const cJSON *layers = member(member(c->keras, "config"), "layers");
    if (!cJSON_IsArray(layers))
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "read weights: %s: the model_config attribute is not the JSON of a "
                            "Keras model",
                            c->path);
    if (cJSON_GetArraySize(layers) > MAX_LAYERS)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read weights: %s: more than %d layers", c->path,
                            MAX_LAYERS);
    c->layers = layers;
    return check_keras_graph(c);
}
