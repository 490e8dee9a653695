/* data_config.preprocessing.tiling of a sleap-nn training_config.yaml: every
 * field of TilingConfig (config/data_config.py) with its validators, and the
 * model-type guard of config/utils.py check_tiling. */
#include "io/config/config_yaml_tiling.h"

#include <stdio.h>
#include <string.h>

/* parent.rel as an int; absent or null leave *out (the default, or the
 * "null" marker). min: smallest valid value. */
static sleapc_status read_int_min(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                  const char *rel, int min, int *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_int(t, &r, NULL, *out, out);
    if (!st && !sleapc__yaml_is_null(&r) && *out < min)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be %s, got %d",
                                 min == 0 ? "0 or more" : "positive", *out);
    return st;
}

/* parent.rel as a number in [lo, hi] (hi_open: [lo, hi)) or, when lo_open,
 * (lo, hi]. */
static sleapc_status read_range(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                                double lo, bool lo_open, double hi, bool hi_open, double *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_double(t, &r, NULL, *out, out);
    if (st || sleapc__yaml_is_null(&r))
        return st;
    const double v = *out;
    if ((lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi))
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be in %c%g, %g%c, got %g",
                                 lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']', v);
    return SLEAPC_OK;
}

/* parent.rel as one of names (a NULL-terminated list); absent or null keep
 * *index. */
static sleapc_status read_choice(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                 const char *rel, const char *const *names, int *index)
{
    sleapc_yaml_ref r;
    const char *s = NULL;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_str(t, &r, NULL, &s);
    if (st || !s)
        return st;
    char list[96] = "";
    for (int i = 0; names[i]; i++) {
        if (strcmp(s, names[i]) == 0) {
            *index = i;
            return SLEAPC_OK;
        }
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s'%s'", i ? ", " : "", names[i]);
    }
    return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be one of %s, got '%s'", list, s);
}


static const char *const blend_names[] = {"gaussian", "pyramid", "constant", NULL};
static const char *const device_names[] = {"auto", "cpu", "cuda", NULL};
static const char *const sampling_names[] = {"foreground", "grid", NULL};

static sleapc_status read_fields(sleapc_yaml_tree *t, const sleapc_yaml_ref *tl,
                                 sleapc_tiling_config *c)
{
    int blend = (int)c->blend, device = 0, sampling = 0;
    sleapc_status st = sleapc__yaml_bool(t, tl, "enabled", c->enabled, &c->enabled);
    if (!st)
        st = read_int_min(t, tl, "tile_size", 1, &c->tile_size);
    if (!st)
        st = read_int_min(t, tl, "overlap", 0, &c->overlap);
    if (!st)
        st =
            read_range(t, tl, "min_overlap_fraction", 0, false, 1, false, &c->min_overlap_fraction);
    if (!st)
        st = read_choice(t, tl, "blend", blend_names, &blend);
    if (!st)
        st = read_range(t, tl, "sigma_scale", 0, true, 1, false, &c->sigma_scale);
    if (!st)
        st = read_int_min(t, tl, "tile_batch_size", 1, &c->tile_batch_size);
    if (!st)
        st = read_choice(t, tl, "accumulator_device", device_names, &device);
    if (!st)
        st = read_range(t, tl, "cpu_thresh", 0, false, 1, false, &c->cpu_thresh);
    if (!st)
        st = read_choice(t, tl, "sampling", sampling_names, &sampling);
    if (!st)
        st = read_range(t, tl, "tile_fg_fraction", 0, false, 1, true, &c->tile_fg_fraction);
    if (!st)
        st = read_int_min(t, tl, "samples_per_frame", 1, &c->samples_per_frame);
    if (!st)
        st = read_range(t, tl, "center_jitter", 0, false, 1, false, &c->center_jitter);
    if (!st)
        st = read_int_min(t, tl, "min_visible_keypoints", 0, &c->min_visible_keypoints);
    if (!st)
        st = read_int_min(t, tl, "steps_per_epoch", 1, &c->steps_per_epoch);
    if (!st)
        st = sleapc__yaml_bool(t, tl, "full_frame_pass", c->full_frame_pass, &c->full_frame_pass);
    c->blend = (sleapc_tile_blend)blend;
    snprintf(c->accumulator_device, sizeof c->accumulator_device, "%s", device_names[device]);
    snprintf(c->sampling, sizeof c->sampling, "%s", sampling_names[sampling]);
    return st;
}

sleapc_status sleapc__config_read_tiling(sleapc_yaml_tree *t, const sleapc_yaml_ref *pre,
                                         sleapc_model_config *cfg)
{
    sleapc_tiling_config *c = &cfg->tiling;
    sleapc_yaml_ref tl, en;
    sleapc_status st = sleapc__yaml_get(t, pre, "tiling", &tl);
    if (st || sleapc__yaml_is_null(&tl))
        return st;
    if (!sleapc__yaml_is_map(&tl))
        return sleapc__yaml_fail(t, &tl, SLEAPC_ERR_FORMAT, "expected a mapping");
    st = read_fields(t, &tl, c);
    if (st || !c->enabled)
        return st;

    /* A tiled model never runs untiled: what sleapc cannot tile is refused.
     * sleap-nn's check_tiling allows tiling for single_instance pose models
     * (and segmentation models, which sleapc does not run); its training
     * refuses the other model types. */
    st = sleapc__yaml_get(t, &tl, "enabled", &en);
    if (st)
        return st;
    if (cfg->model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE)
        return sleapc__yaml_fail(t, &en, SLEAPC_ERR_UNSUPPORTED,
                                 "tiling is not implemented for model_type=%s (sleap-nn tiles "
                                 "single_instance pose models only)",
                                 sleapc__model_type_name(cfg->model_type));
    /* check_tiling writes both sizes back at training; without them sleap-nn's
     * predictor cannot build its TiledLayer either. */
    if (c->tile_size <= 0) {
        sleapc__yaml_get(t, &tl, "tile_size", &en);
        return sleapc__yaml_fail(t, &en, SLEAPC_ERR_FORMAT, "must be set when tiling is enabled");
    }
    if (c->overlap < 0) {
        sleapc__yaml_get(t, &tl, "overlap", &en);
        return sleapc__yaml_fail(t, &en, SLEAPC_ERR_FORMAT, "must be set when tiling is enabled");
    }
    if (c->overlap >= c->tile_size) {
        sleapc__yaml_get(t, &tl, "overlap", &en);
        return sleapc__yaml_fail(t, &en, SLEAPC_ERR_FORMAT,
                                 "%d must be less than tile_size %d (a tile needs a positive "
                                 "step)",
                                 c->overlap, c->tile_size);
    }
    return SLEAPC_OK;
}
