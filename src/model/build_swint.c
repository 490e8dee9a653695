/* sleap-nn's SwinT backbone (architectures/swint.py over torchvision's
 * Swin-v1 layers, architectures.md §5) and its heads in the graph IR, every
 * checkpoint tensor looked up by name and shape-checked. */
#include <stdio.h>

#include "core/error.h"
#include "model/build_impl.h"

#define ENC "model.backbone.enc.features"
#define LN_EPS 1e-5f /* nn.LayerNorm's default, what SwinTransformerEncoder uses */

/* The int64 relative_position_index buffer must be torchvision's own
 * (coordinates dy, dx of query minus key, row-major in the window); the
 * attention kernel recomputes it. */
static sleapc_status check_index(sleapc_builder *bd, const char *prefix, int ws)
{
    char key[SLEAPC_KEY_CAP];
    int n = ws * ws;
    int64_t shape[1] = {(int64_t)n * n};
    const float *idx;
    snprintf(key, sizeof key, "%s.relative_position_index", prefix);
    sleapc_status st = sleapc__bld_bind(bd, key, 1, shape, &idx);
    if (st)
        return st;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int want = (i / ws - j / ws + ws - 1) * (2 * ws - 1) + (i % ws - j % ws + ws - 1);
            if (idx[i * n + j] != (float)want)
                return sleapc__fail(SLEAPC_ERR_FORMAT,
                                    "%s: tensor \"%s\" is not the relative position index of a "
                                    "%dx%d window (entry %d is %g, expected %d)",
                                    bd->path, key, ws, ws, i * n + j, (double)idx[i * n + j], want);
        }
    return SLEAPC_OK;
}

/* SwinTransformerBlock: x + proj(attn(qkv(norm1(x)))), then
 * x + mlp(norm2(x)); stochastic depth is the identity. */
static sleapc_status swin_block(sleapc_builder *bd, int feature, int b, int c, int heads, int ws,
                                int *x)
{
    char prefix[SLEAPC_KEY_CAP], pre[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP],
        key[SLEAPC_KEY_CAP];
    int y;
    snprintf(pre, sizeof pre, ENC ".%d.%d", feature, b);
    snprintf(prefix, sizeof prefix, "%s.norm1", pre);
    snprintf(name, sizeof name, "features%d_%d_norm1", feature, b);
    sleapc_status st = sleapc__bld_layernorm(bd, prefix, name, *x, c, LN_EPS, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, "%s.attn.qkv", pre);
    snprintf(name, sizeof name, "features%d_%d_qkv", feature, b);
    st = sleapc__bld_pointwise(bd, prefix, name, y, c, 3 * c, SLEAPC_ACT_NONE, true, &y);
    if (st)
        return st;
    sleapc_node at = {.op = SLEAPC_OP_WINDOW_ATTENTION, .n_inputs = 1, .inputs = {y}, .c_in = c,
                      .c_out = c, .kernel = ws, .heads = heads, .shift = b % 2 ? ws / 2 : 0,
                      .bias = bd->g->nodes[y].bias};
    snprintf(at.name, sizeof at.name, "features%d_%d_attention", feature, b);
    int64_t tshape[2] = {(int64_t)(2 * ws - 1) * (2 * ws - 1), heads};
    snprintf(prefix, sizeof prefix, "%s.attn", pre);
    snprintf(key, sizeof key, "%s.relative_position_bias_table", prefix);
    st = sleapc__bld_bind(bd, key, 2, tshape, &at.weight);
    if (!st)
        st = check_index(bd, prefix, ws);
    if (!st)
        st = sleapc__graph_add(bd->g, &at, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, "%s.attn.proj", pre);
    snprintf(name, sizeof name, "features%d_%d_proj", feature, b);
    st = sleapc__bld_pointwise(bd, prefix, name, y, c, c, SLEAPC_ACT_NONE, true, &y);
    if (st)
        return st;
    int ins[2] = {*x, y};
    snprintf(name, sizeof name, "features%d_%d_residual1", feature, b);
    st = sleapc__bld_simple(bd, SLEAPC_OP_SCALE_ADD, name, 2, ins, x);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, "%s.norm2", pre);
    snprintf(name, sizeof name, "features%d_%d_norm2", feature, b);
    st = sleapc__bld_layernorm(bd, prefix, name, *x, c, LN_EPS, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, "%s.mlp.0", pre);
    snprintf(name, sizeof name, "features%d_%d_fc1", feature, b);
    st = sleapc__bld_pointwise(bd, prefix, name, y, c, 4 * c, SLEAPC_ACT_GELU, true, &y);
    if (st)
        return st;
    snprintf(prefix, sizeof prefix, "%s.mlp.3", pre);
    snprintf(name, sizeof name, "features%d_%d_fc2", feature, b);
    st = sleapc__bld_pointwise(bd, prefix, name, y, 4 * c, c, SLEAPC_ACT_NONE, true, &y);
    if (st)
        return st;
    ins[0] = *x;
    ins[1] = y;
    snprintf(name, sizeof name, "features%d_%d_residual2", feature, b);
    return sleapc__bld_simple(bd, SLEAPC_OP_SCALE_ADD, name, 2, ins, x);
}

static sleapc_status build(sleapc_builder *bd)
{
    const sleapc_vit_config *v = &bd->cfg->vit;
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    int n_heads = 0, x = 0;
    /* features.0: Conv2d(patch_size, stem stride, padding 1), LayerNorm. */
    sleapc_status st = sleapc__bld_vit_stem(bd, ENC, ENC ".0.2", LN_EPS, heads, &n_heads, &x);
    if (st)
        return st;
    char prefix[SLEAPC_KEY_CAP], name[SLEAPC_KEY_CAP];
    const int *ch = v->channels;
    int feats[SLEAPC_VIT_STAGES];
    feats[0] = x;
    for (int s = 0; s < SLEAPC_VIT_STAGES; s++) {
        for (int b = 0; b < v->depths[s]; b++) {
            st = swin_block(bd, 2 * s + 1, b, ch[s], v->num_heads[s], v->window_size, &x);
            if (st)
                return st;
        }
        if (s + 1 == SLEAPC_VIT_STAGES)
            break;
        /* PatchMerging: 2x2 neighbours to channels, LayerNorm(4C), Linear(4C, 2C). */
        sleapc_node pm = {.op = SLEAPC_OP_PATCHES, .n_inputs = 1, .inputs = {x}, .kernel = 2,
                          .stride = 2, .patch_merge = true};
        snprintf(pm.name, sizeof pm.name, "features%d_merge", 2 * s + 2);
        st = sleapc__graph_add(bd->g, &pm, &x);
        if (st)
            return st;
        snprintf(prefix, sizeof prefix, ENC ".%d.norm", 2 * s + 2);
        snprintf(name, sizeof name, "features%d_norm", 2 * s + 2);
        st = sleapc__bld_layernorm(bd, prefix, name, x, 4 * ch[s], LN_EPS, &x);
        if (st)
            return st;
        snprintf(prefix, sizeof prefix, ENC ".%d.reduction", 2 * s + 2);
        snprintf(name, sizeof name, "features%d_reduction", 2 * s + 2);
        st = sleapc__bld_pointwise(bd, prefix, name, x, 4 * ch[s], ch[s + 1], SLEAPC_ACT_NONE,
                                   false, &x);
        if (st)
            return st;
        feats[s + 1] = x;
    }
    st = sleapc__bld_layernorm(bd, "model.backbone.enc.norm", "enc_norm", x,
                               ch[SLEAPC_VIT_STAGES - 1], LN_EPS, &x);
    if (st)
        return st;
    int skips[SLEAPC_VIT_STAGES], skip_ch[SLEAPC_VIT_STAGES];
    for (int j = 0; j < SLEAPC_VIT_STAGES; j++) {
        skips[j] = feats[SLEAPC_VIT_STAGES - 1 - j];
        skip_ch[j] = ch[SLEAPC_VIT_STAGES - 1 - j];
    }
    return sleapc__bld_vit_tail(bd, v, x, ch[SLEAPC_VIT_STAGES - 1], skips, skip_ch, ch[0], heads,
                                n_heads);
}

sleapc_status sleapc__build_swint(const sleapc_model_config *cfg, const sleapc_weights *w,
                                  const char *weights_path, bool strict, sleapc_graph *g)
{
    return sleapc__bld_run(cfg, w, weights_path, strict, false, g, build);
}
