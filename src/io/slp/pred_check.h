/* Checks shared by the prediction writers (.slp, analysis HDF5, CSV). */
#ifndef SLEAPC_IO_SLP_PRED_CHECK_H
#define SLEAPC_IO_SLP_PRED_CHECK_H

#include <math.h>
#include <stdbool.h>

#include "core/results.h"

/* SLEAPC_ERR_INVALID_ARG (message starts with action) unless every count,
 * index and pointer of pr is consistent: frames name existing videos and
 * in-range instance ranges, instances name existing tracks or -1, edges and
 * symmetries name existing nodes. */
sleapc_status sleapc__predictions_check(const sleapc_predictions *pr, const char *action);

/* The same checks on the skeleton, tracks and videos only (writers that
 * read the frames block by block check each block). */
sleapc_status sleapc__predictions_check_header(const sleapc_predictions *pr, const char *action);

/* A point is missing when either coordinate is NaN or infinite; writers
 * store it the way sleap-io stores an absent node. */
static inline bool sleapc__pred_point_missing(float x, float y)
{
    return !isfinite(x) || !isfinite(y);
}

#endif
