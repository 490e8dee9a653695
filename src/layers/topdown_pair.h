/* Which two models make a top-down pair, and what sleap-nn 0.3.5 says of the
 * pair (inference/loaders.py _check_crop_stage): a box-scaled crop model
 * (crop_mode: bbox) needs a box detector as stage 1; behind a detector, the
 * warnings where the two models' boxes or crop centres differ. */
#ifndef SLEAPC_LAYERS_TOPDOWN_PAIR_H
#define SLEAPC_LAYERS_TOPDOWN_PAIR_H

#include <stdbool.h>

#include "model/model_impl.h"

/* A model that can be stage 1 (centroid, bbox_centernet, bbox_ssd), and one
 * that can be stage 2 (centered_instance, multi_class_topdown). */
bool sleapc__topdown_is_stage1(const sleapc_model *m);
bool sleapc__topdown_is_stage2(const sleapc_model *m);

/* Refuse a pair sleap-nn refuses (SLEAPC_ERR_INVALID_ARG, with its reason),
 * else log its warnings and return SLEAPC_OK. */
sleapc_status sleapc__topdown_pair_check(const sleapc_model *stage1, const sleapc_model *stage2);

#endif
