#include "core/interrupt.h"

#include <stdatomic.h>
#include <stddef.h>

/* fn and user are set together under a lock-free pair of stores: a reader
 * seeing the new fn with the old user is harmless only when the caller sets
 * the callback before its long calls, as documented. */
static _Atomic(bool (*)(void *)) abort_fn;
static _Atomic(void *) abort_user;

void sleapc__abort_set(bool (*fn)(void *user), void *user)
{
    atomic_store(&abort_fn, NULL);
    atomic_store(&abort_user, user);
    atomic_store(&abort_fn, fn);
}

bool sleapc__interrupted(void)
{
    bool (*fn)(void *) = atomic_load(&abort_fn);
    return fn && fn(atomic_load(&abort_user));
}
