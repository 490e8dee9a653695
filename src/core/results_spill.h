/* A run's results kept on disk instead of in memory: frames are appended as
 * fixed-size records (frame, its instances, their points, point scores and
 * embeddings) to an unlinked temporary file, then read back in order, a
 * bounded block at a time. The memory a spill holds does not grow with the frames in it. */
#ifndef SLEAPC_CORE_RESULTS_SPILL_H
#define SLEAPC_CORE_RESULTS_SPILL_H

#include "core/results.h"

typedef struct sleapc_results_spill sleapc_results_spill;

/* A spill in the folder of near_path (the file the results are for; its
 * folder is the one the output must fit in), removed from the folder at
 * once, so nothing is left behind whatever happens. n_nodes sizes the
 * points. Messages do not name near_path: the caller adds it.
 * SLEAPC_ERR_IO, SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__spill_open(const char *near_path, int n_nodes, sleapc_results_spill **out);

/* Appends pr's frames in their order, each with its instances (pr->n_nodes
 * must be the spill's). SLEAPC_ERR_IO (disk full: the message names the
 * cause). */
sleapc_status sleapc__spill_append(sleapc_results_spill *s, const sleapc_predictions *pr);

int64_t sleapc__spill_n_frames(const sleapc_results_spill *s);
int64_t sleapc__spill_n_insts(const sleapc_results_spill *s);

/* A source over the spill's frames (see sleapc_results_source) whose blocks
 * carry head's skeleton, tracks and videos (borrowed: head must outlive the
 * source's use). Appending after this is not allowed. */
void sleapc__spill_source(sleapc_results_spill *s, const sleapc_predictions *head,
                          sleapc_results_source *out);

void sleapc__spill_close(sleapc_results_spill *s);

#endif
