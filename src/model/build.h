/* Builders: model config + weights -> graph IR. */
#ifndef SLEAPC_MODEL_BUILD_H
#define SLEAPC_MODEL_BUILD_H

#include "core/weights.h"
#include "io/config/model_config.h"
#include "io/config/model_heads.h"
#include "model/graph.h"

/* Build sleap-nn's UNet + heads. Every tensor the config implies must exist in
 * w with the right shape; with strict, a "model." tensor nobody uses is an
 * error too (like PyTorch's strict load_state_dict). keras_placement selects
 * the transposed-conv placement (legacy models). weights_path only names the
 * file in messages. */
sleapc_status sleapc__build_unet(const sleapc_model_config *cfg, const sleapc_weights *w,
                                 const char *weights_path, bool strict, bool keras_placement,
                                 sleapc_graph *g);

#endif
