/* The one sigmoid every backend applies to a head that ends in one (class
 * maps, sigmoid class vectors), so that all backends give the same float32
 * values. */
#ifndef SLEAPC_BACKENDS_SIGMOID_H
#define SLEAPC_BACKENDS_SIGMOID_H

#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"

/* In place: x[i] = 1 / (1 + expf(-x[i])) for i < n, on the caller's thread;
 * allocates nothing. Saturated inputs give exactly 1.0f, as
 * PyTorch's and TensorFlow's sigmoid do; oneDNN's and XNNPACK's own logistic
 * give 0.99999994 on some of them, and SLEAP 1.x's class assignment breaks
 * ties between probabilities of exactly 1, so backends call this instead. */
void sleapc__sigmoid_apply(float *x, int64_t n);

/* Whether node i's sigmoid is applied on the host with sleapc__sigmoid_apply:
 * a sigmoid node that no other node reads (a head). A backend whose own
 * sigmoid rounds otherwise refuses a sigmoid that other nodes read. */
bool sleapc__sigmoid_on_host(const sleapc_graph *g, int i);

#endif
