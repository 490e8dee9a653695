/* The predictions readers of the formats table (predictions_format.c), one
 * file each. Each fills *pr (zeroed by the caller) from path and may leave
 * it half-filled on failure (the caller frees it); n_user_frames, when not
 * NULL and zeroed, counts frames that also hold user (labelled) instances. */
#ifndef SLEAPC_IO_PREDICTIONS_READ_IMPL_H
#define SLEAPC_IO_PREDICTIONS_READ_IMPL_H

#include "core/results.h"

sleapc_status sleapc__pred_read_slp(const char *path, sleapc_predictions *pr,
                                    int64_t *n_user_frames);
sleapc_status sleapc__pred_read_json(const char *path, sleapc_predictions *pr,
                                     int64_t *n_user_frames);
sleapc_status sleapc__pred_read_analysis_h5(const char *path, sleapc_predictions *pr,
                                            int64_t *n_user_frames);

/* Room for the header arrays and frames/insts of the body (caps set); the
 * readers fill names and rows. */
sleapc_status sleapc__pred_read_alloc(sleapc_predictions *pr, int nodes, int edges, int syms,
                                      int tracks, int videos, int64_t frames, int64_t insts);
sleapc_status sleapc__pred_read_nomem(void);

#endif
