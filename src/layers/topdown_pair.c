#include "layers/topdown_pair.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static bool is_box(const sleapc_model *m)
{
    return m->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_CENTERNET ||
           m->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_SSD;
}

bool sleapc__topdown_is_stage1(const sleapc_model *m)
{
    return m->cfg.model_type == SLEAPC_MODEL_TYPE_CENTROID || is_box(m);
}

bool sleapc__topdown_is_stage2(const sleapc_model *m)
{
    return m->cfg.model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE ||
           m->cfg.model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
}

/* Python's repr of a float as sleap-nn prints it (0.0, 2.5). */
static void py_float(double v, char *buf, size_t cap)
{
    for (int prec = 1; prec <= 17; prec++) {  /* the shortest that reads back */
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".eni"))
        strncat(buf, ".0", cap - strlen(buf) - 1);
}

sleapc_status sleapc__topdown_pair_check(const sleapc_model *s1, const sleapc_model *s2)
{
    const sleapc_model_config *det = &s1->cfg, *crop = &s2->cfg;
    const char *types = crop->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN
                            ? "multi_class_topdown"
                            : "centered_instance";
    if (!is_box(s1)) {
        if (crop->crop_bbox)
            return sleapc__fail(
                SLEAPC_ERR_INVALID_ARG,
                "%s: This centered-instance model crops each instance's bounding box "
                "(preprocessing.crop_mode='bbox'), so its first stage must be a bbox_centernet "
                "/ bbox_ssd detector, not a centroid model (or run it alone on labeled frames to "
                "use ground-truth boxes).",
                s2->dir);
        return SLEAPC_OK;
    }
    if (crop->crop_bbox) {
        /* An explicit bbox_source on both sides must agree ("auto" is
         * resolved per labels file); so must bbox_padding. */
        if (strcmp(det->bbox_source, "auto") != 0 && strcmp(crop->bbox_source, "auto") != 0 &&
            strcmp(det->bbox_source, crop->bbox_source) != 0)
            sleapc__log(SLEAPC_LOG_WARN,
                        "The detector was trained with data_config.bbox_source='%s' but the "
                        "box-scaled centered-instance model with bbox_source='%s': their boxes "
                        "differ, so crops will be scaled differently from training.",
                        det->bbox_source, crop->bbox_source);
        if (det->bbox_padding != crop->bbox_padding) {
            char a[40], b[40];
            py_float(det->bbox_padding, a, sizeof a);
            py_float(crop->bbox_padding, b, sizeof b);
            sleapc__log(SLEAPC_LOG_WARN,
                        "The detector was trained with data_config.bbox_padding=%s but the "
                        "box-scaled centered-instance model with bbox_padding=%s: their boxes "
                        "differ, so crops will be scaled differently from training.",
                        a, b);
        }
        return SLEAPC_OK;
    }
    if (strcmp(crop->crop_centroid_rule, "bbox_center") != 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "Crops will be centered on the detected box centers, but the ['%s', '%s'] "
                    "crop model was trained on crops centered on its '%s' centroid. Train it "
                    "with centroid_method: bbox_center (or crop_mode: bbox) to match.",
                    sleapc__model_type_name(det->model_type), types,
                    crop->crop_centroid_rule[0] ? crop->crop_centroid_rule : "center_of_mass");
    return SLEAPC_OK;
}
