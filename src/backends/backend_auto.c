/* "auto": every backend that can run the graph at the requested precision,
 * timed on the first input shape that costs real work, the fastest kept.
 *
 * One decision for the life of the backend: the losers are destroyed as soon
 * as it is made, because each holds its own packed weights and activation
 * buffers sized for the batch (keeping three would triple the memory), and a
 * predictor runs one steady shape per stage (a last, shorter batch aside),
 * where re-measuring would only cost time. Shapes too small to tell the
 * backends apart (the one-pixel-per-stride check a stage runs at creation)
 * are served by the best-scoring candidate without deciding. */
#include "backends/backend_auto.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/mem_budget.h"
#include "model/graph_input.h"

#define MAX_CANDIDATES 8
/* Below this much work per batch fixed per-call costs dominate: a timing says
 * nothing about the real shapes, and whichever backend runs it costs little. */
#define MIN_DECIDING_FLOP 0.1e9
/* Timed passes per candidate at most, after its warmup; the best one counts
 * (a shared machine only ever adds time). */
#define MAX_ROUNDS 3
/* A candidate this much slower than the best is dropped after the second
 * round (DROP_FIRST) and the third (DROP_LATER). Never after the first: one
 * pass that a burst of load elsewhere slowed would decide alone (measured:
 * on a loaded machine auto dropped native after one slow pass and ran the
 * top-down centroid stage on oneDNN, 0.74x the best backend's FPS). */
#define DROP_FIRST 1.5
#define DROP_LATER 1.1

typedef struct auto_state {
    sleapc_backend *cand[MAX_CANDIDATES];  /* best score first; NULL once destroyed */
    int n;
    int chosen;                            /* -1 until the measurement */
    const sleapc_graph *g;                 /* borrowed: the model outlives the backend */
    sleapc_tensor_map scratch;             /* the losers' outputs while timing */
} auto_state;

static const struct sleapc_backend_ops auto_ops;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static sleapc_backend *serving(const auto_state *s)
{
    return s->cand[s->chosen >= 0 ? s->chosen : 0];
}

static void keep_only(auto_state *s, int keep)
{
    for (int i = 0; i < s->n; i++)
        if (i != keep && s->cand[i]) {
            sleapc__backend_destroy(s->cand[i]);
            s->cand[i] = NULL;
        }
    s->chosen = keep;
}

static sleapc_status timed_forward(sleapc_backend *be, const sleapc_tensor *x,
                                   sleapc_tensor_map *out, double *ms)
{
    sleapc__tensor_map_clear(out);
    double t0 = now_s();
    sleapc_status st = be->ops->forward(be, x, out);
    *ms = (now_s() - t0) * 1e3;
    return st;
}

/* Warm up every candidate on x's shape, time them in turns (round robin, so
 * a burst of load elsewhere does not fall on one of them only), drop the
 * clearly slower ones after each round, keep the fastest. */
static sleapc_status decide(auto_state *s, const sleapc_tensor *x)
{
    double t_start = now_s();
    double best_ms[MAX_CANDIDATES];
    bool alive[MAX_CANDIDATES];
    char failed[512] = "";
    size_t flen = 0;
    int n_alive = 0;
    sleapc_status first_err = SLEAPC_OK;
    /* Every candidate holds its plan while they are timed: one that would
     * not fit beside those planned already is left out, unmeasured. */
    int64_t need = sleapc__backend_mem_need(s->g, x->shape);
    for (int i = 0; i < s->n; i++) {
        best_ms[i] = -1;
        sleapc_backend *be = s->cand[i];
        sleapc_status st = n_alive > 0 && need > 0
                               ? sleapc__mem_check(need * (n_alive + 1), "timing another backend")
                               : SLEAPC_OK;
        if (!st)
            st = be->ops->warmup(be, x->shape);
        alive[i] = st == SLEAPC_OK;
        if (st) {
            if (!first_err)
                first_err = st;
            if (flen < sizeof failed - 1)
                flen += (size_t)snprintf(failed + flen, sizeof failed - flen, ", %s failed: %s",
                                         be->ops->name, sleapc__last_error());
        }
        n_alive += alive[i];
    }
    if (n_alive == 0)
        return sleapc__wrap(first_err, "backend auto: no backend runs this shape");
    double best = 0;
    for (int r = 0; r < MAX_ROUNDS && n_alive > 1; r++) {
        for (int i = 0; i < s->n; i++) {
            if (!alive[i])
                continue;
            double ms;
            sleapc_status st = timed_forward(s->cand[i], x, &s->scratch, &ms);
            if (st) {
                alive[i] = false;
                n_alive--;
                if (flen < sizeof failed - 1)
                    flen += (size_t)snprintf(failed + flen, sizeof failed - flen,
                                             ", %s failed: %s", s->cand[i]->ops->name,
                                             sleapc__last_error());
                continue;
            }
            if (best_ms[i] < 0 || ms < best_ms[i])
                best_ms[i] = ms;
        }
        best = 0;
        for (int i = 0; i < s->n; i++)
            if (alive[i] && (best == 0 || best_ms[i] < best))
                best = best_ms[i];
        double drop = r == 0 ? INFINITY : r == 1 ? DROP_FIRST : DROP_LATER;
        for (int i = 0; i < s->n; i++)
            if (alive[i] && n_alive > 1 && best_ms[i] > drop * best) {
                alive[i] = false;
                n_alive--;
            }
    }
    sleapc__tensor_map_clear(&s->scratch);
    int win = -1;
    for (int i = 0; i < s->n; i++)
        if (alive[i] && (win < 0 || (best_ms[i] >= 0 && best_ms[i] < best_ms[win])))
            win = i;
    if (win < 0)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend auto: every backend failed%s", failed);

    char times[256] = "";
    size_t tlen = 0;
    for (int i = 0; i < s->n && tlen < sizeof times - 1; i++)
        if (best_ms[i] >= 0)
            tlen += (size_t)snprintf(times + tlen, sizeof times - tlen, "%s%s %.*f ms",
                                     tlen ? ", " : "", s->cand[i]->ops->name,
                                     best_ms[i] < 10 ? 2 : best_ms[i] < 100 ? 1 : 0, best_ms[i]);
    if (tlen == 0)
        snprintf(times, sizeof times, "the only one that ran");
    sleapc__log(SLEAPC_LOG_INFO,
                "backend auto: chose %s (%s per batch of %lld at %lldx%lldx%lld%s; measured in "
                "%.2f s)",
                s->cand[win]->ops->name, times, (long long)x->shape[0], (long long)x->shape[1],
                (long long)x->shape[2], (long long)x->shape[3], failed, now_s() - t_start);
    sleapc__log(SLEAPC_LOG_INFO, "backend: %s", s->cand[win]->ops->name);
    keep_only(s, win);
    return SLEAPC_OK;
}

static bool deciding_shape(const auto_state *s, const int64_t shape[4])
{
    return sleapc__graph_flops(s->g, shape[0], shape[2], shape[3]) >= MIN_DECIDING_FLOP;
}

static sleapc_status auto_warmup(sleapc_backend *be, const int64_t shape[4])
{
    auto_state *s = be->impl;
    if (s->chosen >= 0 || !deciding_shape(s, shape))
        return serving(s)->ops->warmup(serving(s), shape);
    /* The timing needs an input: zeros run the same kernels as any image. */
    size_t n = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
    uint8_t *zeros = sleapc__calloc(n ? n : 1, 1);
    if (!zeros)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "backend auto: out of memory");
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                       .shape = {shape[0], shape[1], shape[2], shape[3]}, .data = zeros};
    sleapc_status st = decide(s, &x);
    sleapc__free(zeros);
    return st;
}

static sleapc_status auto_forward(sleapc_backend *be, const sleapc_tensor *x,
                                  sleapc_tensor_map *out)
{
    auto_state *s = be->impl;
    if (s->chosen < 0 && x->ndim == 4 && deciding_shape(s, x->shape)) {
        /* A bad input is the caller's error, not a reason to drop backends. */
        sleapc_status st = sleapc__graph_input_check(x, s->g->in_channels);
        if (!st)
            st = decide(s, x);
        if (st)
            return st;
    }
    sleapc_backend *b = serving(s);
    return b->ops->forward(b, x, out);
}

static sleapc_status auto_set_n_threads(sleapc_backend *be, int n_threads)
{
    auto_state *s = be->impl;
    for (int i = 0; i < s->n; i++) {
        sleapc_backend *c = s->cand[i];
        if (c && c->ops->set_n_threads) {
            sleapc_status st = c->ops->set_n_threads(c, n_threads);
            if (st)
                return st;
        }
    }
    return SLEAPC_OK;
}

static void auto_destroy(sleapc_backend *be)
{
    auto_state *s = be->impl;
    keep_only(s, -1);
    sleapc__free(s);
    sleapc__free(be);
}

static const struct sleapc_backend_ops auto_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "auto",
    .forward = auto_forward,
    .warmup = auto_warmup,
    .destroy = auto_destroy,
    .set_n_threads = auto_set_n_threads,
};

const char *sleapc__backend_auto_serving(const sleapc_backend *be)
{
    return be && be->ops == &auto_ops ? serving(be->impl)->ops->name : NULL;
}

sleapc_status sleapc__backend_auto_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                          sleapc_backend **out)
{
    *out = NULL;
    auto_state st0 = {.chosen = -1, .g = g};
    bool used[MAX_CANDIDATES] = {0};
    char why[1024] = "";
    size_t len = 0;
    sleapc_status st = SLEAPC_OK;
    /* Best score first: it serves the shapes too small to measure. */
    for (;;) {
        int best = -1, best_score = 0;
        for (int i = 0; i < sleapc__backend_count() && i < MAX_CANDIDATES; i++) {
            int sc = used[i] ? 0 : sleapc__backend_factory(i)->score();
            if (sc > best_score) {
                best = i;
                best_score = sc;
            }
        }
        if (best < 0)
            break;
        used[best] = true;
        sleapc_backend *c = NULL;
        st = sleapc__backend_create_from(sleapc__backend_factory(best), g, opts, &c);
        if (st == SLEAPC_ERR_UNSUPPORTED) {
            if (len < sizeof why - 1)
                len += (size_t)snprintf(why + len, sizeof why - len, "%s%s", len ? "; " : "",
                                        sleapc__last_error());
            st = SLEAPC_OK;
            continue;
        }
        if (st)
            break;
        /* Every candidate must give the same kind of outputs. */
        if (st0.n > 0 && c->baked_postproc != st0.cand[0]->baked_postproc) {
            sleapc__backend_destroy(c);
            continue;
        }
        st0.cand[st0.n++] = c;
    }
    if (!st && st0.n == 0)
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "create backend auto: no backend can run this here%s%s",
                          len ? ": " : "", why);
    if (st || st0.n == 1) {
        /* One candidate needs no measuring: it is the backend itself. */
        *out = st ? NULL : st0.cand[0];
        if (!st)
            sleapc__log(SLEAPC_LOG_INFO, "backend: %s", st0.cand[0]->ops->name);
        if (st)
            for (int i = 0; i < st0.n; i++)
                sleapc__backend_destroy(st0.cand[i]);
        return st;
    }
    auto_state *s = sleapc__calloc(1, sizeof *s);
    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    if (!s || !be) {
        sleapc__free(s);
        sleapc__free(be);
        for (int i = 0; i < st0.n; i++)
            sleapc__backend_destroy(st0.cand[i]);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create backend auto: out of memory");
    }
    *s = st0;
    be->ops = &auto_ops;
    memcpy(be->device, s->cand[0]->device, sizeof be->device);
    be->baked_postproc = s->cand[0]->baked_postproc;
    be->impl = s;
    *out = be;
    return SLEAPC_OK;
}
