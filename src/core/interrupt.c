#include "core/interrupt.h"

#include <stdatomic.h>

static _Atomic(volatile sig_atomic_t *) stop_flag;

void sleapc__interrupt_flag_set(volatile sig_atomic_t *flag)
{
    atomic_store(&stop_flag, flag);
}

bool sleapc__interrupted(void)
{
    volatile sig_atomic_t *flag = atomic_load(&stop_flag);
    return flag && *flag;
}
