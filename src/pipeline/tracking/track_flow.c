/* Pyramidal Lucas-Kanade (see track_flow.h). */
#include "pipeline/tracking/track_flow.h"

#include "core/alloc.h"
#include "core/error.h"

struct sleapc_track_flow {
    int win_size, max_levels;
    double img_scale;
};

sleapc_status sleapc__track_flow_create(int win_size, int max_levels, double img_scale,
                                        sleapc_track_flow **out)
{
    (void)win_size;
    (void)max_levels;
    (void)img_scale;
    *out = NULL;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "--use_flow is not available yet");
}

void sleapc__track_flow_destroy(sleapc_track_flow *f)
{
    sleapc__free(f);
}

sleapc_status sleapc__track_flow_points(sleapc_track_flow *f, const uint8_t *prev,
                                        const uint8_t *next, int64_t height, int64_t width,
                                        const double *pts, int64_t n, double *dst)
{
    (void)f;
    (void)prev;
    (void)next;
    (void)height;
    (void)width;
    (void)pts;
    (void)n;
    (void)dst;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "--use_flow is not available yet");
}
