#include "layers/stage_local_peaks.h"

#include <string.h>

#include "core/error.h"

bool sleapc__stage_device_local_peaks_due(const sleapc_stage *s)
{
    bool reduced = s->precision == SLEAPC_PRECISION_FP16 ||
                   s->precision == SLEAPC_PRECISION_BF16 ||
                   s->precision == SLEAPC_PRECISION_BF16_EMULATED;
    return !reduced || s->bf16_error >= 0;
}

bool sleapc__stage_device_local_peaks(sleapc_stage *s, const char *head, double threshold,
                                      int refine_k, int64_t *channels)
{
    const sleapc_tensor *maps = sleapc__tensor_map_get(&s->out, head);
    /* The device finders keep strict maxima only (0.3.3's rule); 0.3.5's
     * flat tops are found on the host. */
    if (!s->convention->device_global_peaks || s->flat_tops || !maps || maps->ndim != 4 ||
        sleapc__backend_device_local_peaks(s->be, head, threshold, refine_k,
                                           SLEAPC_DEVICE_PEAKS_PER_MAP) != SLEAPC_OK)
        return false;
    *channels = maps->shape[1];
    sleapc__tensor_map_clear(&s->out); /* views of buffers a new plan replaced */
    sleapc__log(SLEAPC_LOG_INFO, "%s: local peaks of %s found on the device (%s)", s->model->dir,
                head, sleapc__backend_name(s->be));
    return true;
}

static bool is(const sleapc_tensor *t, sleapc_dtype dtype, int ndim, int64_t d0, int64_t d1)
{
    return t && t->dtype == dtype && t->ndim == ndim && t->shape[0] == d0 &&
           (ndim == 1 || t->shape[1] == d1);
}

sleapc_status sleapc__stage_local_peaks(const sleapc_stage *s, int64_t b, int64_t channels,
                                        sleapc_stage_local_peaks *out, bool *found)
{
    const sleapc_tensor *xy = sleapc__tensor_map_get(&s->out, "local_peaks");
    *found = xy != NULL;
    if (!xy)
        return SLEAPC_OK;
    int64_t n = xy->ndim == 2 ? xy->shape[0] : -1;
    const sleapc_tensor *vals = sleapc__tensor_map_get(&s->out, "local_peak_vals");
    const sleapc_tensor *inds = sleapc__tensor_map_get(&s->out, "local_peak_inds");
    bool ok = n >= 0 && is(xy, SLEAPC_DTYPE_F32, 2, n, 2) && is(vals, SLEAPC_DTYPE_F32, 1, n, 0) &&
              is(inds, SLEAPC_DTYPE_I32, 2, n, 4);
    const int32_t *e = ok ? inds->data : NULL;
    for (int64_t i = 0; ok && i < n; i++, e += 4)
        ok = e[0] >= 0 && e[0] < b && e[1] >= 0 && e[1] < channels && (i == 0 || e[0] >= e[-4]);
    if (!ok)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s returned malformed local peaks for %s",
                            sleapc__backend_name(s->be), s->model->dir);
    *out = (sleapc_stage_local_peaks){.n = n, .xy = xy->data, .vals = vals->data,
                                      .inds = inds->data};
    return SLEAPC_OK;
}

void sleapc__stage_local_peaks_copy(const sleapc_stage_local_peaks *lp, float *peaks, float *vals,
                                    int32_t *sample_inds, int32_t *channel_inds)
{
    memcpy(peaks, lp->xy, (size_t)lp->n * 2 * sizeof(float));
    memcpy(vals, lp->vals, (size_t)lp->n * sizeof(float));
    for (int64_t i = 0; i < lp->n; i++) {
        sample_inds[i] = lp->inds[4 * i];
        channel_inds[i] = lp->inds[4 * i + 1];
    }
}
