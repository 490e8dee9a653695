/* sleap-nn's ConvNeXt backbone (architectures/convnext.py over torchvision's
 * ConvNeXt layers, architectures.md §4) and its heads in the graph IR, every
 * checkpoint tensor looked up by name and shape-checked. */
#include <stdio.h>

#include "core/error.h"
#include "model/build_impl.h"

#define ENC "model.backbone.enc.features"
#define LN_EPS 1e-6f /* LayerNorm2d and CNBlock's LayerNorm */

/* torchvision CNBlock: dw 7x7 -> LayerNorm -> Linear(C, 4C) -> GELU ->
 * Linear(4C, C) -> * layer_scale -> + input (stochastic depth: identity). */
static sleapc_status cn_block(sleapc_builder *bd, int feature, int b, int c, int *x)
{
    char prefix[SLEAPC_KEY_CAP], key[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP];
    int y;
    snprintf(prefix, sizeof prefix, ENC ".%d.%d.block.0", feature, b);
    snprintf(name, sizeof name, "features%d_%d_dwconv", feature, b);
    sleapc_node dw = {.op = SLEAPC_OP_DWCONV, .n_inputs = 1, .inputs = {*x}, .c_in = c,
                      .c_out = c, .kernel = 7};
    snprintf(dw.name, sizeof dw.name, "%s", name);
    int64_t wshape[4] = {c, 1, 7, 7}, bshape[1] = {c}, lshape[3] = {c, 1, 1};
    snprintf(key, sizeof key, "%s.weight", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 4, wshape, &dw.weight);
    if (!st) {
        snprintf(key, sizeof key, "%s.bias", prefix);
        st = sleapc__bld_bind(bd, key, 1, bshape, &dw.bias);
    }
    if (!st)
        st = sleapc__graph_add(bd->g, &dw, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, ENC ".%d.%d.block.2", feature, b);
    snprintf(name, sizeof name, "features%d_%d_norm", feature, b);
    st = sleapc__bld_layernorm(bd, prefix, name, y, c, LN_EPS, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, ENC ".%d.%d.block.3", feature, b);
    snprintf(name, sizeof name, "features%d_%d_fc1", feature, b);
    st = sleapc__bld_pointwise(bd, prefix, name, y, c, 4 * c, SLEAPC_ACT_GELU, true, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, ENC ".%d.%d.block.5", feature, b);
    snprintf(name, sizeof name, "features%d_%d_fc2", feature, b);
    st = sleapc__bld_pointwise(bd, prefix, name, y, 4 * c, c, SLEAPC_ACT_NONE, true, &y);
    if (st)
        return st;
    sleapc_node add = {.op = SLEAPC_OP_SCALE_ADD, .n_inputs = 2, .inputs = {*x, y}, .c_in = c,
                       .c_out = c};
    snprintf(add.name, sizeof add.name, "features%d_%d_residual", feature, b);
    snprintf(key, sizeof key, ENC ".%d.%d.layer_scale", feature, b);
    st = sleapc__bld_bind(bd, key, 3, lshape, &add.weight);
    return st ? st : sleapc__graph_add(bd->g, &add, x);
}

static sleapc_status build(sleapc_builder *bd)
{
    const sleapc_vit_config *v = &bd->cfg->vit;
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    int n_heads = 0, x = 0;
    /* features.0: Conv2d(k, stride, padding 1) + LayerNorm2d. */
    sleapc_status st = sleapc__bld_vit_stem(bd, ENC, ENC ".0.1", LN_EPS, heads, &n_heads, &x);
    if (st)
        return st;
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP];
    const int *ch = v->channels;
    int feats[SLEAPC_VIT_STAGES];
    feats[0] = x;
    for (int s = 0; s < SLEAPC_VIT_STAGES; s++) {
        for (int b = 0; b < v->depths[s]; b++) {
            st = cn_block(bd, 2 * s + 1, b, ch[s], &x);
            if (st)
                return st;
        }
        if (s + 1 == SLEAPC_VIT_STAGES)
            break;
        /* features.2s+2: LayerNorm2d + Conv2d(k 2, stride 2). */
        snprintf(prefix, sizeof prefix, ENC ".%d.0", 2 * s + 2);
        snprintf(name, sizeof name, "features%d_norm", 2 * s + 2);
        st = sleapc__bld_layernorm(bd, prefix, name, x, ch[s], LN_EPS, &x);
        if (st)
            return st;
        snprintf(prefix, sizeof prefix, ENC ".%d.1", 2 * s + 2);
        snprintf(name, sizeof name, "features%d_downsample", 2 * s + 2);
        st = sleapc__bld_patch_conv(bd, prefix, name, x, ch[s], ch[s + 1], 2, 2, 0, true, &x);
        if (st)
            return st;
        feats[s + 1] = x;
    }
    /* Skips: features[0], [2], [4], [6] outputs, deepest first. */
    int skips[SLEAPC_VIT_STAGES], skip_ch[SLEAPC_VIT_STAGES];
    for (int j = 0; j < SLEAPC_VIT_STAGES; j++) {
        skips[j] = feats[SLEAPC_VIT_STAGES - 1 - j];
        skip_ch[j] = ch[SLEAPC_VIT_STAGES - 1 - j];
    }
    return sleapc__bld_vit_tail(bd, v, x, ch[SLEAPC_VIT_STAGES - 1], skips, skip_ch, ch[0], heads,
                                n_heads);
}

sleapc_status sleapc__build_convnext(const sleapc_model_config *cfg, const sleapc_weights *w,
                                     const char *weights_path, bool strict, sleapc_graph *g)
{
    return sleapc__bld_run(cfg, w, weights_path, strict, false, g, build);
}
