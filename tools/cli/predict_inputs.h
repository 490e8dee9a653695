/* sleapc predict's inputs: -i expanded into one input per video, and the
 * share of them (or of one video's frames) that --shard K/N takes. */
#ifndef SLEAPC_CLI_PREDICT_INPUTS_H
#define SLEAPC_CLI_PREDICT_INPUTS_H

#include <stdint.h>

typedef struct cli_input_list {
    char **paths;
    int n, cap;
} cli_input_list;

/* Files as they are; a folder with videos: those videos, sorted by name
 * (a folder with none is one input of images); a .txt/.list file: the
 * inputs it lists. 0, or 1 after printing an error. */
int cli_inputs_expand(const char *const *args, int n_args, cli_input_list *out);
void cli_inputs_free(cli_input_list *l);

/* "K/N" -> k, n with 0 <= k < n. 0, or 1 after printing an error. */
int cli_parse_shard(const char *spec, int *k, int *n);

/* Keep inputs k, k+n, k+2n, ... */
void cli_inputs_shard(cli_input_list *l, int k, int n);

/* Keep the k-th of n contiguous, nearly equal ranges of frames. */
void cli_frames_shard(int64_t *frames, int64_t *n_frames, int k, int n);

#endif
