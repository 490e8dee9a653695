/* Builder parts every sleap-nn backbone shares (build_impl.h): strict tensor
 * binding, the decoder of encoder_decoder.py and the heads of heads.py. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/build_impl.h"

static void shape_str(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndim && n + 24 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "[", (long long)shape[i]);
    snprintf(buf + n, cap - n, "%s", ndim ? "]" : "[]");
}

sleapc_status sleapc__bld_bind(sleapc_builder *bd, const char *key, int ndim,
                               const int64_t *shape, const float **out)
{
    char want[96], got[96];
    shape_str(want, sizeof want, ndim, shape);
    const sleapc_weight *t = sleapc__weights_find(bd->w, key);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: missing tensor \"%s\" (config expects %s)",
                            bd->path, key, want);
    bool same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = t->shape[i] == shape[i];
    if (!same) {
        shape_str(got, sizeof got, t->ndim, t->shape);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: tensor \"%s\" is %s, config expects %s",
                            bd->path, key, got, want);
    }
    bd->used[t - bd->w->items] = true;
    *out = t->data;
    return SLEAPC_OK;
}

sleapc_status sleapc__bld_conv(sleapc_builder *bd, sleapc_op op, const char *prefix,
                               const char *name, int src, int c_in, int c_out, int k,
                               sleapc_act act, bool has_bias, int *out)
{
    sleapc_node n = {.op = op, .n_inputs = 1, .inputs = {src}, .c_in = c_in, .c_out = c_out,
                     .kernel = k, .act = act, .keras_placement = bd->keras_placement};
    snprintf(n.name, sizeof n.name, "%s", name);
    char key[SLEAPC_KEY_CAP];
    /* ConvTranspose2d stores (in, out, kh, kw); Conv2d (out, in, kh, kw). */
    int64_t wshape[4] = {op == SLEAPC_OP_CONV2D ? c_out : c_in,
                         op == SLEAPC_OP_CONV2D ? c_in : c_out, k, k};
    int64_t bshape[1] = {c_out};
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 4, wshape, &n.weight);
    if (st)
        return st;
    if (has_bias) {
        snprintf(key, sizeof key, "%s.bias", prefix);
        st = sleapc__bld_bind(bd, key, 1, bshape, &n.bias);
        if (st)
            return st;
    }
    return sleapc__graph_add(bd->g, &n, out);
}

sleapc_status sleapc__bld_simple(sleapc_builder *bd, sleapc_op op, const char *name, int n_in,
                                 const int *inputs, int *out)
{
    sleapc_node n = {.op = op, .n_inputs = n_in};
    for (int i = 0; i < n_in; i++)
        n.inputs[i] = inputs[i];
    snprintf(n.name, sizeof n.name, "%s", name);
    return sleapc__graph_add(bd->g, &n, out);
}

sleapc_status sleapc__bld_linear(sleapc_builder *bd, const char *prefix, const char *name,
                                 int src, int c_in, int c_out, sleapc_act act, int *out)
{
    sleapc_node n = {.op = SLEAPC_OP_LINEAR, .n_inputs = 1, .inputs = {src}, .c_in = c_in,
                     .c_out = c_out, .act = act};
    snprintf(n.name, sizeof n.name, "%s", name);
    char key[SLEAPC_KEY_CAP];
    int64_t wshape[2] = {c_out, c_in};
    int64_t bshape[1] = {c_out};
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 2, wshape, &n.weight);
    if (st)
        return st;
    snprintf(key, sizeof key, "%s.bias", prefix);
    st = sleapc__bld_bind(bd, key, 1, bshape, &n.bias);
    if (st)
        return st;
    return sleapc__graph_add(bd->g, &n, out);
}

int sleapc__ilog2_exact(int v)
{
    int l = 0;
    while (l < 30 && (1 << l) < v)
        l++;
    return (1 << l) == v ? l : -1;
}

sleapc_status sleapc__bld_heads(const sleapc_builder *bd, sleapc_head_spec *heads, int *n_heads)
{
    const char *p = bd->cfg->source_path ? bd->cfg->source_path : "config";
    *n_heads = sleapc__heads_for_config(bd->cfg, heads);
    if (*n_heads == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: unknown model type", p);
    for (int i = 0; i < *n_heads; i++) {
        if (heads[i].stride == 0)
            continue;
        if (heads[i].channels < 1)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: head %s has no channels", p, heads[i].name);
        if (sleapc__ilog2_exact(heads[i].stride) < 0)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: head %s output_stride %d is not a power of 2",
                                p, heads[i].name, heads[i].stride);
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__bld_decoder(sleapc_builder *bd, sleapc_decoder *dec, int x, int c,
                                  int stride)
{
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP], block[64];
    sleapc_status st = SLEAPC_OK;
    dec->n_feat = 0;
    dec->feat_node[dec->n_feat] = x;
    dec->feat_stride[dec->n_feat] = stride;
    dec->feat_ch[dec->n_feat++] = c;
    int cs = stride;
    for (int j = 0; j < dec->n_blocks; j++) {
        int gj = dec->width[j];
        snprintf(block, sizeof block, dec->block_fmt, j, cs, cs / 2);
        int up, up_ch;
        if (dec->up_interpolate) {
            snprintf(name, sizeof name, "%s_interp", block);
            st = sleapc__bld_simple(bd, SLEAPC_OP_UPSAMPLE2X, name, 1, &x, &up);
            up_ch = c;
        } else {
            snprintf(name, sizeof name, "%s_trans_conv", block);
            snprintf(prefix, sizeof prefix, dec->key_fmt, j, name);
            st = sleapc__bld_conv(bd, SLEAPC_OP_CONV_TRANSPOSE2D, prefix, name, x, c, gj, 3,
                                  SLEAPC_ACT_RELU, true, &up);
            up_ch = gj;
        }
        if (st)
            return st;
        int in_ch = up_ch;
        if (dec->skip[j] >= 0) {
            int skip = dec->skip[j];
            int ins[2] = {up, skip};
            snprintf(name, sizeof name, "%s_resize", block);
            st = sleapc__bld_simple(bd, SLEAPC_OP_RESIZE_LIKE, name, 2, ins, &up);
            if (st)
                return st;
            /* sleap-nn concatenates the skip FIRST (formats.md A.6). */
            int cat_in[2] = {skip, up};
            snprintf(name, sizeof name, "%s_concat", block);
            st = sleapc__bld_simple(bd, SLEAPC_OP_CONCAT, name, 2, cat_in, &x);
            if (st)
                return st;
            in_ch += dec->skip_ch[j];
        } else {
            x = up;
        }
        c = in_ch;
        for (int i = 0; i < dec->refine[j]; i++) {
            snprintf(name, sizeof name, "%s_refine_conv%d", block, i);
            snprintf(prefix, sizeof prefix, dec->key_fmt, j, name);
            st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, gj, dec->kernel,
                                  SLEAPC_ACT_RELU, true, &x);
            if (st)
                return st;
            c = gj;
        }
        cs /= 2;
        dec->feat_node[dec->n_feat] = x;
        dec->feat_stride[dec->n_feat] = cs;
        dec->feat_ch[dec->n_feat++] = gj;
    }
    return SLEAPC_OK;
}

/* The feature map at a stride: a decoder output, or the middle output for
 * the deepest (model.py _feature_at_stride). -1 when there is none. */
static int feature_at(const sleapc_decoder *dec, int stride)
{
    for (int i = 0; i < dec->n_feat; i++)
        if (dec->feat_stride[i] == stride)
            return i;
    return -1;
}

/* One SSDHead output (heads.py _SSDPredictor, the one head module, so
 * "model.head_layers.0"): at a level's cls entry, its tower of head_convs
 * 3x3 conv + ReLU ("towers.<l>.<2i>", the ReLUs between them) is built and
 * kept in tower[l] for the box entry; then the 3x3 predictor
 * ("cls_preds.<l>" / "box_preds.<l>"). */
static sleapc_status ssd_output(sleapc_builder *bd, const sleapc_decoder *dec,
                                const sleapc_head_spec *hs, int fi, int *tower, int *tower_ch,
                                int *out)
{
    const sleapc_bbox_config *b = &bd->cfg->bbox;
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP];
    int l = hs->level;
    sleapc_status st = SLEAPC_OK;
    if (hs->kind == SLEAPC_HEAD_SSD_CLS) {
        tower[l] = dec->feat_node[fi];
        tower_ch[l] = dec->feat_ch[fi];
        for (int i = 0; !st && i < b->head_convs; i++) {
            snprintf(name, sizeof name, "SSDHead_tower%d_conv%d", l, i);
            snprintf(prefix, sizeof prefix, "model.head_layers.0.towers.%d.%d", l, 2 * i);
            st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, tower[l], tower_ch[l],
                                  b->head_channels, 3, SLEAPC_ACT_RELU, true, &tower[l]);
            tower_ch[l] = b->head_channels;
        }
    }
    if (st)
        return st;
    bool cls = hs->kind == SLEAPC_HEAD_SSD_CLS;
    snprintf(prefix, sizeof prefix, "model.head_layers.0.%s.%d", cls ? "cls_preds" : "box_preds",
             l);
    return sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, hs->name, tower[l], tower_ch[l],
                            hs->channels, 3, hs->act, true, out);
}

/* EmbeddingHead (heads.py make_head) on the middle output: the pool (GeM with
 * its learned exponent "pre_embedding_pool.p", max or mean), num_fc_layers x
 * (Linear + ReLU), the EmbeddingHead Linear, and the L2 normalisation
 * (F.normalize, eps 1e-12) when normalize. GeM floors at eps 1e-6. */
static sleapc_status embedding_output(sleapc_builder *bd, const sleapc_head_spec *hs, int h,
                                      int middle, int middle_ch, int *out)
{
    const sleapc_embedding_config *e = &bd->cfg->embedding;
    const char *p = bd->cfg->source_path ? bd->cfg->source_path : "config";
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP], key[SLEAPC_KEY_CAP];
    if (e->fc_layers < 0 || e->fc_layers > 64 || e->fc_units < 1 || hs->channels < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "%s: EmbeddingHead embedding_dim %d, num_fc_layers %d, num_fc_units %d",
                            p, hs->channels, e->fc_layers, e->fc_units);
    sleapc_status st;
    if (e->pool == SLEAPC_EMBEDDING_POOL_MAX) {
        st = sleapc__bld_simple(bd, SLEAPC_OP_GLOBAL_MAXPOOL, "pre_embedding_pool", 1, &middle,
                                out);
    } else {
        sleapc_node n = {.op = SLEAPC_OP_GLOBAL_GEMPOOL, .n_inputs = 1, .inputs = {middle},
                         .c_in = middle_ch, .c_out = middle_ch, .eps = 1e-6f};
        snprintf(n.name, sizeof n.name, "pre_embedding_pool");
        st = SLEAPC_OK;
        if (e->pool == SLEAPC_EMBEDDING_POOL_GEM) {
            snprintf(key, sizeof key, "model.head_layers.%d.pre_embedding_pool.p", h);
            st = sleapc__bld_bind(bd, key, 0, NULL, &n.weight);
            if (!st && !(n.weight[0] == n.weight[0]))
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: tensor \"%s\" is NaN", bd->path, key);
        }
        if (!st)
            st = sleapc__graph_add(bd->g, &n, out);
    }
    int v_ch = middle_ch;
    for (int i = 0; !st && i < e->fc_layers; i++) {
        snprintf(name, sizeof name, "pre_embedding%d_fc", i);
        snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s", h, name);
        st = sleapc__bld_linear(bd, prefix, name, *out, v_ch, e->fc_units, SLEAPC_ACT_RELU, out);
        v_ch = e->fc_units;
    }
    snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s", h, hs->name);
    if (!st)
        st = sleapc__bld_linear(bd, prefix, e->normalize ? "EmbeddingHead_linear" : hs->name,
                                *out, v_ch, hs->channels, SLEAPC_ACT_NONE, out);
    if (!st && e->normalize) {
        sleapc_node n = {.op = SLEAPC_OP_L2NORM, .n_inputs = 1, .inputs = {*out},
                         .c_in = hs->channels, .c_out = hs->channels, .eps = 1e-12f};
        snprintf(n.name, sizeof n.name, "%s", hs->name);
        st = sleapc__graph_add(bd->g, &n, out);
    }
    return st;
}

/* Heads (model.py): a 1x1 conv on the feature map of the head's stride;
 * ClassVectorsHead reads the middle output (intermediate_feat); an SSDHead
 * level reads the map of its stride (ssd_output). */
sleapc_status sleapc__bld_add_heads(sleapc_builder *bd, const sleapc_decoder *dec,
                                    const sleapc_head_spec *heads, int n_heads, int middle,
                                    int middle_ch)
{
    const sleapc_model_config *cfg = bd->cfg;
    const char *p = cfg->source_path ? cfg->source_path : "config";
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP];
    int tower[SLEAPC_MAX_HEADS] = {0}, tower_ch[SLEAPC_MAX_HEADS] = {0};
    sleapc_status st;
    for (int h = 0; h < n_heads; h++) {
        const sleapc_head_spec *hs = &heads[h];
        int out;
        if (hs->stride == 0 && cfg->model_type == SLEAPC_MODEL_TYPE_EMBEDDING) {
            st = embedding_output(bd, hs, h, middle, middle_ch, &out);
        } else if (hs->stride == 0) {
            if (!cfg->class_vectors_global_pool)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: ClassVectorsHead global_pool: false is not supported", p);
            int n_fc = cfg->class_vectors_fc_layers;
            int units = cfg->class_vectors_fc_units;
            if (n_fc < 0 || n_fc > 64 || units < 1)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: ClassVectorsHead num_fc_layers %d, num_fc_units %d",
                                    p, n_fc, units);
            snprintf(name, sizeof name, "ClassVectorsHead_pool");
            st = sleapc__bld_simple(bd, SLEAPC_OP_GLOBAL_MAXPOOL, name, 1, &middle, &out);
            if (st)
                return st;
            int v_ch = middle_ch;
            for (int i = 0; i < n_fc; i++) {
                snprintf(name, sizeof name, "pre_classification%d_fc", i);
                snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s", h, name);
                st = sleapc__bld_linear(bd, prefix, name, out, v_ch, units, SLEAPC_ACT_RELU, &out);
                if (st)
                    return st;
                v_ch = units;
            }
            snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s", h, hs->name);
            st = sleapc__bld_linear(bd, prefix, hs->name, out, v_ch, hs->channels,
                                    SLEAPC_ACT_SOFTMAX, &out);
        } else {
            int fi = feature_at(dec, hs->stride);
            if (fi < 0)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: no decoder output at stride %d for %s",
                                    p, hs->stride, hs->name);
            if (hs->kind != SLEAPC_HEAD_CONV1X1) {
                if (hs->level < 0 || hs->level >= SLEAPC_MAX_HEADS)
                    return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: %s level %d", p, hs->name,
                                        hs->level);
                st = ssd_output(bd, dec, hs, fi, tower, tower_ch, &out);
            } else {
                snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s.0", h, hs->name);
                st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, hs->name,
                                      dec->feat_node[fi], dec->feat_ch[fi], hs->channels, 1,
                                      hs->act, true, &out);
            }
        }
        if (st)
            return st;
        st = sleapc__graph_add_output(bd->g, hs->name, out, hs->stride);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__bld_run(const sleapc_model_config *cfg, const sleapc_weights *w,
                              const char *weights_path, bool strict, bool keras_placement,
                              sleapc_graph *g, sleapc_build_fn fn)
{
    sleapc_builder bd = {.cfg = cfg, .w = w, .path = weights_path, .g = g,
                         .keras_placement = keras_placement};
    memset(g, 0, sizeof *g);
    bd.used = sleapc__calloc((size_t)(w->n > 0 ? w->n : 1), sizeof *bd.used);
    if (!bd.used)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "build model: out of memory");
    sleapc_status st = fn(&bd);
    /* An embedding model's input is its standardized crop (sleap-nn's
     * EmbeddingLightningModule forward), not an image to scale by 255. */
    g->input_as_is = cfg->model_type == SLEAPC_MODEL_TYPE_EMBEDDING;
    for (int i = 0; st == SLEAPC_OK && strict && i < w->n; i++)
        if (!bd.used[i] && strncmp(w->items[i].name, "model.", 6) == 0)
            st = sleapc__fail(SLEAPC_ERR_FORMAT,
                              "%s: tensor \"%s\" is not part of the network the config describes",
                              weights_path, w->items[i].name);
    sleapc__free(bd.used);
    if (st)
        sleapc__graph_clear(g);
    return st;
}

sleapc_status sleapc__build_backbone(const sleapc_model_config *cfg, const sleapc_weights *w,
                                     const char *weights_path, bool strict, sleapc_graph *g)
{
    switch (cfg->backbone_type) {
    case SLEAPC_BACKBONE_UNET:
        return sleapc__build_unet(cfg, w, weights_path, strict, false, g);
    case SLEAPC_BACKBONE_CONVNEXT:
        return sleapc__build_convnext(cfg, w, weights_path, strict, g);
    case SLEAPC_BACKBONE_SWINT:
        return sleapc__build_swint(cfg, w, weights_path, strict, g);
    case SLEAPC_BACKBONE_OTHER:
        break;
    }
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                        "%s: unsupported backbone \"%s\" (sleapc runs UNet, ConvNeXt and SwinT models)",
                        cfg->source_path ? cfg->source_path : "config", cfg->backbone_name);
}
