/* sleapc predict on one input (predict_run.c). */
#ifndef SLEAPC_CLI_PREDICT_RUN_H
#define SLEAPC_CLI_PREDICT_RUN_H

#include <signal.h>

#include "predict_args.h"
#include "predict_inputs.h"

typedef struct cli_run_totals {
    int64_t frames, instances;
    char outputs[16448]; /* the files written, comma-separated */
} cli_run_totals;

/* Predict input's frames with p into the outputs the options name.
 * shard_frames: take the --shard share of its frames. Returns 0, 1 after
 * printing an error (nothing written), or 130 when stopped (the frames done
 * are written). */
int cli_predict_input(const cli_predict_args *a, sleapc_predictor *p, const char *input,
                      bool shard_frames, volatile sig_atomic_t *stop, cli_run_totals *t);

/* The embedding routes (predict_embed.c): with the embedding model
 * a->models[emb_index] alone, each input .slp's detections embedded; with
 * detection models beside it, each input predicted first. Then tracked
 * with --tracking. stop: as cli_predict_input's. Returns 0, 1 after
 * printing an error, or 130 when stopped. */
int cli_predict_embed(const cli_predict_args *a, const cli_input_list *inputs, int emb_index,
                      volatile sig_atomic_t *stop);

/* *index: which of a->models is an embedding (re-ID) model, or -1. Returns
 * 0, or 1 after printing an error (an unloadable model, two embedding
 * models). */
int cli_predict_embedding_index(const cli_predict_args *a, int *index);

#endif
