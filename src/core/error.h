/* Internal error reporting: fail at the source, add context on the way up. */
#ifndef SLEAPC_CORE_ERROR_H
#define SLEAPC_CORE_ERROR_H

#include "sleapc/sleapc.h"

/* The bodies of sleapc_version, sleapc_status_str and sleapc_last_error. */
const char *sleapc__version(void);
const char *sleapc__status_str(sleapc_status st);
const char *sleapc__last_error(void);

/* Set this thread's message (printf-style) and return st. */
sleapc_status sleapc__fail(sleapc_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix the current message with "context: " and return st. */
sleapc_status sleapc__wrap(sleapc_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Forget this thread's message. */
void sleapc__clear_error(void);

/* Internal logging through the hook sleapc_log_set installs (its body). */
void sleapc__log_set(sleapc_log_fn fn, void *user);
void sleapc__log(sleapc_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
