#include "io/config/config_yaml_crop.h"

#include <stdio.h>
#include <string.h>

/* BBOX_CROP_ASPECTS, in crops_bbox.h's order. */
static const char *const ASPECTS[] = {"square", "letterbox", "stretch"};

static sleapc_status copy_word(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, const char *s,
                               char *dst, size_t cap)
{
    if (strlen(s) >= cap)
        return sleapc__yaml_fail(t, r, SLEAPC_ERR_FORMAT, "unknown value '%s'", s);
    snprintf(dst, cap, "%s", s);
    return SLEAPC_OK;
}

sleapc_status sleapc__config_read_crop_mode(sleapc_yaml_tree *t, const sleapc_yaml_ref *data,
                                            const sleapc_yaml_ref *pre, sleapc_model_config *cfg)
{
    sleapc_yaml_ref mode, aspect, pad, src;
    const char *crop_mode = NULL, *asp = NULL, *source = NULL;
    cfg->crop_bbox = false;
    cfg->crop_bbox_aspect = 0;
    cfg->crop_bbox_padding = 0.1;
    cfg->crop_bbox_min_size = 0.0;
    cfg->bbox_padding = 0.0;
    snprintf(cfg->bbox_source, sizeof cfg->bbox_source, "auto");
    sleapc_status st = sleapc__yaml_get(t, pre, "crop_mode", &mode);
    if (!st)
        st = sleapc__yaml_str(t, &mode, NULL, &crop_mode);
    if (!st && crop_mode && strcmp(crop_mode, "bbox") != 0 && strcmp(crop_mode, "fixed") != 0)
        return sleapc__yaml_fail(t, &mode, SLEAPC_ERR_FORMAT, "unknown crop_mode '%s'",
                                 crop_mode);
    cfg->crop_bbox = !st && crop_mode && strcmp(crop_mode, "bbox") == 0;
    if (!st)
        st = sleapc__yaml_get(t, pre, "crop_bbox_aspect", &aspect);
    if (!st)
        st = sleapc__yaml_str(t, &aspect, NULL, &asp);
    if (!st && asp) {
        int k = 0;
        while (k < 3 && strcmp(asp, ASPECTS[k]) != 0)
            k++;
        if (k == 3)
            return sleapc__yaml_fail(t, &aspect, SLEAPC_ERR_FORMAT,
                                     "crop_bbox_aspect must be square, letterbox or stretch, "
                                     "got '%s'", asp);
        cfg->crop_bbox_aspect = k;
    }
    if (!st)
        st = sleapc__yaml_get(t, pre, "crop_bbox_padding", &pad);
    if (!st)
        st = sleapc__yaml_double(t, &pad, NULL, 0.1, &cfg->crop_bbox_padding);
    if (!st && cfg->crop_bbox_padding < 0.0)
        return sleapc__yaml_fail(t, &pad, SLEAPC_ERR_FORMAT, "must be >= 0, got %g",
                                 cfg->crop_bbox_padding);
    if (!st)
        st = sleapc__yaml_double(t, pre, "crop_bbox_min_size", 0.0, &cfg->crop_bbox_min_size);
    if (!st)
        st = sleapc__yaml_double(t, data, "bbox_padding", 0.0, &cfg->bbox_padding);
    if (!st)
        st = sleapc__yaml_get(t, data, "bbox_source", &src);
    if (!st)
        st = sleapc__yaml_str(t, &src, NULL, &source);
    if (!st && source)
        st = copy_word(t, &src, source, cfg->bbox_source, sizeof cfg->bbox_source);
    return st;
}

sleapc_status sleapc__config_read_centroid_method(sleapc_yaml_tree *t, const sleapc_yaml_ref *cm,
                                                  sleapc_model_config *cfg)
{
    sleapc_yaml_ref r;
    const char *method = NULL;
    sleapc_status st = sleapc__yaml_get(t, cm, "centroid_method", &r);
    if (!st)
        st = sleapc__yaml_str(t, &r, NULL, &method);
    if (st)
        return st;
    if (!method)
        method = cfg->anchor_part ? "anchor" : "center_of_mass";
    return copy_word(t, &r, method, cfg->crop_centroid_rule, sizeof cfg->crop_centroid_rule);
}
