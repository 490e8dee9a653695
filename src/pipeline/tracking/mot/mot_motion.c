/* Motion calibration of the MOT trackers (see mot_motion.h). */
#include "pipeline/tracking/mot/mot_motion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

#define DUPLICATE_IOMIN 0.5
#define ANCHOR_MAX_NN_FRACTION 0.5
#define ANCHOR_RATIO 2.0
#define MIN_ANCHOR_LEN 10

void sleapc__mot_centroid(const mot_video *v, int64_t d, double c[2])
{
    const int K = v->n_nodes;
    const double *kp = v->kp + (size_t)d * K * 2;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    int n = 0;
    for (int k = 0; k < K; k++) {
        const double x = kp[2 * k], y = kp[2 * k + 1];
        if (!isfinite(x) || !isfinite(y))
            continue;
        n++;
        lo[0] = x < lo[0] ? x : lo[0];
        lo[1] = y < lo[1] ? y : lo[1];
        hi[0] = x > hi[0] ? x : hi[0];
        hi[1] = y > hi[1] ? y : hi[1];
    }
    for (int a = 0; a < 2; a++)
        c[a] = n ? 0.5 * (lo[a] + hi[a]) : NAN;
}

void sleapc__mot_frame_steps(const mot_video *v, const mot_calibration *cal, int64_t *out)
{
    for (int64_t f = 0; f < v->n_frames; f++)
        out[f] = f == 0 ? 0
                 : !cal->frames_time_base
                     ? f
                     : out[f - 1] + sleapc__mot_steps_between(v->frame_idx[f] - v->frame_idx[f - 1],
                                                              cal->frame_step);
}

/* np.linalg.norm of a 2-vector difference. */
static double dist2(const double *a, const double *b)
{
    const double dx = a[0] - b[0], dy = a[1] - b[1];
    return sqrt(dx * dx + dy * dy);
}

/* Raw-box intersection over the smaller box (0 for an empty smaller box). */
double sleapc__mot_iomin(const double *a, const double *b)
{
    const double w = fmax(fmin(a[2], b[2]) - fmax(a[0], b[0]), 0.0);
    const double h = fmax(fmin(a[3], b[3]) - fmax(a[1], b[1]), 0.0);
    const double aa = fmax(a[2] - a[0], 0.0) * fmax(a[3] - a[1], 0.0);
    const double ab = fmax(b[2] - b[0], 0.0) * fmax(b[3] - b[1], 0.0);
    const double small = aa < ab ? aa : ab;
    return small > 0 ? w * h / small : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

/* The valid detections, flattened in (frame, input) order. */
typedef struct flat {
    int64_t m, *det, *off, *cnt, *pos, *nxt, *root, *len;
    double *cen, *nn;
    bool *dup;
} flat;

static void flat_free(flat *F)
{
    sleapc__free(F->det);
    sleapc__free(F->off);
    sleapc__free(F->cnt);
    sleapc__free(F->pos);
    sleapc__free(F->nxt);
    sleapc__free(F->root);
    sleapc__free(F->len);
    sleapc__free(F->cen);
    sleapc__free(F->nn);
    sleapc__free(F->dup);
}

static sleapc_status flat_build(const mot_video *v, flat *F)
{
    memset(F, 0, sizeof *F);
    const size_t N = (size_t)(v->n > 0 ? v->n : 1),
                 NF = (size_t)(v->n_frames > 0 ? v->n_frames : 1);
    F->det = sleapc__malloc(N * sizeof *F->det);
    F->pos = sleapc__malloc(N * sizeof *F->pos);
    F->nxt = sleapc__malloc(N * sizeof *F->nxt);
    F->root = sleapc__malloc(N * sizeof *F->root);
    F->len = sleapc__calloc(N, sizeof *F->len);
    F->cen = sleapc__malloc(2 * N * sizeof *F->cen);
    F->nn = sleapc__malloc(N * sizeof *F->nn);
    F->dup = sleapc__calloc(N, sizeof *F->dup);
    F->off = sleapc__malloc(NF * sizeof *F->off);
    F->cnt = sleapc__calloc(NF, sizeof *F->cnt);
    if (!F->det || !F->pos || !F->nxt || !F->root || !F->len || !F->cen || !F->nn || !F->dup ||
        !F->off || !F->cnt) {
        flat_free(F);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    }
    for (int64_t f = 0; f < v->n_frames; f++) {
        F->off[f] = F->m;
        for (int i = 0; i < v->count[f]; i++) {
            const int64_t d = v->first[f] + i;
            if (!v->valid[d])
                continue;
            F->det[F->m] = d;
            F->pos[F->m] = f;
            sleapc__mot_centroid(v, d, F->cen + 2 * F->m);
            F->nxt[F->m] = -1;
            F->nn[F->m] = INFINITY;
            F->m++;
            F->cnt[f]++;
        }
    }
    return SLEAPC_OK;
}

/* _same_frame_pairs: duplicates (IoMin above 0.5) and the nearest
 * non-duplicate same-frame distance. */
static void same_frame(const mot_video *v, flat *F)
{
    for (int64_t f = 0; f < v->n_frames; f++) {
        const int64_t o = F->off[f], k = F->cnt[f];
        if (k < 2)
            continue;
        for (int64_t a = o; a < o + k; a++)
            for (int64_t b = o; b < o + k; b++) {
                if (a == b)
                    continue;
                if (sleapc__mot_iomin(v->raw + 4 * F->det[a], v->raw + 4 * F->det[b]) >
                    DUPLICATE_IOMIN) {
                    F->dup[a] = true;
                    continue;
                }
                const double dd = dist2(F->cen + 2 * a, F->cen + 2 * b);
                if (isfinite(dd) && dd < F->nn[a])
                    F->nn[a] = dd;
            }
    }
}

/* _anchor_links between processed frames f and f + 1. dist: ka * kb. */
static void anchor_links(flat *F, int64_t f, double max_dist, double *dist)
{
    const int64_t oa = F->off[f], ob = F->off[f + 1], ka = F->cnt[f], kb = F->cnt[f + 1];
    for (int64_t r = 0; r < ka; r++)
        for (int64_t c = 0; c < kb; c++) {
            const double dd = dist2(F->cen + 2 * (oa + r), F->cen + 2 * (ob + c));
            dist[r * kb + c] = isfinite(dd) ? dd : INFINITY;
        }
    for (int64_t r = 0; r < ka; r++) {
        const double *row = dist + r * kb;
        int64_t bc = 0;
        for (int64_t c = 1; c < kb; c++)
            bc = row[c] < row[bc] ? c : bc;
        const double d1 = row[bc];
        /* the runner-ups: second smallest of the row and of the column */
        double m1 = INFINITY, m2 = INFINITY;
        for (int64_t c = 0; c < kb; c++) {
            if (row[c] < m1) {
                m2 = m1;
                m1 = row[c];
            } else if (row[c] < m2) {
                m2 = row[c];
            }
        }
        const double row_second = kb < 2 ? INFINITY : m2;
        int64_t br = 0;
        m1 = m2 = INFINITY;
        for (int64_t q = 0; q < ka; q++) {
            const double x = dist[q * kb + bc];
            if (x < dist[br * kb + bc])
                br = q;
            if (x < m1) {
                m2 = m1;
                m1 = x;
            } else if (x < m2) {
                m2 = x;
            }
        }
        const double col_second = ka < 2 ? INFINITY : m2;
        const bool ok = isfinite(d1) && br == r && d1 < max_dist &&
                        row_second >= ANCHOR_RATIO * d1 && row_second > d1 &&
                        col_second >= ANCHOR_RATIO * d1 && col_second > d1 && !F->dup[oa + r] &&
                        !F->dup[ob + bc];
        if (ok)
            F->nxt[oa + r] = ob + bc;
    }
}

sleapc_status sleapc__mot_anchors(const mot_video *v, const mot_calibration *cal, mot_anchors *A)
{
    memset(A, 0, sizeof *A);
    A->p95 = A->p99 = NAN;
    flat F;
    sleapc_status st = flat_build(v, &F);
    if (st)
        return st;
    int64_t kmax = 1;
    for (int64_t f = 0; f < v->n_frames; f++)
        kmax = F.cnt[f] > kmax ? F.cnt[f] : kmax;
    const size_t NF = (size_t)(v->n_frames > 0 ? v->n_frames : 1);
    const size_t M = (size_t)(F.m > 0 ? F.m : 1);
    double *buf = sleapc__malloc(M * sizeof *buf);
    double *dist = sleapc__malloc((size_t)kmax * (size_t)kmax * sizeof *dist);
    int64_t *steps = sleapc__malloc(NF * sizeof *steps);
    int64_t *anchor = sleapc__malloc(M * sizeof *anchor);
    if (!buf || !dist || !steps || !anchor) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        sleapc__free(steps);
        sleapc__free(anchor);
        goto done;
    }
    sleapc__mot_frame_steps(v, cal, steps);
    same_frame(v, &F);
    int64_t n = 0;
    for (int64_t a = 0; a < F.m; a++)
        if (isfinite(F.nn[a]))
            buf[n++] = F.nn[a];
    double nn = NAN;
    if (n) {
        qsort(buf, (size_t)n, sizeof *buf, cmp_double);
        nn = n % 2 ? buf[n / 2] : (buf[n / 2 - 1] + buf[n / 2]) / 2.0;
    }
    /* without any same-frame pair a link has no competitor: no gate */
    const double max_dist = isfinite(nn) ? ANCHOR_MAX_NN_FRACTION * nn : INFINITY;
    for (int64_t f = 0; f + 1 < v->n_frames; f++)
        if (F.cnt[f] > 0 && F.cnt[f + 1] > 0)
            anchor_links(&F, f, max_dist, dist);
    /* chains run forward in time, one predecessor each (mutual nearest) */
    for (int64_t a = 0; a < F.m; a++)
        F.root[a] = a;
    for (int64_t a = 0; a < F.m; a++)
        if (F.nxt[a] >= 0)
            F.root[F.nxt[a]] = F.root[a];
    for (int64_t a = 0; a < F.m; a++)
        F.len[F.root[a]]++;
    /* anchors numbered in the order of their first detection */
    for (int64_t a = 0; a < F.m; a++) {
        const bool kept = F.len[F.root[a]] >= MIN_ANCHOR_LEN;
        if (kept && F.root[a] == a)
            anchor[a] = A->n_anchors++;
        anchor[a] = kept ? anchor[F.root[a]] : -1;
    }
    n = 0;
    for (int64_t a = 0; a < F.m; a++) {
        if (F.nxt[a] < 0 || anchor[a] < 0)
            continue;
        const int64_t f = F.pos[a];
        buf[n++] = dist2(F.cen + 2 * F.nxt[a], F.cen + 2 * a) / (double)(steps[f + 1] - steps[f]);
    }
    if (n) {
        qsort(buf, (size_t)n, sizeof *buf, cmp_double);
        A->p95 = sleapc__mot_quantile_sorted(buf, n, 0.95);
        A->p99 = sleapc__mot_quantile_sorted(buf, n, 0.99);
    }
    /* handed over: the flattened detections, their duplicate flags */
    A->m = F.m;
    A->det = F.det;
    A->pos = F.pos;
    A->dup = F.dup;
    A->anchor = anchor;
    A->steps = steps;
    A->last_step = v->n_frames > 0 ? steps[v->n_frames - 1] : 0;
    F.det = F.pos = NULL;
    F.dup = NULL;
done:
    sleapc__free(buf);
    sleapc__free(dist);
    flat_free(&F);
    return st;
}

void sleapc__mot_anchors_free(mot_anchors *A)
{
    sleapc__free(A->det);
    sleapc__free(A->pos);
    sleapc__free(A->dup);
    sleapc__free(A->anchor);
    sleapc__free(A->steps);
    memset(A, 0, sizeof *A);
}

sleapc_status sleapc__mot_step_quantiles(const mot_video *v, const mot_calibration *cal,
                                         double *p95, double *p99)
{
    mot_anchors A;
    const sleapc_status st = sleapc__mot_anchors(v, cal, &A);
    *p95 = A.p95;
    *p99 = A.p99;
    sleapc__mot_anchors_free(&A);
    return st;
}
