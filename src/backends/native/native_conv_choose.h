/* Direct or Winograd for each 3x3 conv of a plan (native_conv_choose.c). */
#ifndef SLEAPC_BACKENDS_NATIVE_CONV_CHOOSE_H
#define SLEAPC_BACKENDS_NATIVE_CONV_CHOOSE_H

#include <stdbool.h>

#include "backends/native/native_kernels.h"

typedef enum native_conv_method {
    NATIVE_CONV_DIRECT = 0,
    NATIVE_CONV_AUTO,       /* the fastest of direct and the accurate F(m), timed */
    NATIVE_CONV_WINOGRAD,   /* the fastest accurate F(m), timed; direct where none is */
} native_conv_method;

/* Whether F(m) keeps a conv over c_in input channels accurate enough (see
 * README "Winograd convolutions" for the bound and the measurement). */
bool sleapc__native_wino_accurate(int m, int c_in);

/* Sets conv's method (sleapc__native_conv_set_winograd) for runs on
 * (b, c_in, h, w) inputs on tp: direct for convs Winograd cannot run.
 * force_m (with NATIVE_CONV_WINOGRAD): F(force_m) whether accurate or not,
 * untimed (tests); 0: chosen.
 * Times the candidates on up to two batch items of random input. */
sleapc_status sleapc__native_conv_choose(native_conv *conv, int c_in, int c_out,
                                         sleapc_threadpool *tp, native_conv_method how,
                                         int force_m, int64_t b, int64_t h, int64_t w);

#endif
