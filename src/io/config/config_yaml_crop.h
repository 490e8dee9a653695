/* How a top-down crop model's crops are cut (sleap-nn 0.3.5): the
 * preprocessing.crop_mode block and what a box detector as stage 1 compares
 * with it. Private to src/io/config. */
#ifndef SLEAPC_IO_CONFIG_CONFIG_YAML_CROP_H
#define SLEAPC_IO_CONFIG_CONFIG_YAML_CROP_H

#include "io/config/config_yaml_tree.h"
#include "io/config/model_config.h"

/* pre.crop_mode (fixed / bbox), crop_bbox_aspect, crop_bbox_padding and
 * crop_bbox_min_size, checked as BBoxCropSpec and PreprocessingConfig do,
 * and data.bbox_source / data.bbox_padding. */
sleapc_status sleapc__config_read_crop_mode(sleapc_yaml_tree *t, const sleapc_yaml_ref *data,
                                            const sleapc_yaml_ref *pre, sleapc_model_config *cfg);

/* <head>.confmaps centroid_method into cfg->crop_centroid_rule, resolved as
 * resolve_centroid_method does
 * (null: "anchor" with an anchor_part, else "center_of_mass"). */
sleapc_status sleapc__config_read_centroid_method(sleapc_yaml_tree *t, const sleapc_yaml_ref *cm,
                                                  sleapc_model_config *cfg);

#endif
