/* sleapc_retrack's body: read predictions (.slp of any producer, sleapc's
 * .json, an analysis .h5: io/predictions), run the filters and the tracker,
 * write every output atomically. */
#ifndef SLEAPC_PIPELINE_TRACKING_RETRACK_H
#define SLEAPC_PIPELINE_TRACKING_RETRACK_H

#include <stdint.h>

#include "sleapc/tracking.h"

sleapc_status sleapc__retrack(const char *in_path, const char *const *out_paths, int n_out,
                              const sleapc_tracking_opts *t, const sleapc_filter_opts *f);

/* The same reading a .slp block_frames frames at a time (sleapc__retrack:
 * SLEAPC_PRED_BLOCK_FRAMES; tests cross many blocks with a small one). */
sleapc_status sleapc__retrack_blocks(const char *in_path, const char *const *out_paths, int n_out,
                                     const sleapc_tracking_opts *t, const sleapc_filter_opts *f,
                                     int64_t block_frames);

#endif
