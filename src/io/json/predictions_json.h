/* sleapc's predictions JSON ("format": "sleapc-predictions"). Callers choose
 * a format through io/predictions/predictions_format.h. */
#ifndef SLEAPC_IO_JSON_PREDICTIONS_JSON_H
#define SLEAPC_IO_JSON_PREDICTIONS_JSON_H

#include <stdio.h>

#include "core/results.h"

/* f is open for writing; the caller makes the write atomic. The _from form
 * writes head's header with src's frames (src's blocks carry the same
 * header). */
sleapc_status sleapc__predictions_write_json(const sleapc_predictions *pr, FILE *f);
sleapc_status sleapc__predictions_write_json_from(const sleapc_predictions *head,
                                                  sleapc_results_source *src, FILE *f);

#endif
