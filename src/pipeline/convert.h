/* Predictions from one file format to another (sleapc convert). */
#ifndef SLEAPC_PIPELINE_CONVERT_H
#define SLEAPC_PIPELINE_CONVERT_H

#include "core/results.h"
#include "sleapc/writer.h"

/* The body of sleapc_predictions_convert (include/sleapc/writer.h documents
 * it); the paths are not NULL. */
sleapc_status sleapc__predictions_convert(const char *in_path, const char *out_path);

/* Read a SLEAP analysis HDF5 file (one instance per occupied frame and
 * track) into *pr (zeroed by the caller; freed on failure). */
sleapc_status sleapc__predictions_read_analysis_h5(const char *path, sleapc_predictions *pr);

#endif
