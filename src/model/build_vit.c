/* Builder pieces of sleap-nn's ConvNeXt and SwinT wrappers
 * (architectures/convnext.py, swint.py): strided convs, LayerNorms and
 * Linear layers in the graph IR, and the part after the encoder that both
 * share (max pool, middle block, decoder, heads). */
#include <math.h>
#include <stdio.h>

#include "core/error.h"
#include "model/build_impl.h"

sleapc_status sleapc__bld_patch_conv(sleapc_builder *bd, const char *prefix, const char *name,
                                     int src, int c_in, int c_out, int k, int stride, int pad,
                                     bool has_bias, int *out)
{
    char key[SLEAPC_KEY_CAP], pname[SLEAPC_KEY_CAP];
    int64_t wshape[4] = {c_out, c_in, k, k}, bshape[1] = {c_out};
    sleapc_node n = {.op = SLEAPC_OP_CONV2D, .n_inputs = 1, .c_in = c_in * k * k,
                     .c_out = c_out, .kernel = 1};
    snprintf(n.name, sizeof n.name, "%s", name);
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 4, wshape, &n.weight);
    if (!st && has_bias) {
        snprintf(key, sizeof key, "%s.bias", prefix);
        st = sleapc__bld_bind(bd, key, 1, bshape, &n.bias);
    }
    if (st)
        return st;
    /* (c_out, c_in, k, k) is the (c_out, c_in*k*k) matrix of a 1x1 conv
     * over the patches, whose channels are ordered (c, ky, kx). */
    sleapc_node pn = {.op = SLEAPC_OP_PATCHES, .n_inputs = 1, .inputs = {src}, .kernel = k,
                      .stride = stride, .pad = pad};
    snprintf(pname, sizeof pname, "%s_patches", name);
    snprintf(pn.name, sizeof pn.name, "%s", pname);
    st = sleapc__graph_add(bd->g, &pn, &n.inputs[0]);
    if (st)
        return st;
    return sleapc__graph_add(bd->g, &n, out);
}

sleapc_status sleapc__bld_layernorm(sleapc_builder *bd, const char *prefix, const char *name,
                                    int src, int c, float eps, int *out)
{
    char key[SLEAPC_KEY_CAP];
    int64_t shape[1] = {c};
    sleapc_node n = {.op = SLEAPC_OP_LAYERNORM, .n_inputs = 1, .inputs = {src}, .c_in = c,
                     .c_out = c, .eps = eps};
    snprintf(n.name, sizeof n.name, "%s", name);
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 1, shape, &n.weight);
    if (!st) {
        snprintf(key, sizeof key, "%s.bias", prefix);
        st = sleapc__bld_bind(bd, key, 1, shape, &n.bias);
    }
    return st ? st : sleapc__graph_add(bd->g, &n, out);
}

sleapc_status sleapc__bld_pointwise(sleapc_builder *bd, const char *prefix, const char *name,
                                    int src, int c_in, int c_out, sleapc_act act, bool has_bias,
                                    int *out)
{
    char key[SLEAPC_KEY_CAP];
    int64_t wshape[2] = {c_out, c_in}, bshape[1] = {c_out};
    sleapc_node n = {.op = SLEAPC_OP_CONV2D, .n_inputs = 1, .inputs = {src}, .c_in = c_in,
                     .c_out = c_out, .kernel = 1, .act = act};
    snprintf(n.name, sizeof n.name, "%s", name);
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 2, wshape, &n.weight);
    if (!st && has_bias) {
        snprintf(key, sizeof key, "%s.bias", prefix);
        st = sleapc__bld_bind(bd, key, 1, bshape, &n.bias);
    }
    return st ? st : sleapc__graph_add(bd->g, &n, out);
}

sleapc_status sleapc__bld_vit_stem(sleapc_builder *bd, const char *enc, const char *ln_key,
                                   float ln_eps, sleapc_head_spec *heads, int *n_heads, int *x)
{
    const sleapc_vit_config *v = &bd->cfg->vit;
    sleapc_status st = sleapc__bld_heads(bd, heads, n_heads);
    if (st)
        return st;
    bd->g->in_channels = v->in_channels;
    bd->g->max_stride = v->max_stride;
    st = sleapc__bld_simple(bd, SLEAPC_OP_INPUT, "input", 0, NULL, x);
    if (st)
        return st;
    char key[SLEAPC_KEY_CAP];
    snprintf(key, sizeof key, "%s.0.0", enc);
    st = sleapc__bld_patch_conv(bd, key, "features0_stem", *x, v->in_channels, v->channels[0],
                                v->stem_patch_kernel, v->stem_patch_stride, 1, true, x);
    return st ? st : sleapc__bld_layernorm(bd, ln_key, "features0_norm", *x, v->channels[0],
                                           ln_eps, x);
}

sleapc_status sleapc__bld_vit_tail(sleapc_builder *bd, const sleapc_vit_config *v, int x, int c,
                                   const int *skips, const int *skip_ch, int filters,
                                   const sleapc_head_spec *heads, int n_heads)
{
    const char *p = bd->cfg->source_path ? bd->cfg->source_path : "config";
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP];
    double rate = v->filters_rate;
    int S = v->stem_patch_stride, net_stride = S * 16;
    sleapc_status st = sleapc__bld_simple(bd, SLEAPC_OP_MAXPOOL2D, "additional_pool", 1, &x, &x);
    if (st)
        return st;
    /* Middle: convs_per_block - 1 expand convs, then one contract conv whose
     * declared input is int(C * filters_rate) whatever came before. */
    int last = c, m = 0;
    int expand = (int)((double)last * rate);
    for (int i = 0; i < v->convs_per_block - 1; i++, m = 1) {
        snprintf(name, sizeof name, "convnext_middle_expand_conv%d", i);
        snprintf(prefix, sizeof prefix, "model.backbone.middle_blocks.0.blocks.%s", name);
        st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, expand, v->kernel_size,
                              SLEAPC_ACT_RELU, true, &x);
        if (st)
            return st;
        c = expand;
    }
    if (c != expand)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: convs_per_block %d with filters_rate %g: sleap-nn's middle "
                            "block cannot run it either (%d channels into a %d-channel conv)",
                            p, v->convs_per_block, rate, c, expand);
    int block_filters = v->block_contraction ? last : expand;
    snprintf(name, sizeof name, "convnext_middle_contract_conv0");
    snprintf(prefix, sizeof prefix, "model.backbone.middle_blocks.%d.blocks.%s", m, name);
    st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, block_filters,
                          v->kernel_size, SLEAPC_ACT_RELU, true, &x);
    if (st)
        return st;
    int middle = x;

    /* Decoder(stem_blocks=1, down_blocks=3): up_blocks = log2(16 S / os);
     * none for an embedding model (model.py's spatial_heads=False). */
    int U = sleapc__ilog2_exact(net_stride / v->output_stride);
    if (bd->cfg->model_type == SLEAPC_MODEL_TYPE_EMBEDDING)
        U = 0;
    if (U < 0 || U > SLEAPC_DECODER_MAX || net_stride % v->output_stride)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: output_stride %d does not divide the "
                            "network's stride %d", p, v->output_stride, net_stride);
    sleapc_decoder dec = {.key_fmt = "model.backbone.dec.decoder_stack.%d.blocks.%s",
                          .block_fmt = "dec%d_s%d_to_s%d", .n_blocks = U,
                          .kernel = v->kernel_size, .up_interpolate = v->up_interpolate};
    for (int j = 0; j < U; j++) {
        double e = v->block_contraction ? 2.0 - j : (3 - j > 0 ? 3.0 - j : 0.0);
        dec.width[j] = (int)((double)filters * pow(rate, e));
        if (dec.width[j] < 1)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: decoder block %d has no channels", p, j);
        dec.skip[j] = j < SLEAPC_VIT_STAGES ? skips[j] : -1;
        dec.skip_ch[j] = j < SLEAPC_VIT_STAGES ? skip_ch[j] : 0;
        dec.refine[j] = j < SLEAPC_VIT_STAGES ? v->convs_per_block : 1;
    }
    st = sleapc__bld_decoder(bd, &dec, middle, block_filters, net_stride);
    if (!st)
        st = sleapc__bld_add_heads(bd, &dec, heads, n_heads, middle, block_filters);
    return st;
}
