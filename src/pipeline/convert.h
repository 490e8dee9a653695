/* Predictions from one file format to another (sleapc convert). */
#ifndef SLEAPC_PIPELINE_CONVERT_H
#define SLEAPC_PIPELINE_CONVERT_H

#include "sleapc/writer.h"

/* The body of sleapc_predictions_convert (include/sleapc/writer.h documents
 * it); the paths are not NULL. */
sleapc_status sleapc__predictions_convert(const char *in_path, const char *out_path);

#endif
