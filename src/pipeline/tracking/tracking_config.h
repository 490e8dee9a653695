/* From the public tracking / filter options to the tracker's and filters'
 * parameters, with sleap-nn's derived rules (cli.py:_build_tracker_config,
 * inference/tracking.py:apply_tracking). */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACKING_CONFIG_H
#define SLEAPC_PIPELINE_TRACKING_TRACKING_CONFIG_H

#include "layers/ops/filters.h"
#include "pipeline/tracking/tracker.h"
#include "sleapc/tracking.h"

/* n_nodes 0: check only what does not depend on the skeleton.
 * SLEAPC_ERR_INVALID_ARG / SLEAPC_ERR_UNSUPPORTED naming the option. */
/* The body of sleapc_tracking_opts_default (sleap-nn's defaults). */
sleapc_tracking_opts sleapc__tracking_opts_default(void);

sleapc_status sleapc__tracking_resolve(const sleapc_tracking_opts *t, int n_nodes,
                                       sleapc_tracker_opts *out);

sleapc_status sleapc__filters_resolve(const sleapc_filter_opts *f, sleapc_filter_config *out);

#endif
