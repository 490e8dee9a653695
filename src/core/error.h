/* Internal error reporting: fail at the source, add context on the way up. */
#ifndef SLEAPC_CORE_ERROR_H
#define SLEAPC_CORE_ERROR_H

#include "sleapc/sleapc.h"

/* Set this thread's message (printf-style) and return st. */
sleapc_status sleapc__fail(sleapc_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix the current message with "context: " and return st. */
sleapc_status sleapc__wrap(sleapc_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Forget this thread's message. */
void sleapc__clear_error(void);

/* Internal logging through the public hook. */
void sleapc__log(sleapc_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
