/* SLEAP analysis CSV. Callers choose a format through
 * io/predictions/predictions_format.h. */
#ifndef SLEAPC_IO_CSV_PREDICTIONS_CSV_H
#define SLEAPC_IO_CSV_PREDICTIONS_CSV_H

#include <stdio.h>

#include "core/results.h"

/* A header, then one row per instance:
 * track,frame_idx,instance.score,<node>.x,<node>.y,<node>.score,...
 * with empty fields for missing values. f is open for writing; the caller
 * makes the write atomic. The _from form writes head's header with src's
 * frames. */
sleapc_status sleapc__predictions_write_csv(const sleapc_predictions *pr, FILE *f);
sleapc_status sleapc__predictions_write_csv_from(const sleapc_predictions *head,
                                                 sleapc_results_source *src, FILE *f);

#endif
