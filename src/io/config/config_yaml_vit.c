/* backbone_config.convnext / backbone_config.swint of a sleap-nn
 * training_config.yaml (config/model_config.py ConvNextConfig, SwinTConfig;
 * architectures/convnext.py, swint.py for how model_type and arch combine). */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/config/config_yaml_tree.h"
#include "io/config/model_config.h"

typedef struct preset {
    const char *name;
    int embed;  /* SwinT */
    int depths[SLEAPC_VIT_STAGES];
    int channels[SLEAPC_VIT_STAGES];  /* ConvNeXt widths, SwinT heads */
} preset;

static const preset convnext_presets[] = {
    {"tiny", 0, {3, 3, 9, 3}, {96, 192, 384, 768}},
    {"small", 0, {3, 3, 27, 3}, {96, 192, 384, 768}},
    {"base", 0, {3, 3, 27, 3}, {128, 256, 512, 1024}},
    {"large", 0, {3, 3, 27, 3}, {192, 384, 768, 1536}},
};

static const preset swint_presets[] = {
    {"tiny", 96, {2, 2, 6, 2}, {3, 6, 12, 24}},
    {"small", 96, {2, 2, 18, 2}, {3, 6, 12, 24}},
    {"base", 128, {2, 2, 18, 2}, {4, 8, 16, 32}},
};

/* Bounds that keep every derived size (widths * filters_rate^4, window^4
 * bias tables) far from int overflow; real models are far inside them. */
#define VIT_MAX_WIDTH 16384
#define VIT_MAX_DEPTH 1024

static sleapc_status read_pos_int(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                  const char *rel, int lo, int hi, bool pow2, int *out)
{
    sleapc_yaml_ref r = *parent;
    sleapc_status st = rel ? sleapc__yaml_get(t, parent, rel, &r) : SLEAPC_OK;
    if (!st)
        st = sleapc__yaml_int(t, &r, NULL, *out, out);
    if (st || sleapc__yaml_is_null(&r))
        return st;
    if (*out < lo || *out > hi)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be in [%d, %d], got %d", lo, hi,
                                 *out);
    if (pow2 && (*out & (*out - 1)) != 0)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be a power of two, got %d", *out);
    return SLEAPC_OK;
}

static sleapc_status read_stage_list(sleapc_yaml_tree *t, const sleapc_yaml_ref *arch,
                                     const char *rel, int hi, int *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_require(t, arch, rel, &r);
    if (st)
        return st;
    if (!sleapc__yaml_is_seq(&r))
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "expected a list");
    if (sleapc__yaml_seq_len(&r) != SLEAPC_VIT_STAGES)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT,
                                 "has %d stages; sleap-nn's encoders have %d",
                                 sleapc__yaml_seq_len(&r), SLEAPC_VIT_STAGES);
    for (int i = 0; i < SLEAPC_VIT_STAGES; i++) {
        sleapc_yaml_ref item = sleapc__yaml_seq_item(t, &r, i);
        if (sleapc__yaml_is_null(&item))
            return sleapc__yaml_fail(t, &item, SLEAPC_ERR_FORMAT, "expected an integer");
        st = read_pos_int(t, &item, NULL, 1, hi, false, &out[i]);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

/* model_type and arch -> depths, widths, heads. */
static sleapc_status read_arch(sleapc_yaml_tree *t, const sleapc_yaml_ref *bb, bool swint,
                               sleapc_vit_config *v)
{
    sleapc_yaml_ref mt, arch;
    const char *name = NULL;
    sleapc_status st = sleapc__yaml_get(t, bb, "model_type", &mt);
    if (!st)
        st = sleapc__yaml_str(t, &mt, NULL, &name);
    if (!st)
        st = sleapc__yaml_get(t, bb, "arch", &arch);
    if (st)
        return st;
    if (!name && !sleapc__yaml_is_null(&mt))
        return sleapc__yaml_fail(t, &mt, SLEAPC_ERR_FORMAT, "expected a name");
    if (!name && sleapc__yaml_is_null(&mt))
        name = "tiny"; /* the dataclass default */
    snprintf(v->model_type, sizeof v->model_type, "%s", name);
    const preset *ps = swint ? swint_presets : convnext_presets;
    int n_ps = swint ? (int)(sizeof swint_presets / sizeof *ps)
                     : (int)(sizeof convnext_presets / sizeof *ps);
    const preset *use = NULL;
    for (int i = 0; i < n_ps && !use; i++)
        if (strcmp(name, ps[i].name) == 0)
            use = &ps[i];
    v->preset = use != NULL;
    if (!use && sleapc__yaml_is_null(&arch))
        use = &ps[0]; /* neither a preset nor an arch: sleap-nn falls back to tiny */
    if (use) {
        memcpy(v->depths, use->depths, sizeof v->depths);
        for (int i = 0; i < SLEAPC_VIT_STAGES; i++) {
            v->channels[i] = swint ? use->embed << i : use->channels[i];
            v->num_heads[i] = swint ? use->channels[i] : 0;
        }
        return SLEAPC_OK;
    }
    if (!sleapc__yaml_is_map(&arch))
        return sleapc__yaml_fail(t, &arch, SLEAPC_ERR_FORMAT, "expected a mapping");
    st = read_stage_list(t, &arch, "depths", VIT_MAX_DEPTH, v->depths);
    if (st)
        return st;
    if (!swint)
        return read_stage_list(t, &arch, "channels", VIT_MAX_WIDTH, v->channels);
    sleapc_yaml_ref embed;
    int e = 0;
    st = sleapc__yaml_require(t, &arch, "embed", &embed);
    if (!st)
        st = read_pos_int(t, &embed, NULL, 1, VIT_MAX_WIDTH >> (SLEAPC_VIT_STAGES - 1), false, &e);
    if (!st)
        st = read_stage_list(t, &arch, "num_heads", VIT_MAX_WIDTH, v->num_heads);
    for (int i = 0; !st && i < SLEAPC_VIT_STAGES; i++) {
        v->channels[i] = e << i;
        if (v->channels[i] % v->num_heads[i] != 0)
            st = sleapc__yaml_fail(t, &arch, SLEAPC_ERR_FORMAT,
                                   "stage %d: %d heads do not divide its width %d (embed * 2^%d)",
                                   i, v->num_heads[i], v->channels[i], i);
    }
    return st;
}

sleapc_status sleapc__config_read_vit(sleapc_yaml_tree *t, const sleapc_yaml_ref *bb, bool swint,
                                      sleapc_vit_config *v)
{
    if (!sleapc__yaml_is_map(bb))
        return sleapc__yaml_fail(t, bb, SLEAPC_ERR_FORMAT, "expected a mapping");
    *v = (sleapc_vit_config){.stem_patch_kernel = 4, .stem_patch_stride = 2, .window_size = 7,
                             .in_channels = 1, .kernel_size = 3, .filters_rate = 2.0,
                             .convs_per_block = 2, .up_interpolate = true, .output_stride = 1,
                             .max_stride = 32};
    sleapc_status st = read_arch(t, bb, swint, v);
    if (!st)
        st = read_pos_int(t, bb, swint ? "patch_size" : "stem_patch_kernel", 1, 64, false,
                          &v->stem_patch_kernel);
    if (!st)
        st = read_pos_int(t, bb, "stem_patch_stride", 1, 64, true, &v->stem_patch_stride);
    if (!st && swint)
        st = read_pos_int(t, bb, "window_size", 1, 64, false, &v->window_size);
    if (!st)
        st = read_pos_int(t, bb, "in_channels", 1, 4, false, &v->in_channels);
    if (!st)
        st = read_pos_int(t, bb, "kernel_size", 1, 15, false, &v->kernel_size);
    if (!st)
        st = read_pos_int(t, bb, "convs_per_block", 1, 64, false, &v->convs_per_block);
    if (!st)
        st = read_pos_int(t, bb, "output_stride", 1, 1024, true, &v->output_stride);
    if (!st)
        st = read_pos_int(t, bb, "max_stride", 1, 1024, true, &v->max_stride);
    if (!st)
        st = sleapc__yaml_bool(t, bb, "up_interpolate", v->up_interpolate, &v->up_interpolate);
    if (!st)
        st = sleapc__yaml_bool(t, bb, "block_contraction", false, &v->block_contraction);
    sleapc_yaml_ref fr;
    if (!st)
        st = sleapc__yaml_get(t, bb, "filters_rate", &fr);
    if (!st)
        st = sleapc__yaml_double(t, &fr, NULL, v->filters_rate, &v->filters_rate);
    if (!st && !(v->filters_rate > 0.0 && v->filters_rate <= 16.0))
        st = sleapc__yaml_fail(t, &fr, SLEAPC_ERR_FORMAT, "must be in (0, 16], got %g",
                               v->filters_rate);
    int net_max = v->stem_patch_stride * 16;
    if (!st && v->output_stride > net_max)
        st = sleapc__yaml_fail(t, bb, SLEAPC_ERR_FORMAT,
                               "output_stride %d is above the network's stride %d "
                               "(stem_patch_stride * 16)",
                               v->output_stride, net_max);
    return st;
}
