/* sleap-nn's UNet (architectures/unet.py, encoder_decoder.py) and its heads
 * (heads.py, model.py) lowered to the graph IR, with every checkpoint tensor
 * looked up by name and shape-checked (architectures.md §3.7). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/build.h"

#define KEY_CAP 256

typedef struct builder {
    const sleapc_model_config *cfg;
    const sleapc_weights *w;
    const char *path;
    sleapc_graph *g;
    bool *used;          /* per weight: bound to a node */
    bool keras_placement;
} builder;

static void shape_str(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndim && n + 24 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "[", (long long)shape[i]);
    snprintf(buf + n, cap - n, "%s", ndim ? "]" : "[]");
}

/* Find tensor `key` and check it has exactly the expected shape. */
static sleapc_status bind(builder *bd, const char *key, int ndim, const int64_t *shape,
                          const float **out)
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

/* Conv (or transposed conv) + bias from "<prefix>.weight" / "<prefix>.bias". */
static sleapc_status add_conv(builder *bd, sleapc_op op, const char *prefix, const char *name,
                              int src, int c_in, int c_out, int k, sleapc_act act, int *out)
{
    sleapc_node n = {.op = op, .n_inputs = 1, .inputs = {src}, .c_in = c_in, .c_out = c_out,
                     .kernel = k, .act = act, .keras_placement = bd->keras_placement};
    snprintf(n.name, sizeof n.name, "%s", name);
    char key[KEY_CAP];
    /* ConvTranspose2d stores (in, out, kh, kw); Conv2d (out, in, kh, kw). */
    int64_t wshape[4] = {op == SLEAPC_OP_CONV2D ? c_out : c_in,
                         op == SLEAPC_OP_CONV2D ? c_in : c_out, k, k};
    int64_t bshape[1] = {c_out};
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = bind(bd, key, 4, wshape, &n.weight);
    if (st)
        return st;
    snprintf(key, sizeof key, "%s.bias", prefix);
    st = bind(bd, key, 1, bshape, &n.bias);
    if (st)
        return st;
    return sleapc__graph_add(bd->g, &n, out);
}

static sleapc_status add_simple(builder *bd, sleapc_op op, const char *name, int n_in,
                                const int *inputs, int *out)
{
    sleapc_node n = {.op = op, .n_inputs = n_in};
    for (int i = 0; i < n_in; i++)
        n.inputs[i] = inputs[i];
    snprintf(n.name, sizeof n.name, "%s", name);
    return sleapc__graph_add(bd->g, &n, out);
}

static sleapc_status add_linear(builder *bd, const char *prefix, const char *name, int src,
                                int c_in, int c_out, sleapc_act act, int *out)
{
    sleapc_node n = {.op = SLEAPC_OP_LINEAR, .n_inputs = 1, .inputs = {src}, .c_in = c_in,
                     .c_out = c_out, .act = act};
    snprintf(n.name, sizeof n.name, "%s", name);
    char key[KEY_CAP];
    int64_t wshape[2] = {c_out, c_in};
    int64_t bshape[1] = {c_out};
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = bind(bd, key, 2, wshape, &n.weight);
    if (st)
        return st;
    snprintf(key, sizeof key, "%s.bias", prefix);
    st = bind(bd, key, 1, bshape, &n.bias);
    if (st)
        return st;
    return sleapc__graph_add(bd->g, &n, out);
}

static int ilog2_exact(int v)
{
    int l = 0;
    while ((1 << l) < v)
        l++;
    return (1 << l) == v ? l : -1;
}

/* F_b = int(filters * filters_rate ** b): Python float power, then truncation. */
static int level_width(const sleapc_unet_config *u, int b)
{
    return (int)((double)u->filters * pow(u->filters_rate, (double)b));
}

/* Checks of the UNet options sleapc (and sleap-nn) can run. */
static sleapc_status check_unet(const builder *bd, const sleapc_unet_config *u, int *out_d)
{
    const char *p = bd->cfg->source_path ? bd->cfg->source_path : "config";
    if (u->stem_stride > 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: UNet stem_stride %d is not supported",
                            p, u->stem_stride);
    if (!u->middle_block)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: UNet middle_block: false cannot run in sleap-nn either", p);
    if (u->convs_per_block < 2)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: UNet convs_per_block %d: sleap-nn's middle block needs >= 2", p,
                            u->convs_per_block);
    if (u->stacks != 1)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: UNet stacks %d: only 1 is supported", p,
                            u->stacks);
    if (u->kernel_size < 1 || u->kernel_size > 15 || u->filters < 1 || u->filters > 65536 ||
        !(u->filters_rate > 0.0) || u->filters_rate > 16.0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: UNet kernel_size %d, filters %d, filters_rate %g are out of range",
                            p, u->kernel_size, u->filters, u->filters_rate);
    if (u->in_channels < 1 || u->in_channels > 4)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: UNet in_channels %d (expected 1 or 3)", p,
                            u->in_channels);
    int d = ilog2_exact(u->max_stride);
    if (d < 1 || d > 10)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: UNet max_stride %d is not a power of 2 in [2, 1024]",
                            p, u->max_stride);
    *out_d = d;
    return SLEAPC_OK;
}

static sleapc_status build(builder *bd)
{
    const sleapc_model_config *cfg = bd->cfg;
    const sleapc_unet_config *u = &cfg->unet;
    const char *p = cfg->source_path ? cfg->source_path : "config";
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    int n_heads = sleapc__heads_for_config(cfg, heads);
    if (n_heads == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: unknown model type", p);

    /* sleap-nn's check_output_strides: the backbone's output stride is the
     * smallest head stride, and max_stride is at least the largest. */
    sleapc_unet_config uc = *u;
    int min_stride = 0, max_head_stride = 0;
    for (int i = 0; i < n_heads; i++) {
        if (heads[i].stride == 0)
            continue;
        if (heads[i].channels < 1)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: head %s has no channels", p, heads[i].name);
        if (ilog2_exact(heads[i].stride) < 0)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: head %s output_stride %d is not a power of 2",
                                p, heads[i].name, heads[i].stride);
        if (!min_stride || heads[i].stride < min_stride)
            min_stride = heads[i].stride;
        if (heads[i].stride > max_head_stride)
            max_head_stride = heads[i].stride;
    }
    if (max_head_stride > uc.max_stride)
        uc.max_stride = max_head_stride;
    if (min_stride)
        uc.output_stride = min_stride;
    int D = 0;
    sleapc_status st = check_unet(bd, &uc, &D);
    if (st)
        return st;
    int U = ilog2_exact(uc.max_stride / uc.output_stride);
    if (uc.output_stride > uc.max_stride || U < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: output_stride %d does not divide max_stride %d",
                            p, uc.output_stride, uc.max_stride);

    sleapc_graph *g = bd->g;
    g->in_channels = uc.in_channels;
    g->max_stride = uc.max_stride;
    int x = 0;
    st = add_simple(bd, SLEAPC_OP_INPUT, "input", 0, NULL, &x);
    if (st)
        return st;

    char prefix[KEY_CAP], name[KEY_CAP];
    int k = uc.kernel_size;
    int skips[16];
    int c = uc.in_channels;
    /* Encoder: block b pools first (b > 0), then convs_per_block conv+ReLU. */
    for (int b = 0; b < D; b++) {
        if (b > 0) {
            snprintf(name, sizeof name, "stack0_enc%d_pool", b);
            st = add_simple(bd, SLEAPC_OP_MAXPOOL2D, name, 1, &x, &x);
            if (st)
                return st;
        }
        int f = level_width(&uc, b);
        for (int i = 0; i < uc.convs_per_block; i++) {
            snprintf(name, sizeof name, "stack0_enc%d_conv%d", b, i);
            snprintf(prefix, sizeof prefix, "model.backbone.encoders.0.encoder_stack.%d.blocks.%s", b, name);
            st = add_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, f, k, SLEAPC_ACT_RELU, &x);
            if (st)
                return st;
            c = f;
        }
        skips[b] = x;
    }
    snprintf(name, sizeof name, "stack0_enc%d_last_pool", D);
    st = add_simple(bd, SLEAPC_OP_MAXPOOL2D, name, 1, &x, &x);
    if (st)
        return st;

    /* Middle block: expand (convs_per_block - 1 convs) then one contract conv. */
    int f_d = level_width(&uc, D);
    for (int i = 0; i < uc.convs_per_block - 1; i++) {
        snprintf(name, sizeof name, "stack0_enc%d_middle_expand_conv%d", D + 1, i);
        snprintf(prefix, sizeof prefix, "model.backbone.middle_blocks.0.blocks.%s", name);
        st = add_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, f_d, k, SLEAPC_ACT_RELU, &x);
        if (st)
            return st;
        c = f_d;
    }
    snprintf(name, sizeof name, "stack0_enc%d_middle_contract_conv0", D + 2);
    snprintf(prefix, sizeof prefix, "model.backbone.middle_blocks.1.blocks.%s", name);
    st = add_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, f_d, k, SLEAPC_ACT_RELU, &x);
    if (st)
        return st;
    int middle = x;

    /* Decoder: upsample, concat [skip, up], refine convs. */
    int feat_node[16], feat_stride[16], feat_ch[16], n_feat = 0;
    feat_node[n_feat] = middle;
    feat_stride[n_feat] = uc.max_stride;
    feat_ch[n_feat++] = f_d;
    int cs = uc.max_stride;
    for (int j = 0; j < U; j++) {
        int gj = level_width(&uc, D - 1 - j > 0 ? D - 1 - j : 0);
        char block[64];
        snprintf(block, sizeof block, "stack0_dec%d_s%d_to_s%d", j, cs, cs / 2);
        int up;
        int up_ch;
        if (uc.up_interpolate) {
            snprintf(name, sizeof name, "%s_interp", block);
            st = add_simple(bd, SLEAPC_OP_UPSAMPLE2X, name, 1, &x, &up);
            up_ch = c;
        } else {
            snprintf(name, sizeof name, "%s_trans_conv", block);
            snprintf(prefix, sizeof prefix, "model.backbone.decoders.0.decoder_stack.%d.blocks.%s", j, name);
            st = add_conv(bd, SLEAPC_OP_CONV_TRANSPOSE2D, prefix, name, x, c, gj, 3, SLEAPC_ACT_RELU, &up);
            up_ch = gj;
        }
        if (st)
            return st;
        int in_ch = up_ch;
        if (j < D) {
            int skip = skips[D - 1 - j];
            int ins[2] = {up, skip};
            snprintf(name, sizeof name, "%s_resize", block);
            st = add_simple(bd, SLEAPC_OP_RESIZE_LIKE, name, 2, ins, &up);
            if (st)
                return st;
            /* sleap-nn concatenates the skip FIRST (formats.md A.6). */
            int cat_in[2] = {skip, up};
            snprintf(name, sizeof name, "%s_concat", block);
            st = add_simple(bd, SLEAPC_OP_CONCAT, name, 2, cat_in, &x);
            if (st)
                return st;
            in_ch += level_width(&uc, D - 1 - j);
        } else {
            x = up;
        }
        c = in_ch;
        for (int i = 0; i < uc.convs_per_block; i++) {
            snprintf(name, sizeof name, "%s_refine_conv%d", block, i);
            snprintf(prefix, sizeof prefix, "model.backbone.decoders.0.decoder_stack.%d.blocks.%s", j, name);
            st = add_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, gj, k, SLEAPC_ACT_RELU, &x);
            if (st)
                return st;
            c = gj;
        }
        cs /= 2;
        feat_node[n_feat] = x;
        feat_stride[n_feat] = cs;
        feat_ch[n_feat++] = gj;
    }

    /* Heads (model.py): a 1x1 conv on the feature map of the head's stride;
     * ClassVectorsHead reads the middle output (intermediate_feat). */
    for (int h = 0; h < n_heads; h++) {
        const sleapc_head_spec *hs = &heads[h];
        int out;
        if (hs->stride == 0) {
            if (!cfg->class_vectors_global_pool)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: ClassVectorsHead global_pool: false is not supported", p);
            int n_fc = cfg->class_vectors_fc_layers;
            int units = cfg->class_vectors_fc_units;
            if (n_fc < 0 || n_fc > 64 || units < 1)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: ClassVectorsHead num_fc_layers %d, num_fc_units %d",
                                    p, n_fc, units);
            snprintf(name, sizeof name, "ClassVectorsHead_pool");
            st = add_simple(bd, SLEAPC_OP_GLOBAL_MAXPOOL, name, 1, &middle, &out);
            if (st)
                return st;
            int v_ch = f_d;
            for (int i = 0; i < n_fc; i++) {
                snprintf(name, sizeof name, "pre_classification%d_fc", i);
                snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s", h, name);
                st = add_linear(bd, prefix, name, out, v_ch, units, SLEAPC_ACT_RELU, &out);
                if (st)
                    return st;
                v_ch = units;
            }
            snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s", h, hs->name);
            st = add_linear(bd, prefix, hs->name, out, v_ch, hs->channels, SLEAPC_ACT_SOFTMAX, &out);
        } else {
            int fi = -1;
            for (int i = 0; i < n_feat && fi < 0; i++)
                if (feat_stride[i] == hs->stride)
                    fi = i;
            if (fi < 0)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: no decoder output at stride %d for %s",
                                    p, hs->stride, hs->name);
            snprintf(prefix, sizeof prefix, "model.head_layers.%d.%s.0", h, hs->name);
            st = add_conv(bd, SLEAPC_OP_CONV2D, prefix, hs->name, feat_node[fi], feat_ch[fi],
                          hs->channels, 1, hs->act, &out);
        }
        if (st)
            return st;
        st = sleapc__graph_add_output(g, hs->name, out, hs->stride);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__build_unet(const sleapc_model_config *cfg, const sleapc_weights *w,
                                 const char *weights_path, bool strict, bool keras_placement,
                                 sleapc_graph *g)
{
    builder bd = {.cfg = cfg, .w = w, .path = weights_path, .g = g,
                  .keras_placement = keras_placement};
    memset(g, 0, sizeof *g);
    bd.used = sleapc__calloc((size_t)(w->n > 0 ? w->n : 1), sizeof *bd.used);
    if (!bd.used)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "build model: out of memory");
    sleapc_status st = build(&bd);
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
