/* The "auto" backend: measures the backends that can run a graph and keeps
 * the fastest (backend_auto.c). */
#ifndef SLEAPC_BACKENDS_BACKEND_AUTO_H
#define SLEAPC_BACKENDS_BACKEND_AUTO_H

#include "backends/backend.h"

/* Create every compiled-in backend that can run g at opts' precision (best
 * score first); refusals are collected into the error when none can. With a
 * single candidate that backend itself is returned. */
sleapc_status sleapc__backend_auto_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                          sleapc_backend **out);

/* The same among the factories facs[0..n) only (the registry's, or a
 * test's own). */
sleapc_status sleapc__backend_auto_create_among(const struct sleapc_backend_factory *const *facs,
                                                int n_facs, const sleapc_graph *g,
                                                const sleapc_backend_opts *opts,
                                                sleapc_backend **out);

/* The name of the backend an auto backend runs forwards on now (the best
 * score until it has measured, the winner after); NULL when be is not one. */
const char *sleapc__backend_auto_serving(const sleapc_backend *be);
/* The same backend itself; NULL when be is not an auto backend. */
const sleapc_backend *sleapc__backend_auto_serving_backend(const sleapc_backend *be);

#endif
