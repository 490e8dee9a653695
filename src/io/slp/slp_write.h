/* The SLEAP file writers: a .slp labels file and an analysis HDF5 file.
 * Callers choose a format through io/predictions/predictions_format.h. */
#ifndef SLEAPC_IO_SLP_WRITE_H
#define SLEAPC_IO_SLP_WRITE_H

#include "core/results.h"

/* A SLEAP .slp labels file (the predicted-labels schema sleap-io writes),
 * written atomically: path appears only when everything succeeded. Missing
 * points (NaN) are stored as sleap-io stores them (NaN, invisible, score 0);
 * a NaN tracking_score is stored as NaN, as sleap-io 0.9.5 does. SLEAPC_ERR_INVALID_ARG for inconsistent
 * predictions (bad video/track index), SLEAPC_ERR_IO, SLEAPC_ERR_NOMEM. The
 * _from form writes head's header with src's frames (src's blocks carry the
 * same header). */
sleapc_status sleapc__predictions_write_slp(const sleapc_predictions *pr, const char *path);
sleapc_status sleapc__predictions_write_slp_from(const sleapc_predictions *head,
                                                 sleapc_results_source *src, const char *path);

/* A SLEAP "analysis" HDF5 file (sleap-io 0.9.5 save_analysis_h5 layout, the
 * matrices of the first video), written atomically like the .slp. */
sleapc_status sleapc__predictions_write_analysis_h5(const sleapc_predictions *pr, const char *path);

#endif
