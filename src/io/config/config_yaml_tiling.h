/* The tiling block of a sleap-nn training_config.yaml. Private to src/io/config. */
#ifndef SLEAPC_IO_CONFIG_CONFIG_YAML_TILING_H
#define SLEAPC_IO_CONFIG_CONFIG_YAML_TILING_H

#include "io/config/config_yaml_tree.h"
#include "io/config/model_config.h"

/* Read pre.tiling into cfg->tiling (absent or null: disabled), checking every
 * field as sleap-nn's TilingConfig validators do. cfg->model_type must be
 * known: an enabled block on a model type sleapc does not tile, or one
 * without tile_size / overlap, is refused, naming the file and the key. */
sleapc_status sleapc__config_read_tiling(sleapc_yaml_tree *t, const sleapc_yaml_ref *pre,
                                         sleapc_model_config *cfg);

#endif
