/* "auto": the backend that runs a graph fastest here, among those that can
 * run it at the requested precision.
 *
 * The best-scoring backend is made at once and serves every forward until a
 * choice is made; shapes too small to tell the backends apart (the
 * one-pixel-per-stride check a stage runs at creation) never decide. The
 * first shape that costs real work (the first real batch) decides:
 * - what earlier runs measured for the same graph, input, precision, threads,
 *   CPU and libraries is looked up (auto_cache.h); when every candidate has
 *   been measured the cached winner runs and nothing is timed;
 * - otherwise the candidates not measured yet are made one at a time and
 *   timed against the serving one, in turns; a faster one takes over, the
 *   loser is destroyed at once (each holds its own packed weights and
 *   activations: at most two are ever alive), and what was measured is
 *   cached.
 * Measuring costs time only the run can repay: within a run of known length
 * (sleapc__backend_run_begin) it may take MEASURE_SHARE of the network time
 * the run is expected to need; what does not fit is left to a longer run
 * (or, in the same process, the next run). SLEAPC_AUTO_MEASURE=full measures
 * every candidate whatever the run's length (to fill the cache once for many
 * short clips), =off never measures (the cache or the best-scoring backend).
 * Once a shape has decided, auto hands the chosen backend over as its
 * delegate (backend.h): the layers reach that backend's device ops. */
#include "backends/backend_auto.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/auto_cache.h"
#include "core/alloc.h"
#include "core/cpu_id.h"
#include "core/error.h"
#include "core/threadpool.h"
#include "model/graph_hash.h"
#include "core/mem_budget.h"
#include "core/settings.h"
#include "model/graph_input.h"

#define MAX_CANDIDATES SLEAPC_AUTO_CACHE_MAX
/* Below this much work per batch fixed per-call costs dominate: a timing says
 * nothing about the real shapes, and whichever backend runs it costs little. */
#define MIN_DECIDING_FLOP 0.1e9
/* Timed passes per challenger at most, after its warmup; the best one counts
 * (a shared machine only ever adds time). */
#define MAX_ROUNDS 3
/* A pair this far apart after two rounds is decided without the third. Never
 * after one: a pass that a burst of load elsewhere slowed would decide alone
 * (measured: on a loaded machine auto once dropped native after one slow pass
 * and ran the top-down centroid stage on oneDNN, 0.74x the best FPS). */
#define DROP_AFTER_TWO 1.5
/* The share of a run's expected network time measuring may take: within the
 * 10% a first run may cost over the backend it ends up on. */
#define MEASURE_SHARE 0.05
/* What a challenger costs, in passes of the serving backend: creation and
 * warmup (about two), two timed passes of its own and one more of the
 * serving backend's, at the least. */
#define CHALLENGE_PASSES 5
#define KEY_CAP 1024

typedef struct auto_state {
    const struct sleapc_backend_factory *fac[MAX_CANDIDATES];  /* best score first */
    int n_fac;
    sleapc_backend *serving;               /* runs every forward */
    int serving_i;                         /* its factory */
    bool settled;                          /* every candidate measured (or cached) */
    bool tried;                            /* a decision was attempted ... */
    uint64_t tried_run;                    /* ... in this run */
    bool said_short;                       /* "not measured" said once already */
    const sleapc_graph *g;                 /* borrowed: the model outlives the backend */
    sleapc_backend_opts opts;
    sleapc_tensor_map scratch;             /* outputs of passes that only time */
} auto_state;

static const struct sleapc_backend_ops auto_ops;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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

static int fac_index(const auto_state *s, const char *name)
{
    for (int i = 0; i < s->n_fac; i++)
        if (strcmp(s->fac[i]->name, name) == 0)
            return i;
    return -1;
}

/* The graph's content, the input, the settings and the machine: everything a
 * measurement depends on. */
static void make_key(const auto_state *s, const sleapc_tensor *x, char *key, size_t cap)
{
    char cpu[256], libs[256] = "";
    sleapc__cpu_id(cpu, sizeof cpu);
    size_t len = 0;
    for (int i = 0; i < s->n_fac && len < sizeof libs; i++) {
        char v[64] = "";
        if (s->fac[i]->version)
            s->fac[i]->version(v, sizeof v);
        len += (size_t)snprintf(libs + len, sizeof libs - len, "%s%s%s%s", i ? "," : "",
                                s->fac[i]->name, *v ? "-" : "", v);
    }
    int threads = s->opts.n_threads > 0 ? s->opts.n_threads : sleapc__cpu_count();
    snprintf(key, cap,
             "graph %016" PRIx64 " input %lldx%lldx%lldx%lld %s precision %s keep %u threads %d "
             "sleapc %s backends %s cpu %s",
             sleapc__graph_hash(s->g), (long long)x->shape[0], (long long)x->shape[1],
             (long long)x->shape[2], (long long)x->shape[3],
             x->dtype == SLEAPC_DTYPE_U8 ? "u8" : "f32", sleapc__precision_name(s->opts.precision),
             s->opts.bf16_keep, threads, sleapc__version(), libs, cpu);
}

/* Make factory i's backend for the graph; *why says why not. */
static sleapc_status make(const auto_state *s, int i, sleapc_backend **out, char *why, size_t cap)
{
    *out = NULL;
    sleapc_status st = sleapc__backend_create_from(s->fac[i], s->g, &s->opts, out);
    if (!st && (*out)->baked_postproc != s->serving->baked_postproc) {
        sleapc__backend_destroy(*out);
        *out = NULL;
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s gives other outputs", s->fac[i]->name);
    }
    if (st)
        snprintf(why, cap, "%s", sleapc__last_error());
    return st;
}

static void serve(auto_state *s, int i, sleapc_backend *be)
{
    sleapc__backend_destroy(s->serving);
    s->serving = be;
    s->serving_i = i;
}

/* "native 80.1 ms, onednn 120 ms" from an entry (failed ones as such). */
static void times_text(const sleapc_auto_entry *e, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < e->n && len < cap; i++) {
        double ms = e->ms[i];
        if (ms < 0)
            len += (size_t)snprintf(out + len, cap - len, "%s%s could not run", len ? ", " : "",
                                    e->name[i]);
        else
            len += (size_t)snprintf(out + len, cap - len, "%s%s %.*f ms", len ? ", " : "",
                                    e->name[i], ms < 10 ? 2 : ms < 100 ? 1 : 0, ms);
    }
}

/* A budget spent, or its rounds done. */
typedef enum { DUEL_DONE, DUEL_FAILED, DUEL_ABANDONED } duel_result;

/* Time challenger c against the serving backend on x, in turns: c first
 * (after its warmup), then the serving one, whose passes fill champ_out.
 * best_c/best_s: the best passes (best_s comes in with the serving
 * backend's pass just before). Abandoned when the first round alone spends
 * more than budget_ms. */
static duel_result duel(auto_state *s, sleapc_backend *c, const sleapc_tensor *x,
                        sleapc_tensor_map *champ_out, double budget_ms, double *best_c,
                        double *best_s, char *why, size_t cap)
{
    double t0 = now_s();
    sleapc_status st = c->ops->warmup(c, x->shape);
    *best_c = INFINITY;
    for (int r = 0; !st && r < MAX_ROUNDS; r++) {
        double ms;
        st = timed_forward(c, x, &s->scratch, &ms);
        if (st)
            break;
        if (ms < *best_c)
            *best_c = ms;
        if (r > 0) {
            sleapc_status ss = timed_forward(s->serving, x, champ_out, &ms);
            if (ss)
                return DUEL_ABANDONED;  /* the serving one fails: its forward will say */
            if (ms < *best_s)
                *best_s = ms;
            if (*best_c > DROP_AFTER_TWO * *best_s || *best_s > DROP_AFTER_TWO * *best_c)
                break;
        }
        if ((now_s() - t0) * 1e3 > budget_ms) {
            if (r == 0)
                return DUEL_ABANDONED;
            break;
        }
    }
    sleapc__tensor_map_clear(&s->scratch);
    if (st) {
        snprintf(why, cap, "%s", sleapc__last_error());
        return DUEL_FAILED;
    }
    return DUEL_DONE;
}

/* The cached entry settles the choice: its winner serves. */
static bool use_cached(auto_state *s, const sleapc_tensor *x, const sleapc_auto_entry *e,
                       const char *path)
{
    int ci = fac_index(s, e->chosen);
    if (ci < 0)
        return false;
    if (ci != s->serving_i) {
        sleapc_backend *be = NULL;
        char why[256];
        if (make(s, ci, &be, why, sizeof why))
            return false;  /* measure again: the cached winner cannot be made now */
        serve(s, ci, be);
    }
    char times[256];
    times_text(e, times, sizeof times);
    sleapc__log(SLEAPC_LOG_INFO,
                "backend auto: chose %s (cached: %s per batch of %lld at %lldx%lldx%lld; "
                "measured by an earlier run, %s)",
                e->chosen, times, (long long)x->shape[0], (long long)x->shape[1],
                (long long)x->shape[2], (long long)x->shape[3], path);
    sleapc__log(SLEAPC_LOG_INFO, "backend: %s", e->chosen);
    return true;
}

/* Decide on x's shape (see the top of the file). With out, the serving
 * backend's outputs for x are left there and *filled says so. */
static sleapc_status decide(auto_state *s, const sleapc_tensor *x, sleapc_tensor_map *out,
                            bool *filled)
{
    double t_start = now_s();
    *filled = false;
    s->tried = true;
    s->tried_run = sleapc__backend_run_id();
    char key[KEY_CAP], path[4200] = "";
    make_key(s, x, key, sizeof key);
    bool cache = sleapc__auto_cache_path(key, path, sizeof path);
    sleapc_auto_entry e;
    bool have = cache && sleapc__auto_cache_load(key, &e);
    if (!have)
        memset(&e, 0, sizeof e);
    bool complete = have;
    for (int i = 0; i < s->n_fac && complete; i++) {
        double ms;
        complete = sleapc__auto_entry_get(&e, s->fac[i]->name, &ms);
    }
    if (complete && use_cached(s, x, &e, path)) {
        s->settled = true;
        sleapc__backend_add_setup_ns((int64_t)((now_s() - t_start) * 1e9));
        return SLEAPC_OK;
    }
    /* Earlier runs' winner so far serves and is the one to beat. */
    int ci = have ? fac_index(s, e.chosen) : -1;
    if (ci >= 0 && ci != s->serving_i) {
        sleapc_backend *be = NULL;
        char why[256];
        if (!make(s, ci, &be, why, sizeof why))
            serve(s, ci, be);
    }

    /* Whether the run can repay timing any candidate: its share of the run
     * and a challenge both scale with the serving backend's time per batch,
     * so the run's length alone says (the budget below). */
    int64_t samples = sleapc__backend_run_samples();
    const sleapc_settings_measure mode = sleapc__settings_auto_measure();
    const bool off = mode == SLEAPC_SETTINGS_MEASURE_OFF;
    const bool full = mode == SLEAPC_SETTINGS_MEASURE_FULL;
    const double batches_left =
        samples > 0 ? (double)(samples - x->shape[0]) / (double)x->shape[0] : INFINITY;
    const bool may_measure =
        !off && (full || samples <= 0 || MEASURE_SHARE * batches_left >= CHALLENGE_PASSES);

    /* The serving backend on this shape: planned apart (a warm-up pass) when
     * its pass on x, the caller's batch, is to be compared with others'; else
     * that pass plans as a first forward does, and nothing else runs. */
    sleapc_tensor_map *champ_out = out ? out : &s->scratch;
    double best_s, t_real = 0;
    sleapc_status st = may_measure ? s->serving->ops->warmup(s->serving, x->shape) : SLEAPC_OK;
    double t_measure = now_s();
    if (!st)
        st = timed_forward(s->serving, x, champ_out, &best_s);
    if (st)
        return st;
    t_real = best_s;
    *filled = out != NULL;
    /* A pass that planned too is no measurement. */
    if (may_measure)
        sleapc__auto_entry_set(&e, s->fac[s->serving_i]->name, best_s);

    double budget_ms = INFINITY;
    char short_why[160];
    snprintf(short_why, sizeof short_why, "a run of %lld frames is too short to repay timing",
             (long long)samples);
    if (off) {
        budget_ms = 0;
        snprintf(short_why, sizeof short_why, "SLEAPC_AUTO_MEASURE=off; left:");
    } else if (!may_measure) {
        budget_ms = 0;
    } else if (samples > 0 && !full) {
        budget_ms = MEASURE_SHARE * best_s * (batches_left > 0 ? batches_left : 0);
    }
    char failed[512] = "", left[128] = "";
    size_t flen = 0, llen = 0;
    int measured = 0;
    const int64_t need = sleapc__backend_mem_need(s->g, x->shape);
    for (int i = 0; i < s->n_fac; i++) {
        double ms;
        if (i == s->serving_i || sleapc__auto_entry_get(&e, s->fac[i]->name, &ms))
            continue;
        double spent = (now_s() - t_measure) * 1e3;
        if (spent + CHALLENGE_PASSES * best_s > budget_ms) {
            llen += (size_t)snprintf(left + llen, sizeof left - llen, "%s%s", llen ? ", " : "",
                                     s->fac[i]->name);
            if (llen >= sizeof left)
                llen = sizeof left - 1;
            continue;
        }
        sleapc_backend *c = NULL;
        char why[256];
        double best_c = INFINITY;
        duel_result r = DUEL_FAILED;
        /* The challenger plans beside the serving backend: one that would not
         * fit beside it is left out, unmeasured. */
        if (need > 0 && sleapc__mem_check(2 * need, "timing another backend")) {
            flen += (size_t)snprintf(failed + flen, sizeof failed - flen, "; %s left out: %s",
                                     s->fac[i]->name, sleapc__last_error());
            if (flen >= sizeof failed)
                flen = sizeof failed - 1;
            continue;
        }
        sleapc_status cs = make(s, i, &c, why, sizeof why);
        if (!cs)
            r = duel(s, c, x, champ_out, budget_ms - spent, &best_c, &best_s, why, sizeof why);
        if (r == DUEL_ABANDONED) {
            sleapc__backend_destroy(c);
            llen += (size_t)snprintf(left + llen, sizeof left - llen, "%s%s", llen ? ", " : "",
                                     s->fac[i]->name);
            if (llen >= sizeof left)
                llen = sizeof left - 1;
            continue;
        }
        measured++;
        if (r == DUEL_FAILED) {
            sleapc__backend_destroy(c);
            /* Out of memory says nothing of the backend: try it another time. */
            if (cs != SLEAPC_ERR_NOMEM)
                sleapc__auto_entry_set(&e, s->fac[i]->name, -1);
            if (flen < sizeof failed - 1)
                flen += (size_t)snprintf(failed + flen, sizeof failed - flen, "; %s failed: %s",
                                         s->fac[i]->name, why);
            continue;
        }
        sleapc__auto_entry_set(&e, s->fac[i]->name, best_c);
        sleapc__auto_entry_set(&e, s->fac[s->serving_i]->name, best_s);
        if (best_c < best_s) {
            /* The serving backend's outputs in champ_out go with it. */
            sleapc__tensor_map_clear(champ_out);
            *filled = false;
            serve(s, i, c);
            best_s = best_c;
        } else {
            sleapc__backend_destroy(c);
        }
    }
    snprintf(e.chosen, sizeof e.chosen, "%s", s->fac[s->serving_i]->name);
    s->settled = llen == 0;
    const char *name = s->fac[s->serving_i]->name;
    double t_end = now_s();
    /* The pass on the caller's batch is work the run needed anyway. */
    sleapc__backend_add_setup_ns((int64_t)((t_end - t_start - (*filled ? t_real : 0) * 1e-3) * 1e9));
    if (measured == 0 && (llen > 0 || !may_measure)) {
        /* Nothing learnt: nothing to keep. */
        sleapc__log(s->said_short ? SLEAPC_LOG_DEBUG : SLEAPC_LOG_INFO,
                    "backend auto: chose %s (not measured: %s %s)", name, short_why, left);
        s->said_short = true;
        sleapc__log(SLEAPC_LOG_INFO, "backend: %s", name);
        return SLEAPC_OK;
    }
    char kept[4400];
    sleapc_status cst = cache ? sleapc__auto_cache_store(key, &e)
                              : sleapc__fail(SLEAPC_ERR_IO, "the cache is off");
    if (cst)
        snprintf(kept, sizeof kept, "not cached: %s", sleapc__last_error());
    else
        snprintf(kept, sizeof kept, "cached in %s", path);
    char times[256];
    times_text(&e, times, sizeof times);
    sleapc__log(SLEAPC_LOG_INFO,
                "backend auto: chose %s (measured in %.2f s: %s per batch of %lld at "
                "%lldx%lldx%lld%s%s%s; %s)",
                name, t_end - t_start, times, (long long)x->shape[0], (long long)x->shape[1],
                (long long)x->shape[2], (long long)x->shape[3], failed,
                llen ? "; left for a longer run: " : "", left, kept);
    sleapc__log(SLEAPC_LOG_INFO, "backend: %s", name);
    return SLEAPC_OK;
}

static bool deciding_shape(const auto_state *s, const int64_t shape[4])
{
    return sleapc__graph_flops(s->g, shape[0], shape[2], shape[3]) >= MIN_DECIDING_FLOP;
}

/* Whether x's shape should decide now: not settled, not tried in this run. */
static bool to_decide(const auto_state *s, const int64_t shape[4])
{
    return !s->settled && (!s->tried || s->tried_run != sleapc__backend_run_id()) &&
           deciding_shape(s, shape);
}

static sleapc_status auto_warmup(sleapc_backend *be, const int64_t shape[4])
{
    auto_state *s = be->impl;
    if (!to_decide(s, shape))
        return s->serving->ops->warmup(s->serving, shape);
    /* The timing needs an input: zeros run the same kernels as any image. */
    size_t n = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
    uint8_t *zeros = sleapc__calloc(n ? n : 1, 1);
    if (!zeros)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "backend auto: out of memory");
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                       .shape = {shape[0], shape[1], shape[2], shape[3]}, .data = zeros};
    bool filled;
    sleapc_status st = decide(s, &x, NULL, &filled);
    sleapc__free(zeros);
    return st;
}

static sleapc_status auto_forward(sleapc_backend *be, const sleapc_tensor *x,
                                  sleapc_tensor_map *out)
{
    auto_state *s = be->impl;
    if (x->ndim == 4 && to_decide(s, x->shape)) {
        /* A bad input is the caller's error, not a reason to measure. */
        sleapc_status st = sleapc__graph_input_check(x, s->g->in_channels);
        bool filled = false;
        if (!st)
            st = decide(s, x, out, &filled);
        if (st || filled)
            return st;
    }
    return s->serving->ops->forward(s->serving, x, out);
}

static sleapc_status auto_set_n_threads(sleapc_backend *be, int n_threads)
{
    auto_state *s = be->impl;
    s->opts.n_threads = n_threads;
    sleapc_backend *c = s->serving;
    return c->ops->set_n_threads ? c->ops->set_n_threads(c, n_threads) : SLEAPC_OK;
}

static void auto_destroy(sleapc_backend *be)
{
    auto_state *s = be->impl;
    sleapc__backend_destroy(s->serving);
    sleapc__tensor_map_clear(&s->scratch);
    sleapc__free(s);
    sleapc__free(be);
}

/* Device ops go to the serving backend once a shape has decided: before,
 * every forward must come here to be measured (a device's own forward, from
 * its uploaded frames or in two steps, would bypass auto). A serving backend
 * with device ops is then kept: the layer may leave state on its device
 * (peaks asked for, heads kept) that a backend chosen later would lack. */
static sleapc_backend *auto_delegate(sleapc_backend *be)
{
    auto_state *s = be->impl;
    if (!s->tried)
        return NULL;
    if (sleapc__backend_device_ops(s->serving, NULL))
        s->settled = true;
    return s->serving;
}

static const struct sleapc_backend_ops auto_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "auto",
    .forward = auto_forward,
    .warmup = auto_warmup,
    .destroy = auto_destroy,
    .set_n_threads = auto_set_n_threads,
    .delegate = auto_delegate,
};

const char *sleapc__backend_auto_serving(const sleapc_backend *be)
{
    return be && be->ops == &auto_ops ? ((const auto_state *)be->impl)->serving->ops->name : NULL;
}

const sleapc_backend *sleapc__backend_auto_serving_backend(const sleapc_backend *be)
{
    return be && be->ops == &auto_ops ? ((const auto_state *)be->impl)->serving : NULL;
}

sleapc_status sleapc__backend_auto_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                          sleapc_backend **out)
{
    const struct sleapc_backend_factory *facs[MAX_CANDIDATES];
    int n = 0;
    for (int i = 0; i < sleapc__backend_count() && n < MAX_CANDIDATES; i++)
        facs[n++] = sleapc__backend_factory(i);
    return sleapc__backend_auto_create_among(facs, n, g, opts, out);
}

sleapc_status sleapc__backend_auto_create_among(const struct sleapc_backend_factory *const *facs,
                                                int n_facs, const sleapc_graph *g,
                                                const sleapc_backend_opts *opts,
                                                sleapc_backend **out)
{
    *out = NULL;
    if (n_facs > MAX_CANDIDATES)
        n_facs = MAX_CANDIDATES;
    auto_state st0 = {.g = g, .opts = opts ? *opts : (sleapc_backend_opts){0}};
    bool used[MAX_CANDIDATES] = {0};
    char why[1024] = "";
    size_t len = 0;
    sleapc_status st = SLEAPC_OK;
    /* Every backend that can run here, best score first; the first that can
     * run this graph serves from now on (and the shapes too small to
     * measure), the others wait for the measurement. Candidates know they
     * were not asked for by name (a software Vulkan device then declines). */
    st0.opts.from_auto = true;
    for (;;) {
        int best = -1, best_score = 0;
        for (int i = 0; i < n_facs; i++) {
            const struct sleapc_backend_factory *f = facs[i];
            int sc = used[i] || !sleapc__backend_serves_device(f, st0.opts.device, false)
                         ? 0
                         : f->score();
            if (sc > best_score) {
                best = i;
                best_score = sc;
            }
        }
        if (best < 0)
            break;
        used[best] = true;
        const struct sleapc_backend_factory *f = facs[best];
        if (!st0.serving) {
            st = sleapc__backend_create_from(f, g, &st0.opts, &st0.serving);
            if (st == SLEAPC_ERR_UNSUPPORTED) {
                if (len < sizeof why - 1)
                    len += (size_t)snprintf(why + len, sizeof why - len, "%s%s", len ? "; " : "",
                                            sleapc__last_error());
                st = SLEAPC_OK;
                continue;
            }
            if (st)
                return st;
            st0.serving_i = st0.n_fac;
        }
        st0.fac[st0.n_fac++] = f;
    }
    if (!st0.serving)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "create backend auto: no backend can run this here%s%s",
                            len ? ": " : "", why);
    if (st0.n_fac == 1) {
        /* One candidate needs no measuring: it is the backend itself. */
        *out = st0.serving;
        sleapc__log(SLEAPC_LOG_INFO, "backend: %s", st0.serving->ops->name);
        return SLEAPC_OK;
    }
    auto_state *s = sleapc__calloc(1, sizeof *s);
    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    if (!s || !be) {
        sleapc__free(s);
        sleapc__free(be);
        sleapc__backend_destroy(st0.serving);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create backend auto: out of memory");
    }
    *s = st0;
    be->ops = &auto_ops;
    memcpy(be->device, s->serving->device, sizeof be->device);
    be->baked_postproc = s->serving->baked_postproc;
    be->impl = s;
    *out = be;
    return SLEAPC_OK;
}
