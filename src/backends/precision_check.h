/* A reduced precision's first batch checked against float32, a service of
 * the backends' floor: the backends the check needs (a float32 reference,
 * the same backend with more of the graph in float32, the same backend in
 * float32) are made here; whether outputs keep what matters is the caller's
 * judgement (a layer knows its keypoints, a backend does not). */
#ifndef SLEAPC_BACKENDS_PRECISION_CHECK_H
#define SLEAPC_BACKENDS_PRECISION_CHECK_H

#include <stdbool.h>

#include "backends/backend.h"

typedef struct sleapc_precision_judge {
    /* Whether got, the reduced precision's outputs, keep what matters of
     * want, float32's on the same input. attempt 0: as the backend was made;
     * 1 (bf16 only): with its decoder in float32 too. */
    bool (*judge)(void *user, int attempt, const sleapc_tensor_map *got,
                  const sleapc_tensor_map *want);
    /* Called once before the check falls back to float32 (to say why). */
    void (*falls_back)(void *user);
    void *user;
} sleapc_precision_judge;

/* What ran x: the check replaces them when it changes the precision. */
typedef struct sleapc_precision_run {
    sleapc_backend **be;         /* ran x at *precision */
    sleapc_tensor_map *out;      /* its outputs of x */
    sleapc_precision *precision; /* bf16 (or its emulation) or fp16; fp32 after a fall back */
    const sleapc_graph *g;       /* borrowed */
    int n_threads;
    sleapc_conv_method conv;
} sleapc_precision_run;

/* Run x once more in float32 (native backend, direct convolutions) and ask
 * the judge. Kept: nothing changes. Else bf16 tries its decoder in float32
 * (sleapc__bf16_keep_default | SLEAPC_BF16_KEEP_DECODER), kept when judged
 * so; fp16 falls back to the same backend on the same device in float32
 * (the reference serves when that cannot be made); bf16 beyond both to the
 * float32 reference. *be and *out then hold what runs from this batch on. */
sleapc_status sleapc__precision_check(const sleapc_precision_run *r, const sleapc_tensor *x,
                                      const sleapc_precision_judge *j);

#endif
