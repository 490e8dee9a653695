/* Identity linking (see mot_link.h): the tracked detections and their
 * identities as linking.py's _Linker collects them, the shared gate, and
 * the final tracks written back. */
#include "pipeline/tracking/mot/mot_link.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_motion.h"

#define DEFAULT_BODY_SIZE 50.0
#define GATE_STEP_MULT 3.0
#define GATE_LINEAR_STEPS 10
#define GATE_MIN_STEP_BODY 0.05
#define DUPLICATE_IOMIN 0.5
#define DUPLICATE_CENTROID_BODY 0.3

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

sleapc_status sleapc__mot_ilist_push(mot_ilist *l, int x)
{
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 8;
        int *v = sleapc__realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return nomem();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return SLEAPC_OK;
}

double sleapc__mot_link_radius(const mot_linker *L, double gap)
{
    /* linear up to 10 steps, then a random walk */
    const double eff =
        gap <= GATE_LINEAR_STEPS ? gap : sqrt(GATE_LINEAR_STEPS * (gap > 0 ? gap : 0.0));
    return L->body + GATE_STEP_MULT * L->step_scale * eff;
}

bool sleapc__mot_link_gate_ok(const mot_linker *L, double gap, double dist)
{
    const bool gated = gap <= L->gate_frames && isfinite(L->step_scale);
    return !gated || dist <= sleapc__mot_link_radius(L, gap > 0 ? gap : 0.0);
}

void sleapc__mot_link_extent(mot_linker *L, int k)
{
    const mot_ilist *mem = &L->mem[k];
    L->first[k] = L->step[mem->v[0]];
    L->last[k] = L->step[mem->v[mem->n - 1]];
    int a = -1, b = -1;
    for (int i = 0; i < mem->n; i++)
        if (L->valid_c[mem->v[i]]) {
            a = a < 0 ? mem->v[i] : a;
            b = mem->v[i];
        }
    if (a >= 0) {
        memcpy(L->start_c + 2 * k, L->cen + 2 * a, 2 * sizeof(double));
        memcpy(L->end_c + 2 * k, L->cen + 2 * b, 2 * sizeof(double));
    }
}

static void linker_free(mot_linker *L)
{
    sleapc__free(L->det);
    sleapc__free(L->pos);
    sleapc__free(L->step);
    sleapc__free(L->cen);
    sleapc__free(L->score);
    sleapc__free(L->valid_c);
    sleapc__free(L->label);
    sleapc__free(L->owner);
    sleapc__free(L->dup_keys);
    sleapc__free(L->dup_a);
    sleapc__free(L->dup_b);
    sleapc__free(L->vec);
    sleapc__free(L->gated);
    sleapc__free(L->in_event);
    sleapc__free(L->ov_a);
    sleapc__free(L->ov_b);
    for (int k = 0; k < L->m; k++) {
        if (L->mem)
            sleapc__free(L->mem[k].v);
        if (L->rows)
            sleapc__free(L->rows[k].v);
        if (L->cols)
            sleapc__free(L->cols[k].v);
    }
    sleapc__free(L->mem);
    sleapc__free(L->rows);
    sleapc__free(L->cols);
    sleapc__free(L->name_id);
    sleapc__free(L->name_rank);
    sleapc__free(L->alive);
    sleapc__free(L->first);
    sleapc__free(L->last);
    sleapc__free(L->start_c);
    sleapc__free(L->end_c);
    sleapc__free(L->n_dets);
    sleapc__free(L->pi);
    sleapc__free(L->pj);
    sleapc__free(L->pgap);
    sleapc__free(L->pdist);
    sleapc__free(L->pscore);
    sleapc__free(L->pwin);
    sleapc__free(L->plive);
    sleapc__free(L->papp);
    sleapc__free(L->pspat);
    sleapc__free(L->verdict);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

/* Same-frame duplicates among the tracked detections [o, o + k): one
 * animal detected twice (raw boxes overlapping by half the smaller one, or
 * centroids closer than 0.3 body). */
static sleapc_status frame_dups(mot_linker *L, const mot_video *v, int o, int k, int *cap)
{
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++) {
            const int64_t da = L->det[o + a], db = L->det[o + b];
            if (!v->valid[da] || !v->valid[db])
                continue;
            /* single-node poses have no extent: centroid distance only */
            const bool sized = v->n_visible[da] >= 2 && v->n_visible[db] >= 2;
            const double io = sized ? sleapc__mot_iomin(v->raw + 4 * da, v->raw + 4 * db) : 0.0;
            const double *ca = L->cen + 2 * (o + a), *cb = L->cen + 2 * (o + b);
            const double dx = ca[0] - cb[0], dy = ca[1] - cb[1];
            const double dist = sqrt(dx * dx + dy * dy);
            if (!(io >= DUPLICATE_IOMIN || dist < DUPLICATE_CENTROID_BODY * L->body))
                continue;
            if (L->n_dups == *cap) {
                const int c = *cap ? 2 * *cap : 64;
                int *na = sleapc__realloc(L->dup_a, (size_t)c * sizeof *na);
                if (na)
                    L->dup_a = na;
                int *nb = sleapc__realloc(L->dup_b, (size_t)c * sizeof *nb);
                if (nb)
                    L->dup_b = nb;
                if (!na || !nb)
                    return nomem();
                *cap = c;
            }
            L->dup_a[L->n_dups] = o + a;
            L->dup_b[L->n_dups++] = o + b;
        }
    return SLEAPC_OK;
}

/* The tracked detections of v, in time order, with identities by first
 * appearance (label values: ids). */
static sleapc_status collect(mot_linker *L, const mot_video *v, const sleapc_mot_params *p,
                             const mot_calibration *cal, const int *label)
{
    int64_t n = 0;
    int max_id = -1;
    for (int64_t d = 0; d < v->n; d++)
        if (label[d] >= 0) {
            n++;
            max_id = label[d] > max_id ? label[d] : max_id;
        }
    const size_t N = (size_t)(n > 0 ? n : 1), NF = (size_t)(v->n_frames > 0 ? v->n_frames : 1);
    L->det = sleapc__malloc(N * sizeof *L->det);
    L->pos = sleapc__malloc(N * sizeof *L->pos);
    L->step = sleapc__malloc(N * sizeof *L->step);
    L->cen = sleapc__malloc(2 * N * sizeof *L->cen);
    L->score = sleapc__malloc(N * sizeof *L->score);
    L->valid_c = sleapc__malloc(N * sizeof *L->valid_c);
    L->label = sleapc__malloc(N * sizeof *L->label);
    L->owner = sleapc__malloc(N * sizeof *L->owner);
    int64_t *steps = sleapc__malloc(NF * sizeof *steps);
    int *index = sleapc__malloc((size_t)(max_id + 2) * sizeof *index);
    L->gated = sleapc__malloc(N * sizeof *L->gated);
    L->in_event = sleapc__malloc(N * sizeof *L->in_event);
    L->dim = v->emb ? v->emb_dim : 0;
    if (L->dim > 0)
        L->vec = sleapc__calloc(N * (size_t)L->dim, sizeof *L->vec);
    sleapc_status st = SLEAPC_OK;
    if (!L->det || !L->pos || !L->step || !L->cen || !L->score || !L->valid_c || !L->label ||
        !L->owner || !steps || !index || !L->gated || !L->in_event || (L->dim > 0 && !L->vec)) {
        st = nomem();
        goto done;
    }
    for (int i = 0; i <= max_id; i++)
        index[i] = -1;
    sleapc__mot_frame_steps(v, cal, steps);
    int dup_cap = 0;
    for (int64_t f = 0; f < v->n_frames && !st; f++) {
        const int o = L->n;
        for (int i = 0; i < v->count[f]; i++) {
            const int64_t d = v->first[f] + i;
            if (label[d] < 0)
                continue;
            if (index[label[d]] < 0)
                index[label[d]] = L->m++;
            const int k = L->n++;
            L->det[k] = d;
            L->pos[k] = f;
            L->step[k] = (double)steps[f];
            sleapc__mot_centroid(v, d, L->cen + 2 * k);
            L->valid_c[k] = isfinite(L->cen[2 * k]) && isfinite(L->cen[2 * k + 1]);
            L->score[k] = v->score[d];
            L->label[k] = L->owner[k] = index[label[d]];
        }
        if (L->n > o)
            st = sleapc__mot_link_gate_frame(L, v, p, f, o, L->n - o);
        if (!st && L->n - o >= 2)
            st = frame_dups(L, v, o, L->n - o, &dup_cap);
    }
    if (st)
        goto done;
    const size_t M = (size_t)(L->m > 0 ? L->m : 1);
    L->name_id = sleapc__malloc(M * sizeof *L->name_id);
    L->mem = sleapc__calloc(M, sizeof *L->mem);
    L->rows = sleapc__calloc(M, sizeof *L->rows);
    L->cols = sleapc__calloc(M, sizeof *L->cols);
    L->dup_keys = sleapc__malloc((size_t)(L->n_dups > 0 ? L->n_dups : 1) * sizeof *L->dup_keys);
    if (!L->name_id || !L->mem || !L->rows || !L->cols || !L->dup_keys) {
        st = nomem();
        goto done;
    }
    for (int i = 0; i <= max_id; i++)
        if (index[i] >= 0)
            L->name_id[index[i]] = i;
    for (int k = 0; k < L->n && !st; k++)
        st = sleapc__mot_ilist_push(&L->mem[L->label[k]], k);
    for (int i = 0; i < L->n_dups; i++)
        L->dup_keys[i] = (int64_t)L->dup_a[i] * (L->n > 0 ? L->n : 1) + L->dup_b[i];
    qsort(L->dup_keys, (size_t)L->n_dups, sizeof *L->dup_keys, cmp_i64);
done:
    sleapc__free(steps);
    sleapc__free(index);
    return st;
}

typedef struct named {
    char name[24];
    int k;
} named;

static int cmp_names(const void *a, const void *b)
{
    const named *x = a, *y = b;
    const int c = strcmp(x->name, y->name);
    return c ? c : (x->k > y->k) - (x->k < y->k);
}

/* Rank of each identity's track name as a string ("track_10" before
 * "track_2"), the linker's last tie-break. */
static sleapc_status rank_names(mot_linker *L)
{
    const size_t M = (size_t)(L->m > 0 ? L->m : 1);
    named *names = sleapc__malloc(M * sizeof *names);
    L->name_rank = sleapc__malloc(M * sizeof *L->name_rank);
    if (!names || !L->name_rank) {
        sleapc__free(names);
        return nomem();
    }
    for (int k = 0; k < L->m; k++) {
        snprintf(names[k].name, sizeof names[k].name, "track_%d", L->name_id[k]);
        names[k].k = k;
    }
    qsort(names, (size_t)L->m, sizeof *names, cmp_names);
    for (int r = 0; r < L->m; r++)
        L->name_rank[names[r].k] = r;
    sleapc__free(names);
    return SLEAPC_OK;
}

static sleapc_status identities(mot_linker *L)
{
    const size_t M = (size_t)(L->m > 0 ? L->m : 1);
    L->alive = sleapc__malloc(M * sizeof *L->alive);
    L->first = sleapc__malloc(M * sizeof *L->first);
    L->last = sleapc__malloc(M * sizeof *L->last);
    L->start_c = sleapc__malloc(2 * M * sizeof *L->start_c);
    L->end_c = sleapc__malloc(2 * M * sizeof *L->end_c);
    L->n_dets = sleapc__malloc(M * sizeof *L->n_dets);
    if (!L->alive || !L->first || !L->last || !L->start_c || !L->end_c || !L->n_dets)
        return nomem();
    for (int k = 0; k < L->m; k++) {
        L->alive[k] = L->mem[k].n > 0;
        L->first[k] = INFINITY;
        L->last[k] = -INFINITY;
        L->start_c[2 * k] = L->start_c[2 * k + 1] = NAN;
        L->end_c[2 * k] = L->end_c[2 * k + 1] = NAN;
        L->n_dets[k] = L->mem[k].n;
        if (L->mem[k].n)
            sleapc__mot_link_extent(L, k);
    }
    return rank_names(L);
}

/* final_tracks and the write-back: each live identity takes the track its
 * earliest detection carried before the closed set, unless an earlier
 * identity took it; detections of no live identity are untracked. */
static sleapc_status write_back(const mot_linker *L, int *label, double *tscore)
{
    const size_t M = (size_t)(L->m > 0 ? L->m : 1);
    int *first_det = sleapc__malloc(M * sizeof *first_det);
    int *order = sleapc__malloc(M * sizeof *order);
    int *final = sleapc__malloc(M * sizeof *final);
    bool *used = sleapc__calloc(M, sizeof *used);
    if (!first_det || !order || !final || !used) {
        sleapc__free(first_det);
        sleapc__free(order);
        sleapc__free(final);
        sleapc__free(used);
        return nomem();
    }
    int n_live = 0;
    for (int k = 0; k < L->m; k++) {
        final[k] = -1;
        if (!L->alive[k] || L->mem[k].n == 0)
            continue;
        int lo = L->mem[k].v[0];
        for (int i = 1; i < L->mem[k].n; i++)
            lo = L->mem[k].v[i] < lo ? L->mem[k].v[i] : lo;
        first_det[k] = lo;
        /* insertion by earliest member (distinct detections: no ties) */
        int at = n_live++;
        while (at > 0 && first_det[order[at - 1]] > lo) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = k;
    }
    for (int r = 0; r < n_live; r++) {
        const int k = order[r];
        int o = L->owner[first_det[k]];
        if (o < 0 || used[o])
            o = k;
        final[k] = o;
        used[o] = true;
    }
    for (int d = 0; d < L->n; d++) {
        const int k = L->label[d];
        if (k < 0 || final[k] < 0) {
            label[L->det[d]] = -1;
            tscore[L->det[d]] = 0.0;
        } else {
            label[L->det[d]] = L->name_id[final[k]];
        }
    }
    sleapc__free(first_det);
    sleapc__free(order);
    sleapc__free(final);
    sleapc__free(used);
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_link(const mot_video *v, const sleapc_mot_params *p,
                               const mot_calibration *cal, int *label, double *tscore)
{
    mot_linker L = {0};
    L.track_buffer = p->track_buffer;
    L.gate_frames = (double)p->link_spatial_gate_frames;
    L.body = isfinite(p->body_size) && p->body_size > 0 ? p->body_size : cal->body_size;
    if (!isfinite(L.body) || L.body <= 0)
        L.body = DEFAULT_BODY_SIZE;
    /* the gate's motion scale, floored so a still clip keeps a usable gate */
    L.step_scale = isfinite(cal->step_p95) ? fmax(cal->step_p95, GATE_MIN_STEP_BODY * L.body) : NAN;
    sleapc_status st = collect(&L, v, p, cal, label);
    if (!st && L.n == 0) {
        linker_free(&L);
        return SLEAPC_OK; /* nothing tracked: nothing to link */
    }
    /* appearance decides where it is calibrated for linking and some
     * vector passed the gallery gate */
    sleapc__mot_link_rule_tables(&L, &cal->app);
    bool decidable = false, any_gated = false;
    for (int q = 0; q < MOT_LINK_QUERY_LEN; q++)
        decidable = decidable || isfinite(L.thresh_n[q]);
    for (int d = 0; d < L.n; d++)
        any_gated = any_gated || L.gated[d];
    const bool appearance = cal->app.for_linking && decidable && any_gated;
    int n_swaps = 0;
    if (!st && appearance && p->link_swap_correction)
        st = sleapc__mot_link_swaps(&L, &n_swaps);
    if (!st) {
        /* the owners are the identities after swap correction */
        memcpy(L.owner, L.label, (size_t)L.n * sizeof *L.owner);
        L.use_app = appearance;
        st = identities(&L);
    }
    const int n_before = L.m;
    int n_merges = 0, n_forced = 0, n_untracked = 0;
    if (!st)
        st = sleapc__mot_link_open(&L, &n_merges);
    int n_alive = 0;
    for (int k = 0; k < L.m; k++)
        n_alive += L.alive[k];
    if (!st && p->max_tracks >= 1 && n_alive > p->max_tracks)
        st = sleapc__mot_link_close(&L, p->max_tracks, &n_forced, &n_untracked);
    if (!st)
        st = write_back(&L, label, tscore);
    if (!st) {
        n_alive = 0;
        for (int k = 0; k < L.m; k++)
            n_alive += L.alive[k] && L.mem[k].n > 0;
        sleapc__log(SLEAPC_LOG_INFO,
                    "identity linking: %d -> %d identities (%d gap links, %d forced, %d swaps "
                    "corrected, %d detections untracked)",
                    n_before, n_alive, n_merges, n_forced, n_swaps, n_untracked);
    }
    linker_free(&L);
    return st;
}
