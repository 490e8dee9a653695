/* sleapc_predictions_merge's body (include/sleapc/tracking.h documents it);
 * the paths are not NULL and n_in >= 1. */
#ifndef SLEAPC_PIPELINE_MERGE_H
#define SLEAPC_PIPELINE_MERGE_H

#include "sleapc/tracking.h"

sleapc_status sleapc__predictions_merge(const char *const *in_paths, int n_in,
                                        const char *out_path, const sleapc_tracking_opts *t,
                                        const sleapc_filter_opts *f);

#endif
