/* The box detectors' head_configs of a sleap-nn 0.3.5 training_config.yaml.
 * Private to src/io/config. */
#ifndef SLEAPC_IO_CONFIG_CONFIG_YAML_BBOX_H
#define SLEAPC_IO_CONFIG_CONFIG_YAML_BBOX_H

#include "io/config/config_yaml_tree.h"
#include "io/config/model_config.h"

/* head: head_configs.bbox_centernet or .bbox_ssd (cfg->model_type says
 * which) into cfg->bbox, checked as sleap-nn's model.py get_head and the
 * decoder need it; errors name the file and the key. */
sleapc_status sleapc__config_read_bbox(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                       sleapc_model_config *cfg);

#endif
