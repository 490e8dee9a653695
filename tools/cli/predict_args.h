/* sleapc predict's command line: every option in one table
 * (predict_options.c), parsed into one struct. */
#ifndef SLEAPC_CLI_PREDICT_ARGS_H
#define SLEAPC_CLI_PREDICT_ARGS_H

#include <stddef.h>

#include "cli.h"
#include "sleapc/predictor.h"
#include "sleapc/tracking.h"

#define CLI_MAX_MODELS 3 /* a detection stack of two and an embedding model */
#define CLI_MAX_FORMATS 4
#define CLI_MAX_OPTS 160

typedef struct cli_predict_args {
    sleapc_predictor_opts o;
    sleapc_tracking_opts tracking; /* -t/--tracking and its options (tracking_args.c) */
    sleapc_filter_opts filters;    /* post-inference filters */
    const char *models[CLI_MAX_MODELS];
    int n_models;
    const char **inputs; /* argv strings; malloc'd array */
    int n_inputs, inputs_cap;
    const char *output; /* -o */
    const char *output_dir;
    const char *formats[CLI_MAX_FORMATS]; /* "slp", "analysis_h5", "csv", "json" */
    int n_formats;
    const char *frames;
    const char *device;
    const char *runtime;
    const char *embed;
    const char *video_input_format;
    const char *centroid_output;
    const char *integral_refinement;
    const char *precision;
    const char *conv;   /* --conv direct|winograd|auto */
    const char *compat; /* --compat 0.3.5|0.3.3 */
    const char *shard;  /* "K/N" */
    int shard_k, shard_n;
    int video_index; /* -1: not given */
    int queue_maxsize;
    int paf_workers;
    int write_interval;
    double progress_interval; /* seconds between progress lines in logs */
    int gui, verbose, quiet, centroid_only, restore_source_videos;
    int only_labeled_frames, only_suggested_frames, exclude_user_labeled, only_predicted_frames,
        no_empty_frames;
    int ensure_rgb, ensure_grayscale; /* -1: from the config */
    bool save_embeddings;             /* --save_embeddings slp: the embedding route */
    /* Decided after parsing: */
    cli_progress_mode progress_mode;
    int crops_only;                    /* > 0: a centered-instance model alone, its crop side */
    bool shard_frames;                 /* --shard on one input: this run predicts a frame range */
    unsigned char given[CLI_MAX_OPTS]; /* by table row: given on the command line */
} cli_predict_args;

/* Parse argv (argv[0] = "predict"). Returns 0, 1 after printing an error, or
 * -1 when --help was printed. args->inputs must be freed (cli_predict_args_free). */
int cli_predict_parse(int argc, char **argv, cli_predict_args *args);
void cli_predict_args_free(cli_predict_args *args);

/* Whether option `name` (long name, no dashes) was given. */
int cli_predict_given(const cli_predict_args *args, const char *name);
/* The first option given on the command line that allowed (NULL-ended
 * long names) does not list, or NULL. */
const char *cli_predict_given_outside(const cli_predict_args *args, const char *const *allowed);

/* Print the option reference (--help). */
void cli_predict_usage(void);

#endif
