/* The sleapc command-line tool: one file per command, public API only. */
#ifndef SLEAPC_CLI_H
#define SLEAPC_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/model.h"
#include "sleapc/pipeline.h"
#include "sleapc/tracking.h"

/* --gui: errors are also printed as sleap-nn's JSON error line on stdout. */
extern int cli_gui;

/* -v: the library's information messages go to stderr too. */
extern int cli_verbose;
/* --quiet: not even what "auto" chose. */
extern int cli_quiet;

/* The backends the library built so far ("native", "onednn+native"), as
 * its log lines name them (cli_note_backend). */
const char *cli_backends_used(void);
/* auto, cpu, cuda, cuda:N, mps, gpu, gpu:N. */
bool cli_device_parses(const char *device);
void cli_note_backend(const char *name);

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

/* "384x384" -> 384, 384 (sides 1..65536); false on anything else. */
bool cli_parse_size(const char *s, long *h, long *w);

/* --conv's value: "direct", "winograd" or "auto" -> *out and 0; else the
 * error printed and 1. */
int cli_conv_method(const char *s, sleapc_conv_method *out);

/* v rounded up to a multiple of m (m <= 1: v). */
long cli_round_up(long v, long m);

/* The input a predictor gives this network: the crop for centered-instance
 * models, else max_height x max_width, else 512x512; scaled by the input
 * scale and padded to the max stride. */
void cli_model_input_size(const sleapc_model *m, long *h, long *w);

/* The closest of n names to `name` (edit distance, '-' and '_' alike), or
 * NULL when none is close enough to be a likely misspelling. */
const char *cli_nearest_name(const char *name, const char *const *names, int n);

/* "CMD: unknown option ARG", with the nearest of names (long names, no
 * dashes) suggested when one is close. Returns 1. */
int cli_unknown_option(const char *cmd, const char *arg, const char *const *names, int n);

/* Progress bar (progress.c). */
bool cli_progress_wanted(bool quiet);
void cli_progress_show(const sleapc_progress *p, void *user);

/* How a run reports progress: nothing, a bar (terminal), a line every
 * interval_s seconds (logs), or sleap-nn's --gui JSON lines on stdout. */
typedef enum cli_progress_mode {
    CLI_PROGRESS_NONE,
    CLI_PROGRESS_BAR,
    CLI_PROGRESS_LOG,
    CLI_PROGRESS_GUI
} cli_progress_mode;

typedef struct cli_progress_state {
    cli_progress_mode mode;
    double interval_s, last_s;
    const char *label;  /* names the input in log lines */
} cli_progress_state;

void cli_progress_init(cli_progress_state *s, cli_progress_mode mode, double interval_s,
                       const char *label);
void cli_progress_update(cli_progress_state *s, const sleapc_progress *p);

/* "0-99,150" -> malloc'd list; 0, or 1 after printing an error. */
int cli_parse_frames(const char *spec, int64_t n_frames, int64_t **out, int64_t *n_out);

/* Tracking and filter options (tracking_args.c): 1 when argv[*i] was one
 * (consumed, *i advanced past its value), 0 when not, -1 after an error. */
int cli_tracking_option(int argc, char **argv, int *i, sleapc_tracking_opts *t,
                        sleapc_filter_opts *f);
void cli_tracking_usage(void);
/* sleap-nn 0.3.5's --tracker and MOT options (tracker_choice_args.c), as
 * cli_tracking_option: the classic tracker's choice and the options at their
 * defaults are taken, the rest refused with the reason. */
int cli_tracker_choice_option(int argc, char **argv, int *i);

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
/* bench --latency (cmd_bench_latency.c): per-frame latency at batch 1; a
 * synthetic h x w frame when video_path is NULL. */
int cmd_bench_latency(const char **models, int n_models, const char *video_path, long h, long w,
                      const char *backend, int threads, int runs, bool json);
int cmd_render(int argc, char **argv);
int cmd_track(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_eval_tracking(int argc, char **argv);

#endif
