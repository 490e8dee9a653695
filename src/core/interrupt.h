/* The caller's stop flag (sleapc_interrupt_flag_set), read by every wait
 * that could otherwise block for ever (live sources, network). */
#ifndef SLEAPC_CORE_INTERRUPT_H
#define SLEAPC_CORE_INTERRUPT_H

#include <signal.h>
#include <stdbool.h>

void sleapc__interrupt_flag_set(volatile sig_atomic_t *flag);

/* True while the caller's flag is set. */
bool sleapc__interrupted(void);

#endif
