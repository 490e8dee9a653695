#include "layers/centroid_finder.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/layer.h"
#include "layers/ops/coords.h"
#include "core/peaks.h"
#include "layers/stage_local_peaks.h"

static const char *const HEAD = "CentroidConfmapsHead";

sleapc_status sleapc__centroid_finder_init(sleapc_centroid_finder *f, const sleapc_model *m,
                                           const sleapc_predictor_opts *o, double threshold)
{
    memset(f, 0, sizeof *f);
    f->threshold = threshold;
    f->refine_k = sleapc__layer_refine_k(o);
    f->max_instances = o->max_instances;
    sleapc_preprocess_opts pp = sleapc__layer_preprocess_opts(m, o, true);
    sleapc_status st = sleapc__stage_init(&f->stage, m, o, &pp);
    f->stage.peak_threshold = (float)threshold;
    return st;
}

void sleapc__centroid_finder_free(sleapc_centroid_finder *f)
{
    if (!f)
        return;
    sleapc__stage_free(&f->stage);
    sleapc__free(f->peaks);
    sleapc__free(f->vals);
    sleapc__free(f->sample_inds);
    sleapc__free(f->channel_inds);
    sleapc__free(f->order);
    memset(f, 0, sizeof *f);
}

static sleapc_status grow(sleapc_centroid_finder *f, int64_t need)
{
    if (need <= f->cap)
        return SLEAPC_OK;
    sleapc__free(f->peaks);
    sleapc__free(f->vals);
    sleapc__free(f->sample_inds);
    sleapc__free(f->channel_inds);
    sleapc__free(f->order);
    size_t n = (size_t)need;
    f->peaks = sleapc__malloc(n * 2 * sizeof(float));
    f->vals = sleapc__malloc(n * sizeof(float));
    f->sample_inds = sleapc__malloc(n * sizeof(int32_t));
    f->channel_inds = sleapc__malloc(n * sizeof(int32_t));
    f->order = sleapc__malloc(n * sizeof(int64_t));
    f->cap = need;
    if (!f->peaks || !f->vals || !f->sample_inds || !f->channel_inds || !f->order) {
        f->cap = 0;
        return sleapc__fail(SLEAPC_ERR_NOMEM, "centroids: out of memory");
    }
    return SLEAPC_OK;
}

/* Stable order of idx[0..n) by descending vals (torch.topk sorted=True; its
 * order among exact ties is implementation-defined, this keeps peak order). */
static void sort_desc(int64_t *idx, int64_t n, const float *vals)
{
    for (int64_t i = 1; i < n; i++) {
        int64_t v = idx[i], j = i;
        while (j > 0 && vals[idx[j - 1]] < vals[v]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

/* The peaks (map cells) the backend found in the last run; *found false
 * when the run brought the maps back instead. */
static sleapc_status device_peaks(sleapc_centroid_finder *f, int64_t b, int64_t *n_peaks,
                                  bool *found)
{
    sleapc_stage_local_peaks lp;
    sleapc_status st = sleapc__stage_local_peaks(&f->stage, b, f->channels, &lp, found);
    if (st || !*found)
        return st;
    st = grow(f, lp.n > 0 ? lp.n : 1);
    if (st)
        return st;
    sleapc__stage_local_peaks_copy(&lp, f->peaks, f->vals, f->sample_inds, f->channel_inds);
    *n_peaks = lp.n;
    return SLEAPC_OK;
}

/* The peaks (map cells) of the maps the last run brought back. */
static sleapc_status host_peaks(sleapc_centroid_finder *f, int64_t b, int64_t *n_peaks)
{
    const sleapc_tensor *cms = NULL;
    sleapc_status st = sleapc__stage_head(&f->stage, HEAD, false, &cms);
    if (st)
        return st;
    int64_t mh = cms->shape[2], mw = cms->shape[3];
    int64_t bound = sleapc__peaks_local_max_count(b, cms->shape[1], mh, mw);
    if (bound < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "centroids: map too large");
    st = grow(f, bound > 0 ? bound : 1);
    if (st)
        return st;
    return f->stage.convention->find_local(cms->data, b, cms->shape[1], mh, mw, f->threshold,
                                           f->refine_k, f->stage.flat_tops, f->cap, f->peaks,
                                           f->vals, f->sample_inds, f->channel_inds, n_peaks);
}

sleapc_status sleapc__centroid_finder_run(sleapc_centroid_finder *f, const uint8_t *frames,
                                          int64_t b, int64_t c, int64_t h, int64_t w,
                                          int64_t n_nodes, int64_t n_classes,
                                          sleapc_layer_outputs *out)
{
    if (f->device == 0 && sleapc__stage_device_local_peaks_due(&f->stage))
        f->device = sleapc__stage_device_local_peaks(&f->stage, HEAD, f->threshold, f->refine_k,
                                                     &f->channels)
                        ? 1
                        : -1;
    sleapc_status st = sleapc__stage_run(&f->stage, frames, b, c, h, w);
    return st ? st : sleapc__centroid_finder_finish(f, b, n_nodes, n_classes, out);
}

sleapc_status sleapc__centroid_finder_finish(sleapc_centroid_finder *f, int64_t b,
                                             int64_t n_nodes, int64_t n_classes,
                                             sleapc_layer_outputs *out)
{
    sleapc_status st = SLEAPC_OK;
    int64_t n_peaks = 0;
    bool found = false;
    if (f->device > 0)
        st = device_peaks(f, b, &n_peaks, &found);
    if (!st && !found)
        st = host_peaks(f, b, &n_peaks);
    if (st)
        return st;
    const sleapc_convention *cv = f->stage.convention;
    const sleapc_preprocess_plan *pl = &f->stage.plan;
    sleapc__coords_undo_stride(f->peaks, n_peaks, sleapc__stage_head_stride(&f->stage, HEAD));
    cv->undo_input_scale(f->peaks, n_peaks, pl->opts.scale);

    /* Slots: max_instances, else the busiest frame's count (at least 1). */
    int64_t slots = f->max_instances;
    if (slots <= 0) {
        slots = 1;
        for (int64_t i = 0, run = 0; i < n_peaks; i++) {
            run = (i > 0 && f->sample_inds[i] == f->sample_inds[i - 1]) ? run + 1 : 1;
            if (run > slots)
                slots = run;
        }
    }
    st = sleapc__layer_outputs_reset(out, b, slots, n_nodes, n_classes);
    if (st)
        return st;
    out->has_centroids = true;
    int64_t start = 0;
    for (int64_t s = 0; s < b; s++) {
        int64_t end = start;
        while (end < n_peaks && f->sample_inds[end] == s)
            end++;
        int64_t count = end - start;
        for (int64_t i = 0; i < count; i++)
            f->order[i] = start + i;
        /* More peaks than slots: the top ones by value, in descending order. */
        if (count > slots) {
            sort_desc(f->order, count, f->vals);
            count = slots;
        }
        for (int64_t i = 0; i < count; i++) {
            int64_t p = f->order[i];
            float *dst = out->centroids + (s * slots + i) * 2;
            dst[0] = f->peaks[2 * p];
            dst[1] = f->peaks[2 * p + 1];
            out->centroid_values[s * slots + i] = f->vals[p];
        }
        sleapc__coords_undo_eff_scale(out->centroids + s * slots * 2, slots, pl->eff_scale);
        out->eff_scale[s] = (float)pl->eff_scale;
        start = end;
    }
    return SLEAPC_OK;
}
