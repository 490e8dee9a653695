/* The native backend's bf16 value handling: rounding passes, and which
 * values can skip them where AVX512-BF16 convs round what they read. */
#ifndef SLEAPC_BACKENDS_NATIVE_BF16_H
#define SLEAPC_BACKENDS_NATIVE_BF16_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/native/native_ukernel.h"
#include "core/threadpool.h"
#include "model/graph.h"

/* x[i] = sleapc__bf16_round(x[i]) for i < n, in chunks over tp's threads;
 * with uk (a bf16 set) its vector rounding. */
void sleapc__native_bf16_round(sleapc_threadpool *tp, const native_ukernels *uk, float *x,
                               int64_t n);

/* lazy[i]: node i's value needs no rounding pass, because everything that
 * reads it rounds it anyway: convs with hw16 set (they round as they stage),
 * or concats and max pools whose own values need none (rounding commutes
 * with a copy and, being monotonic, with a max; not with a resize, which
 * interpolates unless the sizes match). Graph outputs are always rounded.
 * On allocation failure nothing is marked (every value rounded: slower, as
 * exact). */
void sleapc__native_bf16_mark_lazy(const sleapc_graph *g, const bool *hw16, bool *lazy);

#endif
