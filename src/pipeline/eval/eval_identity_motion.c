/* motion_diagnostic (sleap-nn evaluation.py): how far one animal moves per
 * frame relative to its size, to tell continuous video from sparse samples.
 * A tracked detection's centre is the mean of its visible nodes, its size
 * the larger side of their box; a track is followed per (video, track name),
 * and a step over k frames counts as step / k. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "pipeline/eval/eval_identity.h"
#include "pipeline/eval/eval_numpy.h"

const char *sleapc__id_video_key(const sleapc_ev_labels *l, int video)
{
    if (video < 0 || video >= l->n_videos)
        return "unknown";
    const sleapc_ev_video *v = &l->videos[video];
    /* an embedded video's original, else the file as sleap-io finds it */
    return v->root_filename ? v->root_filename : v->found ? v->found : v->filename;
}

typedef struct fref {
    const char *video;
    int64_t frame_idx, order;
} fref;

static int cmp_fref(const void *a, const void *b)
{
    const fref *x = a, *y = b;
    const int c = strcmp(x->video, y->video);
    if (c)
        return c;
    if (x->frame_idx != y->frame_idx)
        return (x->frame_idx > y->frame_idx) - (x->frame_idx < y->frame_idx);
    return (x->order > y->order) - (x->order < y->order); /* Python's sort is stable */
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *a, int64_t n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_dbl);
    return sleapc__ev_np_percentile_sorted(a, n, 50.0);
}

/* Python's round(x, n): correctly rounded to n decimals (as printf is). */
static double round_to(double x, int n)
{
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", n, x);
    return strtod(buf, NULL);
}

static sleapc_status put(sleapc_pyobj *d, const char *k, double v)
{
    return sleapc__pyobj_set(d, k, isfinite(v) ? sleapc__pyobj_float(v) : sleapc__pyobj_none());
}

static sleapc_pyobj *result(double step, double size, double ratio, double gap, bool cont,
                            const char *note)
{
    sleapc_pyobj *d = sleapc__pyobj_dict();
    if (!d)
        return NULL;
    sleapc_status st = put(d, "median_step_px", step);
    if (!st)
        st = put(d, "median_size_px", size);
    if (!st)
        st = put(d, "step_over_size", ratio);
    if (!st)
        st = put(d, "median_frame_gap", gap);
    if (!st)
        st = sleapc__pyobj_set(d, "is_continuous", sleapc__pyobj_bool(cont));
    if (!st && note)
        st = sleapc__pyobj_set(d, "note", sleapc__pyobj_str(note));
    if (st) {
        sleapc__pyobj_free(d);
        return NULL;
    }
    return d;
}

sleapc_pyobj *sleapc__id_motion(const sleapc_ev_labels *gt)
{
    const int64_t F = gt->n_frames, T = gt->n_tracks;
    fref *fr = sleapc__malloc(sizeof *fr * (size_t)(F + 1));
    double *steps = sleapc__malloc(sizeof(double) * (size_t)(gt->n_insts + 1));
    double *gaps = sleapc__malloc(sizeof(double) * (size_t)(gt->n_insts + 1));
    double *sizes = sleapc__malloc(sizeof(double) * (size_t)(gt->n_insts + 1));
    /* last detection per (video, track name): one slot per track index,
     * with the video it was in; names shared by two indices share a slot */
    int64_t *last_f = sleapc__malloc(sizeof(int64_t) * (size_t)(T + 1));
    const char **last_v = sleapc__malloc(sizeof(char *) * (size_t)(T + 1));
    double *last_c = sleapc__malloc(sizeof(double) * 2 * (size_t)(T + 1));
    int *slot = sleapc__malloc(sizeof(int) * (size_t)(T + 1));
    sleapc_pyobj *out = NULL;
    if (!fr || !steps || !gaps || !sizes || !last_f || !last_v || !last_c || !slot)
        goto done;
    for (int64_t t = 0; t < T; t++) {
        slot[t] = (int)t;
        for (int64_t u = 0; u < t; u++)
            if (!strcmp(gt->track_names[u], gt->track_names[t])) {
                slot[t] = slot[u];
                break;
            }
        last_v[t] = NULL;
    }
    for (int64_t f = 0; f < F; f++)
        fr[f] = (fref){sleapc__id_video_key(gt, gt->frames[f].video), gt->frames[f].frame_idx, f};
    qsort(fr, (size_t)F, sizeof *fr, cmp_fref);
    int64_t n_steps = 0, n_sizes = 0;
    for (int64_t k = 0; k < F; k++) {
        const sleapc_ev_frame *lf = &gt->frames[fr[k].order];
        for (int64_t i = lf->first; i < lf->first + lf->n; i++) {
            const sleapc_ev_inst *in = &gt->insts[i];
            if (in->track < 0 || in->track >= T)
                continue;
            const double *xy = sleapc__ev_points(gt, i);
            double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY}, sum[2] = {0, 0};
            int nv = 0;
            for (int j = 0; j < in->n_nodes; j++) {
                if (isnan(xy[2 * j]) || isnan(xy[2 * j + 1]))
                    continue;
                for (int c = 0; c < 2; c++) {
                    sum[c] += xy[2 * j + c];
                    lo[c] = fmin(lo[c], xy[2 * j + c]);
                    hi[c] = fmax(hi[c], xy[2 * j + c]);
                }
                nv++;
            }
            if (!nv)
                continue;
            const double cx = sum[0] / nv, cy = sum[1] / nv;
            sizes[n_sizes++] = fmax(hi[0] - lo[0], hi[1] - lo[1]);
            const int s = slot[in->track];
            if (last_v[s] && !strcmp(last_v[s], fr[k].video)) {
                const int64_t gap = lf->frame_idx - last_f[s];
                if (gap > 0) {
                    const double dx = cx - last_c[2 * s], dy = cy - last_c[2 * s + 1];
                    steps[n_steps] = sqrt(dx * dx + dy * dy) / (double)gap;
                    gaps[n_steps++] = (double)gap;
                }
            }
            last_v[s] = fr[k].video;
            last_f[s] = lf->frame_idx;
            last_c[2 * s] = cx;
            last_c[2 * s + 1] = cy;
        }
    }
    if (!n_steps || !n_sizes) {
        out = result(NAN, NAN, NAN, NAN, false, "not enough tracked detections to judge");
        goto done;
    }
    const double step = median(steps, n_steps), size = median(sizes, n_sizes);
    const double gap = median(gaps, n_steps);
    if (size <= 0.0) {
        out = result(round_to(step, 2), size, NAN, gap, false,
                     "detections have no measurable extent (single-node skeleton?) -- cannot "
                     "judge continuity");
        goto done;
    }
    const double ratio = step / size;
    out = result(round_to(step, 2), round_to(size, 2), round_to(ratio, 3), gap, ratio < 0.5, NULL);
done:
    sleapc__free(fr);
    sleapc__free(steps);
    sleapc__free(gaps);
    sleapc__free(sizes);
    sleapc__free(last_f);
    sleapc__free(last_v);
    sleapc__free(last_c);
    sleapc__free(slot);
    return out;
}
