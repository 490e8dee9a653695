/* The re-ID head_configs of a sleap-nn 0.3.5 training_config.yaml.
 * Private to src/io/config. */
#ifndef SLEAPC_IO_CONFIG_CONFIG_YAML_EMBEDDING_H
#define SLEAPC_IO_CONFIG_CONFIG_YAML_EMBEDDING_H

#include "io/config/config_yaml_tree.h"
#include "io/config/model_config.h"

/* head: head_configs.embedding into cfg->embedding, checked as sleap-nn's
 * heads.py EmbeddingHead builds it; errors name the file and the key. */
sleapc_status sleapc__config_read_embedding(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                            sleapc_model_config *cfg);

#endif
