/* The draws of numpy's default generator that sleap-nn's calibration
 * makes: np.random.default_rng(entropy) (SeedSequence, then PCG64 XSL-RR)
 * and Generator.choice(pop, size, replace=False), reproduced bit for bit so
 * the subsampled calibration trials are numpy's. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_NPRANDOM_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_NPRANDOM_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct mot_pcg64 {
    uint64_t state_hi, state_lo, inc_hi, inc_lo;
    bool has_uint32;
    uint32_t uinteger;
} mot_pcg64;

/* default_rng(words): the SeedSequence of the 32-bit entropy words (a
 * Python tuple of small non-negative ints is one word each). */
void sleapc__mot_pcg64_seed(mot_pcg64 *g, const uint32_t *words, int n_words);

/* The next 64 random bits. */
uint64_t sleapc__mot_pcg64_next64(mot_pcg64 *g);

/* Generator.choice(pop, size, replace=False), sorted ascending into out
 * (size entries): the set numpy draws (Floyd's algorithm below 10000,
 * a tail shuffle above). SLEAPC_ERR_NOMEM; SLEAPC_ERR_INVALID_ARG when
 * size exceeds pop. */
sleapc_status sleapc__mot_choice_sorted(mot_pcg64 *g, int64_t pop, int64_t size, int64_t *out);

#endif
