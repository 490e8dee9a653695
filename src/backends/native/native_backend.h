/* The native backend: portable C, every graph op, the default everywhere. */
#ifndef SLEAPC_BACKENDS_NATIVE_BACKEND_H
#define SLEAPC_BACKENDS_NATIVE_BACKEND_H

#include "backends/backend.h"

extern const struct sleapc_backend_factory sleapc__native_factory;

/* Per-node profiling for bench programs: fn(ctx, i) is called on the calling
 * thread right after node i of a forward has run (i = 0: the input has been
 * prepared), so the time between two calls is node i's. NULL turns it off
 * (the default; then a forward costs one test per node). be must come from
 * sleapc__native_factory; other backends are left alone. */
typedef void (*sleapc_native_node_fn)(void *ctx, int node);
void sleapc__native_backend_set_node_hook(sleapc_backend *be, sleapc_native_node_fn fn,
                                          void *ctx);

/* CPU seconds the backend's threads (the calling thread and its pool's
 * workers) have run so far, each by its own clock where the system has
 * per-thread clocks, so no other thread's time lags in at its scheduler
 * ticks as with the process's clock. -1 when be is not native. */
double sleapc__native_backend_cpu_s(const sleapc_backend *be);

#endif
