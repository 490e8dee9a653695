/* Predictions read back from a file for retracking: any SLEAP .slp (SLEAP's,
 * sleap-nn's, sleapc's) or sleapc's own predictions .json. */
#ifndef SLEAPC_PIPELINE_TRACKING_PREDICTIONS_LOAD_H
#define SLEAPC_PIPELINE_TRACKING_PREDICTIONS_LOAD_H

#include "core/results.h"

/* Fills *pr (zeroed by the caller) from path, chosen by its extension. Only
 * predicted instances of the first skeleton are read; frames with user
 * instances keep their predictions (sleap-nn would track the user ones) and
 * n_user_frames counts them (may be NULL). SLEAPC_ERR_IO, SLEAPC_ERR_FORMAT
 * naming the file, SLEAPC_ERR_NOMEM; *pr is freed on failure. */
sleapc_status sleapc__predictions_load(const char *path, sleapc_predictions *pr,
                                       int64_t *n_user_frames);

#endif
