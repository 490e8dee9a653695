/* Predictions from one file format to another (sleapc convert). */
#ifndef SLEAPC_PIPELINE_CONVERT_H
#define SLEAPC_PIPELINE_CONVERT_H

#include "core/results.h"
#include "sleapc/writer.h"

/* The body of sleapc_predictions_convert (include/sleapc/writer.h documents
 * it); the paths are not NULL. */
sleapc_status sleapc__predictions_convert(const char *in_path, const char *out_path);

/* Predictions from a .slp (its predicted instances), sleapc's .json or a
 * SLEAP analysis .h5, by extension, into *pr (freed on failure). */
sleapc_status sleapc__predictions_read(const char *in_path, sleapc_predictions *pr);

/* Write pr to path in the format of its extension (.slp, .h5, .csv, .json),
 * atomically. */
sleapc_status sleapc__predictions_write_path(const sleapc_predictions *pr, const char *path);
/* Read a SLEAP analysis HDF5 file (one instance per occupied frame and
 * track) into *pr (zeroed by the caller; freed on failure). */
sleapc_status sleapc__predictions_read_analysis_h5(const char *path, sleapc_predictions *pr);

#endif
