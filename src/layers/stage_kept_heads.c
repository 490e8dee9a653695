#include "layers/stage_kept_heads.h"

#include "core/error.h"
#include "layers/stage_local_peaks.h"

bool sleapc__stage_keep_head(sleapc_stage *s, const char *head, bool keep)
{
    if (keep && !sleapc__stage_device_local_peaks_due(s))
        return false;
    sleapc_status st = sleapc__backend_device_keep_head(s->be, head, keep);
    if (st == SLEAPC_ERR_UNSUPPORTED)
        return !keep;
    if (st) { /* planning again failed: the next run plans once more */
        sleapc__log(SLEAPC_LOG_WARN, "%s: %s: %s", s->model->dir, head, sleapc__last_error());
        sleapc__clear_error();
    }
    sleapc__tensor_map_clear(&s->out); /* views of buffers a new plan replaced */
    if (!st)
        sleapc__log(SLEAPC_LOG_INFO, "%s: %s %s (%s)", s->model->dir, head,
                    keep ? "stays on the device" : "comes back from the device",
                    sleapc__backend_name(s->be));
    return !st;
}

sleapc_status sleapc__stage_head_maps(sleapc_stage *s, const char *head,
                                      const sleapc_tensor **out)
{
    sleapc_status st = sleapc__backend_device_fetch_head(s->be, head, &s->out);
    return st ? st : sleapc__stage_head(s, head, false, out);
}
