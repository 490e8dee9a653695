#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERROR_MSG_CAP 1024

static _Thread_local char last_error[ERROR_MSG_CAP];

static const char *const status_text[] = {
    [SLEAPC_OK] = "ok",
    [SLEAPC_ERR_INVALID_ARG] = "invalid argument",
    [SLEAPC_ERR_STATE] = "invalid state",
    [SLEAPC_ERR_IO] = "I/O error",
    [SLEAPC_ERR_FORMAT] = "format error",
    [SLEAPC_ERR_UNSUPPORTED] = "unsupported",
    [SLEAPC_ERR_NOMEM] = "out of memory",
    [SLEAPC_ERR_BACKEND] = "backend error",
    [SLEAPC_ERR_INTERRUPTED] = "interrupted",
};
_Static_assert(sizeof status_text / sizeof status_text[0] == SLEAPC_STATUS_COUNT,
               "every status needs a text");

const char *sleapc__version(void)
{
    return SLEAPC_VERSION_STRING;
}

const char *sleapc__status_str(sleapc_status st)
{
    if ((unsigned)st >= SLEAPC_STATUS_COUNT)
        return "unknown status";
    return status_text[st];
}

const char *sleapc__last_error(void)
{
    return last_error;
}

void sleapc__clear_error(void)
{
    last_error[0] = '\0';
}

sleapc_status sleapc__fail(sleapc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

sleapc_status sleapc__wrap(sleapc_status st, const char *fmt, ...)
{
    char prefix[ERROR_MSG_CAP];
    char old[ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof old);
    const char *reason = old[0] ? old : sleapc__status_str(st);
    /* A message longer than the buffer is cut; the front says the most. */
    if (snprintf(last_error, sizeof last_error, "%s: %s", prefix, reason) < 0)
        last_error[0] = '\0';
    return st;
}
