/* What every backend does to its input before the network: sleap-nn's
 * Lightning forward normalisation (normalize_on_gpu) and Model.forward's
 * channel coercion (architectures.md §2, inference.md §2.4). */
#ifndef SLEAPC_MODEL_GRAPH_INPUT_H
#define SLEAPC_MODEL_GRAPH_INPUT_H

#include <stdbool.h>

#include "sleapc/tensor.h"

/* x: (B, C, H, W) uint8 or float32. dst: B * in_channels * H * W floats.
 * uint8 -> float32(x) / 255; float32 -> x / 255 when max(x) > 1, else x.
 * Then 1 -> 3 channels by replication, 3 -> 1 by luma 0.2989 R + 0.587 G +
 * 0.114 B in float32 (no truncation: values are already in [0, 1]). Other
 * channel counts are SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__graph_input_prepare(const sleapc_tensor *x, int in_channels, float *dst);

/* As sleapc__graph_input_prepare; as_is (a graph's input_as_is): the values
 * are taken as they are, never divided by 255. */
sleapc_status sleapc__graph_input_prepare_as(const sleapc_tensor *x, int in_channels, bool as_is,
                                             float *dst);

/* Checks x is a 4-D uint8/float32 tensor with data; message names `what`. */
sleapc_status sleapc__graph_input_check(const sleapc_tensor *x, int in_channels);

#endif
