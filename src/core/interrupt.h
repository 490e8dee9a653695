/* The caller's abort callback (sleapc_abort_set), read between batches and
 * frames and by every wait that could otherwise block for ever (live
 * sources, network). Process-wide. */
#ifndef SLEAPC_CORE_INTERRUPT_H
#define SLEAPC_CORE_INTERRUPT_H

#include <stdbool.h>

void sleapc__abort_set(bool (*fn)(void *user), void *user);

/* True when the caller's callback asks to stop now. */
bool sleapc__interrupted(void);

#endif
