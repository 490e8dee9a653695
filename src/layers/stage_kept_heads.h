/* Heads a stage's backend keeps on its device (backend.h's
 * device_keep_head): a layer whose every use of a head happens on the
 * device (bottom-up's PAF line scores) asks once; the stage's outputs then
 * hold that head's shape without its maps (data NULL), and a host fall-back
 * fetches them on demand. */
#ifndef SLEAPC_LAYERS_STAGE_KEPT_HEADS_H
#define SLEAPC_LAYERS_STAGE_KEPT_HEADS_H

#include <stdbool.h>

#include "layers/stage.h"

/* keep true: ask the stage's backend to keep head's maps on its device from
 * the next run on; true when it will. keep false: bring them back again;
 * true when they will come back. Either drops the last run's outputs (the
 * backend planned again), so a layer asks before a run. Not before the
 * first-batch precision check has run (it compares the heads' maps):
 * sleapc__stage_device_local_peaks_due. */
bool sleapc__stage_keep_head(sleapc_stage *s, const char *head, bool keep);

/* The last run's maps of head on the host: as sleapc__stage_head, fetched
 * from the device first when they were kept there. */
sleapc_status sleapc__stage_head_maps(sleapc_stage *s, const char *head,
                                      const sleapc_tensor **out);

#endif
