/* The native backend: portable C, every graph op, the default everywhere. */
#ifndef SLEAPC_BACKENDS_NATIVE_BACKEND_H
#define SLEAPC_BACKENDS_NATIVE_BACKEND_H

#include "backends/backend.h"

extern const struct sleapc_backend_factory sleapc__native_factory;

#endif
