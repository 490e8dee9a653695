/* Local peaks found by a stage's backend on its device (backend.h's
 * device_local_peaks): the centroid and bottom-up layers ask once, then take
 * each run's peaks from the backend when it found them, and from the maps
 * on the host when the run brought the maps back instead (a batch with more
 * peaks than the room, or a backend the stage replaced: fp16's float32
 * fall-back). */
#ifndef SLEAPC_LAYERS_STAGE_LOCAL_PEAKS_H
#define SLEAPC_LAYERS_STAGE_LOCAL_PEAKS_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/stage.h"

/* The room the backend keeps: peaks a (sample, channel) map on average. A
 * centroid map holds one per animal, a bottom-up map one per instance of its
 * node; beyond it the batch's maps come back and the host finds them. */
#define SLEAPC_DEVICE_PEAKS_PER_MAP 64

/* Whether a layer may ask now: at a reduced precision (fp16) the stage's
 * first run checks the heads against float32 (stage.c), which needs the
 * maps; the layer asks from the run after it. */
bool sleapc__stage_device_local_peaks_due(const sleapc_stage *s);

/* Ask the stage's backend to find head's local peaks itself, as
 * sleapc__peaks_find_local would: true when it will (*channels: the head's
 * channel count, from the last run), false when the layer finds them on
 * the host. Like sleapc__stage_device_global_peaks, only a convention whose
 * peak finding is peaks.c's asks (not SLEAP 1.x), and only for 0.3.3's
 * strict maxima: the device finders do not know 0.3.5's flat tops, so under
 * 0.3.5 (s->flat_tops) the host finds them. */
bool sleapc__stage_device_local_peaks(sleapc_stage *s, const char *head, double threshold,
                                      int refine_k, int64_t *channels);

/* Peaks of the last run, in the host's order (views of the backend's). */
typedef struct sleapc_stage_local_peaks {
    int64_t n;
    const float *xy;     /* (n, 2) refined (x, y), map cells */
    const float *vals;   /* (n) */
    const int32_t *inds; /* (n, 4) sample, channel, grid x, grid y */
} sleapc_stage_local_peaks;

/* The local peaks the backend found in the last run of b samples of maps of
 * `channels` channels: *found true and *out filled, or *found false when
 * the run brought the maps back. SLEAPC_ERR_BACKEND when the peaks it
 * returned are malformed (shapes, indices out of range, out of order). */
sleapc_status sleapc__stage_local_peaks(const sleapc_stage *s, int64_t b, int64_t channels,
                                        sleapc_stage_local_peaks *out, bool *found);

/* Copy the peaks into a layer's arrays (room for lp->n each). */
void sleapc__stage_local_peaks_copy(const sleapc_stage_local_peaks *lp, float *peaks, float *vals,
                                    int32_t *sample_inds, int32_t *channel_inds);

#endif
