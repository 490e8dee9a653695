/* Direct or Winograd for each 3x3 conv of a plan (native_conv_choose.c). */
#ifndef SLEAPC_BACKENDS_NATIVE_CONV_CHOOSE_H
#define SLEAPC_BACKENDS_NATIVE_CONV_CHOOSE_H

#include <stdbool.h>

#include "backends/native/native_kernels.h"
#include "model/graph.h"
#include "sleapc/runner.h"

typedef enum native_conv_method {
    NATIVE_CONV_DIRECT = 0,
    NATIVE_CONV_AUTO,       /* the fastest of direct and the accurate F(m), timed */
    NATIVE_CONV_WINOGRAD,   /* the fastest accurate F(m), timed; direct where none is */
} native_conv_method;

/* The method for the backend option conv; SLEAPC_CONV=direct|winograd pins
 * what auto means (runs that must repeat bit for bit where no cache is
 * kept: the tests), as SLEAPC_BACKEND pins the auto backend. */
native_conv_method sleapc__native_conv_method_of(sleapc_conv_method conv);

/* Whether F(m) keeps a conv over c_in input channels accurate enough (see
 * README "Winograd convolutions" for the bound and the measurement). */
bool sleapc__native_wino_accurate(int m, int c_in);

/* The part of a conv choice's cache key that a plan's convs share: the
 * graph, the method asked for, whether bf16 twins are candidates, the
 * threads, the version and the CPU. */
void sleapc__native_conv_key_prefix(const sleapc_graph *g, native_conv_method how, bool twins,
                                    int n_threads, char *out, size_t cap);

/* A conv's other form, one more candidate with conv auto: the same conv on
 * other kernels (bf16: AVX512-BF16's direct method). */
typedef struct native_conv_pick {
    native_conv *alt;  /* NULL: none */
    bool force_alt;    /* pick it untimed (tests) */
    bool use_alt;      /* out: alt was chosen (conv then stays direct) */
} native_conv_pick;

/* Sets conv's method (sleapc__native_conv_set_winograd) for runs on
 * (b, c_in, h, w) inputs on tp: direct for convs Winograd cannot run.
 * force_m (with NATIVE_CONV_WINOGRAD): F(force_m) whether accurate or not,
 * untimed (tests); 0: chosen.
 * Uses the choice the auto cache keeps for key_prefix, node and the input
 * (NULL key_prefix: none); else times the candidates on one batch item of
 * random input and keeps the choice (the first run's, among concurrent
 * ones). pick (NULL: none) offers conv's twin; its use_alt says the choice. */
sleapc_status sleapc__native_conv_choose(native_conv *conv, native_conv_pick *pick, int c_in,
                                         int c_out,
                                         sleapc_threadpool *tp, native_conv_method how,
                                         int force_m, const char *key_prefix, int node,
                                         int64_t b, int64_t h, int64_t w);

#endif
