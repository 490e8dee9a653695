/* The XNNPACK backend: the graph IR lowered to an XNNPACK subgraph and run
 * NHWC on the CPU; meant for ARM machines (Jetson, Raspberry Pi, Apple), and
 * it runs on x86 too. fp32, or fp16 where XNNPACK has fp16 operators for
 * every node; no bf16. */
#ifndef SLEAPC_BACKENDS_XNNPACK_BACKEND_H
#define SLEAPC_BACKENDS_XNNPACK_BACKEND_H

#include "backends/backend.h"

extern const struct sleapc_backend_factory sleapc__xnnpack_factory;

#endif
