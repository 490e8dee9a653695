/* The sleapc command-line tool: one file per command, public API only. */
#ifndef SLEAPC_CLI_H
#define SLEAPC_CLI_H

#include <stdbool.h>

/* Print "sleapc: error: <message>" to stderr; returns 1 (the exit code). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print the library's last error as a CLI error; returns 1. */
int cli_lib_error(void);

/* Parse a whole decimal integer in [lo, hi]; false on anything else. */
bool cli_parse_int(const char *s, long lo, long hi, long *out);

/* The value of an option that takes one ("--threads 4" or "--threads=4").
 * Returns the value, or NULL (after printing an error) when it is missing.
 * *i is advanced past a separate value. */
const char *cli_option_value(int argc, char **argv, int *i, const char *name);

/* True when argv[i] is the option `name`, spelled "--name" or "--name=..."
 * (or the short alias, e.g. "-m"). */
bool cli_is_option(const char *arg, const char *name, const char *alias);

int cmd_info(int argc, char **argv);
int cmd_forward(int argc, char **argv);
int cmd_predict(int argc, char **argv);

#endif
