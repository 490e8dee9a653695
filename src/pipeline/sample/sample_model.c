/* The sample's model: a sleap-nn single-instance UNet (filters 4,
 * filters_rate 1, max_stride 2, bilinear decoder, 3 RGB input channels)
 * whose weights pass colour channel k straight through to confidence map k.
 * The encoder's first block copies its input (identity 3x3 kernels, ReLU
 * keeps non-negative pixels), the middle block is zero, the decoder's refine
 * convs copy the skip channels, and the 1x1 head picks channels 0..2. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ckpt/ckpt.h"
#include "pipeline/sample/sample_internal.h"

#define F 4  /* every level's width: filters 4, filters_rate 1 */

/* A conv weight (out, in, k, k) with identity on the first n_copy channels. */
static sleapc_status add_conv(sleapc_weights *w, const char *prefix, int c_out, int c_in, int k,
                              int n_copy)
{
    char name[256];
    int64_t wshape[4] = {c_out, c_in, k, k}, bshape[1] = {c_out};
    float *wt = sleapc__aligned_alloc((size_t)(c_out * c_in * k * k) * sizeof(float));
    float *b = sleapc__aligned_alloc((size_t)c_out * sizeof(float));
    if (!wt || !b) {
        sleapc__aligned_free(wt);
        sleapc__aligned_free(b);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "sample model: out of memory");
    }
    memset(wt, 0, (size_t)(c_out * c_in * k * k) * sizeof(float));
    memset(b, 0, (size_t)c_out * sizeof(float));
    for (int c = 0; c < n_copy && c < c_out && c < c_in; c++)
        wt[((c * c_in + c) * k + k / 2) * k + k / 2] = 1.0f;
    snprintf(name, sizeof name, "%s.weight", prefix);
    sleapc_status st = sleapc__weights_add(w, name, 4, wshape, wt);
    snprintf(name, sizeof name, "%s.bias", prefix);
    if (!st)
        st = sleapc__weights_add(w, name, 1, bshape, b);
    else
        sleapc__aligned_free(b);
    return st;
}

static const char *const CONFIG_YAML =
    "data_config:\n"
    "  preprocessing:\n"
    "    ensure_rgb: false\n"
    "    ensure_grayscale: false\n"
    "    max_height: null\n"
    "    max_width: null\n"
    "    scale: 1.0\n"
    "    crop_size: null\n"
    "  skeletons:\n"
    "  - name: sample-animal\n"
    "    nodes:\n"
    "    - name: head\n"
    "    - name: thorax\n"
    "    - name: tail\n"
    "    edges:\n"
    "    - source:\n"
    "        name: head\n"
    "      destination:\n"
    "        name: thorax\n"
    "    - source:\n"
    "        name: thorax\n"
    "      destination:\n"
    "        name: tail\n"
    "    symmetries: []\n"
    "model_config:\n"
    "  backbone_config:\n"
    "    unet:\n"
    "      in_channels: 3\n"
    "      kernel_size: 3\n"
    "      filters: 4\n"
    "      filters_rate: 1.0\n"
    "      max_stride: 2\n"
    "      stem_stride: null\n"
    "      middle_block: true\n"
    "      up_interpolate: true\n"
    "      stacks: 1\n"
    "      convs_per_block: 2\n"
    "      output_stride: 1\n"
    "    convnext: null\n"
    "    swint: null\n"
    "  head_configs:\n"
    "    single_instance:\n"
    "      confmaps:\n"
    "        part_names:\n"
    "        - head\n"
    "        - thorax\n"
    "        - tail\n"
    "        sigma: 2.0\n"
    "        output_stride: 1\n"
    "    centroid: null\n"
    "    centered_instance: null\n"
    "    bottomup: null\n"
    "    multi_class_bottomup: null\n"
    "    multi_class_topdown: null\n"
    "name: sleapc-sample\n"
    "description: synthetic model written by sleapc; its weights are constructed, not trained\n";

sleapc_status sleapc__sample_write_model(const char *model_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/training_config.yaml", model_dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "write %s: cannot create the file", path);
    bool ok = fputs(CONFIG_YAML, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok)
        return sleapc__fail(SLEAPC_ERR_IO, "write %s: write failed", path);

    sleapc_weights w = {0};
    const char *enc = "model.backbone.encoders.0.encoder_stack.0.blocks";
    const char *mid = "model.backbone.middle_blocks";
    const char *dec = "model.backbone.decoders.0.decoder_stack.0.blocks.stack0_dec0_s2_to_s1";
    char p[256];
    snprintf(p, sizeof p, "%s.stack0_enc0_conv0", enc);
    sleapc_status st = add_conv(&w, p, F, 3, 3, 3);
    snprintf(p, sizeof p, "%s.stack0_enc0_conv1", enc);
    if (!st)
        st = add_conv(&w, p, F, F, 3, F);
    snprintf(p, sizeof p, "%s.0.blocks.stack0_enc2_middle_expand_conv0", mid);
    if (!st)
        st = add_conv(&w, p, F, F, 3, 0);
    snprintf(p, sizeof p, "%s.1.blocks.stack0_enc3_middle_contract_conv0", mid);
    if (!st)
        st = add_conv(&w, p, F, F, 3, 0);
    /* Decoder input is [skip (F), upsampled middle (F)]: copy the skip. */
    snprintf(p, sizeof p, "%s_refine_conv0", dec);
    if (!st)
        st = add_conv(&w, p, F, 2 * F, 3, F);
    snprintf(p, sizeof p, "%s_refine_conv1", dec);
    if (!st)
        st = add_conv(&w, p, F, F, 3, F);
    if (!st)
        st = add_conv(&w, "model.head_layers.0.SingleInstanceConfmapsHead.0", 3, F, 1, 3);
    snprintf(path, sizeof path, "%s/best.ckpt", model_dir);
    if (!st)
        st = sleapc__ckpt_write(path, &w, false);
    sleapc__weights_clear(&w);
    return st;
}
