/* The sleapc command-line tool: one file per command, public API only. */
#ifndef SLEAPC_CLI_H
#define SLEAPC_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/pipeline.h"

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

/* Progress bar (progress.c). */
bool cli_progress_wanted(bool quiet);
void cli_progress_show(const sleapc_progress *p, void *user);

/* "0-99,150" -> malloc'd list; 0, or 1 after printing an error. */
int cli_parse_frames(const char *spec, int64_t n_frames, int64_t **out, int64_t *n_out);

/* Check an output path before any work: its folder exists and takes a new
 * file, it is not one of the inputs (NULL entries skipped) and not a folder
 * or special file. A symbolic link to a file is fine (written through). 0, or
 * 1 after printing an error. */
int cli_check_output(const char *out, const char *const *inputs, int n_inputs);

int cmd_info(int argc, char **argv);
int cmd_forward(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_render(int argc, char **argv);

#endif
