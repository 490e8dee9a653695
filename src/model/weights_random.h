/* Random weights for a network described by a config alone: benchmarks and
 * tests of realistic network sizes without a checkpoint. */
#ifndef SLEAPC_MODEL_WEIGHTS_RANDOM_H
#define SLEAPC_MODEL_WEIGHTS_RANDOM_H

#include <stdint.h>

#include "core/weights.h"
#include "io/config/model_config.h"

/* Fill the empty set *out with every tensor sleapc__build_unet asks for when
 * it builds cfg's network, named and shaped as it expects. Weights are
 * He-uniform (U(+-sqrt(6 / fan_in)), fan_in = numel / shape[0]) so
 * activations keep their scale through ReLU layers; 1-D tensors (biases) are
 * U(+-0.05). The same seed gives the same values. On failure *out is cleared
 * and the status is the builder's (SLEAPC_ERR_FORMAT, SLEAPC_ERR_UNSUPPORTED)
 * or SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__weights_random_for_config(const sleapc_model_config *cfg, uint64_t seed,
                                                sleapc_weights *out);

#endif
