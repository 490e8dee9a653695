#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/sleapc.h"

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sleapc: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int cli_lib_error(void)
{
    return cli_error("%s", sleapc_last_error());
}

bool cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool cli_is_option(const char *arg, const char *name, const char *alias)
{
    if (alias && strcmp(arg, alias) == 0)
        return true;
    if (strncmp(arg, "--", 2) != 0)
        return false;
    size_t n = strlen(name);
    return strncmp(arg + 2, name, n) == 0 && (arg[2 + n] == '\0' || arg[2 + n] == '=');
}

const char *cli_option_value(int argc, char **argv, int *i, const char *name)
{
    const char *eq = strchr(argv[*i], '=');
    if (strncmp(argv[*i], "--", 2) == 0 && eq)
        return eq + 1;
    if (*i + 1 >= argc) {
        cli_error("option --%s needs a value", name);
        return NULL;
    }
    (*i)++;
    return argv[*i];
}
