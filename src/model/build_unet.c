/* sleap-nn's UNet (architectures/unet.py, encoder_decoder.py) and its heads
 * (heads.py, model.py) lowered to the graph IR, with every checkpoint tensor
 * looked up by name and shape-checked (architectures.md §3.7). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/build_impl.h"

#define KEY_CAP SLEAPC_KEY_CAP
#define ilog2_exact sleapc__ilog2_exact

/* F_b = int(filters * filters_rate ** b): Python float power, then truncation. */
static int level_width(const sleapc_unet_config *u, int b)
{
    return (int)((double)u->filters * pow(u->filters_rate, (double)b));
}

/* Checks of the UNet options sleapc (and sleap-nn) can run. */
static sleapc_status check_unet(const sleapc_builder *bd, const sleapc_unet_config *u, int *out_d)
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

static sleapc_status build(sleapc_builder *bd)
{
    const sleapc_model_config *cfg = bd->cfg;
    const sleapc_unet_config *u = &cfg->unet;
    const char *p = cfg->source_path ? cfg->source_path : "config";
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    int n_heads = 0;
    sleapc_status st = sleapc__bld_heads(bd, heads, &n_heads);
    if (st)
        return st;

    /* sleap-nn's check_output_strides: the backbone's output stride is the
     * smallest head stride, and max_stride is at least the largest. */
    sleapc_unet_config uc = *u;
    int min_stride = 0, max_head_stride = 0;
    for (int i = 0; i < n_heads; i++) {
        if (heads[i].stride == 0)
            continue;
        if (!min_stride || heads[i].stride < min_stride)
            min_stride = heads[i].stride;
        if (heads[i].stride > max_head_stride)
            max_head_stride = heads[i].stride;
    }
    if (max_head_stride > uc.max_stride)
        uc.max_stride = max_head_stride;
    if (min_stride)
        uc.output_stride = min_stride;
    else /* vector heads only (embedding): model.py's spatial_heads=False, no decoder */
        uc.output_stride = uc.max_stride;
    int D = 0;
    st = check_unet(bd, &uc, &D);
    if (st)
        return st;
    int U = ilog2_exact(uc.max_stride / uc.output_stride);
    if (uc.output_stride > uc.max_stride || U < 0 || U > SLEAPC_DECODER_MAX)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: output_stride %d does not divide max_stride %d",
                            p, uc.output_stride, uc.max_stride);

    sleapc_graph *g = bd->g;
    g->in_channels = uc.in_channels;
    g->max_stride = uc.max_stride;
    int x = 0;
    st = sleapc__bld_simple(bd, SLEAPC_OP_INPUT, "input", 0, NULL, &x);
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
            st = sleapc__bld_simple(bd, SLEAPC_OP_MAXPOOL2D, name, 1, &x, &x);
            if (st)
                return st;
        }
        int f = level_width(&uc, b);
        for (int i = 0; i < uc.convs_per_block; i++) {
            snprintf(name, sizeof name, "stack0_enc%d_conv%d", b, i);
            snprintf(prefix, sizeof prefix, "model.backbone.encoders.0.encoder_stack.%d.blocks.%s", b, name);
            st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, f, k, SLEAPC_ACT_RELU,
                                  true, &x);
            if (st)
                return st;
            c = f;
        }
        skips[b] = x;
    }
    snprintf(name, sizeof name, "stack0_enc%d_last_pool", D);
    st = sleapc__bld_simple(bd, SLEAPC_OP_MAXPOOL2D, name, 1, &x, &x);
    if (st)
        return st;

    /* Middle block: expand (convs_per_block - 1 convs) then one contract conv. */
    int f_d = level_width(&uc, D);
    for (int i = 0; i < uc.convs_per_block - 1; i++) {
        snprintf(name, sizeof name, "stack0_enc%d_middle_expand_conv%d", D + 1, i);
        snprintf(prefix, sizeof prefix, "model.backbone.middle_blocks.0.blocks.%s", name);
        st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, f_d, k, SLEAPC_ACT_RELU,
                              true, &x);
        if (st)
            return st;
        c = f_d;
    }
    snprintf(name, sizeof name, "stack0_enc%d_middle_contract_conv0", D + 2);
    snprintf(prefix, sizeof prefix, "model.backbone.middle_blocks.1.blocks.%s", name);
    st = sleapc__bld_conv(bd, SLEAPC_OP_CONV2D, prefix, name, x, c, f_d, k, SLEAPC_ACT_RELU, true,
                          &x);
    if (st)
        return st;
    int middle = x;

    /* Decoder: upsample, concat [skip, up], refine convs. */
    sleapc_decoder dec = {.key_fmt = "model.backbone.decoders.0.decoder_stack.%d.blocks.%s",
                          .block_fmt = "stack0_dec%d_s%d_to_s%d", .n_blocks = U, .kernel = k,
                          .up_interpolate = uc.up_interpolate};
    for (int j = 0; j < U; j++) {
        dec.width[j] = level_width(&uc, D - 1 - j > 0 ? D - 1 - j : 0);
        dec.skip[j] = j < D ? skips[D - 1 - j] : -1;
        dec.skip_ch[j] = j < D ? level_width(&uc, D - 1 - j) : 0;
        dec.refine[j] = uc.convs_per_block;
    }
    st = sleapc__bld_decoder(bd, &dec, middle, f_d, uc.max_stride);
    if (!st)
        st = sleapc__bld_add_heads(bd, &dec, heads, n_heads, middle, f_d);
    return st;
}

sleapc_status sleapc__build_unet(const sleapc_model_config *cfg, const sleapc_weights *w,
                                 const char *weights_path, bool strict, bool keras_placement,
                                 sleapc_graph *g)
{
    return sleapc__bld_run(cfg, w, weights_path, strict, keras_placement, g, build);
}
