/* The oneDNN backend: runs the graph IR with oneDNN primitives on the CPU, in
 * float32 or (on CPUs with AVX512-BF16 or AMX) bfloat16 with float32
 * accumulation. Built only when libdnnl is found (SLEAPC_HAVE_ONEDNN). */
#ifndef SLEAPC_BACKENDS_ONEDNN_BACKEND_H
#define SLEAPC_BACKENDS_ONEDNN_BACKEND_H

#include "backends/backend.h"

/* name "onednn", score 10 (preferred over native by "auto") wherever oneDNN
 * has a CPU engine. create: SLEAPC_ERR_UNSUPPORTED for fp16, for bf16 on a CPU
 * without AVX512-BF16/AMX, and for a graph node it cannot lower (naming it). */
extern const struct sleapc_backend_factory sleapc__onednn_factory;

#endif
