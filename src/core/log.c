#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

/* One process-wide hook; set it before starting threads that log. */
static sleapc_log_fn log_fn;
static void *log_user;

void sleapc__log_set(sleapc_log_fn fn, void *user)
{
    log_fn = fn;
    log_user = user;
}

void sleapc__log(sleapc_log_level level, const char *fmt, ...)
{
    if (!log_fn)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(level, msg, log_user);
}
