/* Output file names of sleapc predict (see predict_outputs.c). */
#ifndef SLEAPC_CLI_PREDICT_OUTPUTS_H
#define SLEAPC_CLI_PREDICT_OUTPUTS_H

#include "predict_args.h"

#define CLI_PATH_MAX 4096

typedef struct cli_output_list {
    char paths[CLI_MAX_FORMATS][CLI_PATH_MAX];
    int n;
} cli_output_list;

/* The files for input; scoped_video: the video's stem when --video_index
 * picks a video of a labels file (else NULL). 0, or 1 after an error. */
int cli_output_paths(const cli_predict_args *a, const char *input, const char *scoped_video,
                     cli_output_list *out);

#endif
