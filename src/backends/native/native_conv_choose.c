/* The method of each 3x3 conv, chosen when the plan is built: the direct
 * method or Winograd F(m), among the tile sizes accurate enough for the
 * layer, by timing each on the planned shape (random input, the plan's
 * thread pool) in interleaved rounds.
 *
 * A pass is timed by its wall time where none of the pool's threads waited
 * for a core during it (a clean pass: the kernel's run delay says so): wall
 * time is what a user waits for, and only it sees a method that leaves a
 * thread idle, which on small maps is most of the difference between them.
 * On a machine shared with other jobs a pass is rarely clean; a candidate
 * with no clean pass after the last round is compared by the CPU time its
 * threads ran (each thread's own clock, exact), the work the method costs
 * whatever the others do (measured at a load of 10 per core: wall-time
 * choices left a UNet's convs 1.24x slower than the best choice).
 *
 * A timing is not repeatable, and two methods differ in the last bits, so
 * near-ties go to the direct method (or the smaller tile) and each choice is
 * kept in the auto cache (auto_cache.h) under the graph, the node, its
 * input, the threads, the CPU and the version: the first
 * run measures, later runs (and concurrent ones that find the entry) use the
 * kept choice, and of concurrent first runs the first to keep its choice
 * wins for all. */
#include "backends/native/native_conv_choose.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/auto_cache.h"
#include "backends/native/native_winograd.h"
#include "core/alloc.h"
#include "core/cpu_id.h"
#include "core/error.h"
#include "core/settings.h"
#include "model/graph_hash.h"

/* Timing rounds after a warmup pass (faults the transformed weights and
 * scratch in): at least ROUNDS; up to MAX_ROUNDS while a candidate still in
 * the running has no clean pass. After the first round only candidates
 * within ROUND_MARGIN of the best so far run. A pass is clean when the
 * threads' run delay in it is at most CLEAN_WAIT of its wall time. */
#define ROUNDS 3
#define MAX_ROUNDS 6
#define ROUND_MARGIN 1.3
#define CLEAN_WAIT 0.02
/* Batch items timed: one, so that the choice (and the key) does not depend
 * on the batch and a frame gives the same bits at any batch size (a
 * batch-8 plan timed over 8 items of a small map chose differently from a
 * batch-1 plan). */
#define TIMED_ITEMS 1
/* Below this many FLOPs per batch item a conv stays direct untimed: the time is too short
 * to tell the methods apart, and too small to matter. */
#define MIN_TIMED_FLOP 4e6
/* A later candidate (direct, then F(2), F(4), F(6): less accurate) is
 * chosen over an earlier one only when this much faster: a near-tie, which
 * a timing decides by chance, keeps the more accurate method. */
#define PICK_MARGIN 1.10

/* F(m)'s float32 error bound over the direct method's, on c_in input
 * channels: gain(m) (the transforms' absolute sums over the direct 9
 * products) times the rounding chains, K = c_in + 4 alpha + 2 against
 * 9 c_in + 1 (see tests/backends/test_native_winograd.c). At most
 * WINO_BOUND_RATIO: F(4) then needs c_in >= 4 and F(6) c_in >= 10, which
 * leaves out the input convs (1 or 3 channels, where Winograd is never the
 * faster anyway); F(2) passes everywhere. With F(6) forced on every 3x3
 * conv, bound or not, every reference head stayed within 3.4e-5 of
 * sleap-nn (docs/performance.md, "Winograd convolutions"). */
#define WINO_BOUND_RATIO 256.0

native_conv_method sleapc__native_conv_method_of(sleapc_conv_method conv)
{
    if (conv == SLEAPC_CONV_DIRECT)
        return NATIVE_CONV_DIRECT;
    if (conv == SLEAPC_CONV_WINOGRAD)
        return NATIVE_CONV_WINOGRAD;
    switch (sleapc__settings_conv()) {
    case SLEAPC_SETTINGS_CONV_DIRECT:
        return NATIVE_CONV_DIRECT;
    case SLEAPC_SETTINGS_CONV_WINOGRAD:
        return NATIVE_CONV_WINOGRAD;
    default:
        return NATIVE_CONV_AUTO;
    }
}

bool sleapc__native_wino_accurate(int m, int c_in)
{
    double gain = sleapc__native_wino_gain(m);
    if (gain <= 0 || c_in < 1)
        return false;
    double ratio = gain * (c_in + 4.0 * (m + 2) + 2) / (9.0 * c_in + 1);
    return ratio <= WINO_BOUND_RATIO;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

void sleapc__native_conv_key_prefix(const sleapc_graph *g, native_conv_method how, bool twins,
                                    int n_threads, char *out, size_t cap)
{
    char cpu[256];
    sleapc__cpu_id(cpu, sizeof cpu);
    snprintf(out, cap, "native conv %s%s graph %016" PRIx64 " threads %d sleapc %s cpu %s",
             how == NATIVE_CONV_AUTO ? "auto" : "winograd", twins ? " bf16-twins" : "",
             sleapc__graph_hash(g), n_threads, sleapc__version(), cpu);
}

/* Candidates: F(m) for m = 2, 4, 6, the direct method (0) and the twin
 * (CAND_TWIN, native_conv_pick). */
#define CAND_TWIN 1

static const char *cand_name(int m)
{
    return m == 0 ? "direct" : m == CAND_TWIN ? "bf16" : m == 2 ? "f2" : m == 4 ? "f4" : "f6";
}

/* Sets the candidate: the twin leaves conv direct (it is not run). */
static native_conv *cand_set(native_conv *conv, native_conv *alt, int m)
{
    sleapc__native_conv_set_winograd(conv, m == CAND_TWIN ? 0 : m);
    return m == CAND_TWIN ? alt : conv;
}

/* The candidate e names, or -1. */
static int kept_pick(const sleapc_auto_entry *e, const int *cand, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(e->chosen, cand_name(cand[k])) == 0)
            return k;
    return -1;
}

static sleapc_status time_candidates(native_conv *conv, native_conv *alt, int c_in, int c_out,
                                     sleapc_threadpool *tp, const int *cand, int n, int64_t bt,
                                     int64_t h, int64_t w, double *best, bool *live);

static sleapc_status choose(native_conv *conv, native_conv *alt, int *chosen, int c_in,
                            int c_out, sleapc_threadpool *tp, native_conv_method how, int force_m,
                            const char *key_prefix, int node, int64_t b, int64_t h, int64_t w);

sleapc_status sleapc__native_conv_choose(native_conv *conv, native_conv_pick *pick, int c_in,
                                         int c_out, sleapc_threadpool *tp,
                                         native_conv_method how, int force_m,
                                         const char *key_prefix, int node, int64_t b, int64_t h,
                                         int64_t w)
{
    native_conv *alt = pick && how == NATIVE_CONV_AUTO ? pick->alt : NULL;
    int chosen = 0;
    sleapc_status st = SLEAPC_OK;
    if (alt && pick->force_alt && sleapc__native_conv_winograd_ok(conv))
        chosen = CAND_TWIN;
    else
        st = choose(conv, alt, &chosen, c_in, c_out, tp, how, force_m, key_prefix, node, b, h, w);
    if (pick)
        pick->use_alt = !st && chosen == CAND_TWIN;
    if (!st)
        st = sleapc__native_conv_set_winograd(conv, chosen == CAND_TWIN ? 0 : chosen);
    if (!st)
        sleapc__native_conv_keep_tile(conv);
    return st;
}

/* *chosen: the candidate (0: direct, CAND_TWIN, or m of F(m)). */
static sleapc_status choose(native_conv *conv, native_conv *alt, int *chosen, int c_in,
                            int c_out, sleapc_threadpool *tp, native_conv_method how, int force_m,
                            const char *key_prefix, int node, int64_t b, int64_t h, int64_t w)
{
    *chosen = 0;
    if (how == NATIVE_CONV_DIRECT || !sleapc__native_conv_winograd_ok(conv))
        return SLEAPC_OK;
    if (how == NATIVE_CONV_WINOGRAD && force_m) {
        *chosen = force_m;
        return SLEAPC_OK;
    }
    /* In order of accuracy, for near-ties (PICK_MARGIN): the twin's sums
     * round as the direct method's, in another order. */
    int cand[5], n = 0;
    if (how == NATIVE_CONV_AUTO)
        cand[n++] = 0;
    if (alt)
        cand[n++] = CAND_TWIN;
    for (int m = 2; m <= 6; m += 2)
        if (sleapc__native_wino_accurate(m, c_in))
            cand[n++] = m;
    /* Per batch item: timing uses one, so the choice (and the key) does not
     * depend on the batch, and a short last batch runs as the others. */
    if (n == 0 || 18.0 * c_in * c_out * (double)(h * w) < MIN_TIMED_FLOP)
        return SLEAPC_OK;
    if (n == 1) {
        *chosen = cand[0];
        return SLEAPC_OK;
    }

    int64_t bt = b < TIMED_ITEMS ? b : TIMED_ITEMS;
    char key[1024] = "";
    sleapc_auto_entry e;
    if (key_prefix)
        snprintf(key, sizeof key, "%s node %d input %dx%lldx%lld", key_prefix, node, c_in,
                 (long long)h, (long long)w);
    int pick = *key && sleapc__auto_cache_load(key, &e) ? kept_pick(&e, cand, n) : -1;
    if (pick >= 0) {
        *chosen = cand[pick];
        return SLEAPC_OK;
    }

    double best[5] = {1e300, 1e300, 1e300, 1e300, 1e300};
    bool live[5] = {false, false, false, false, false};
    sleapc_status st = time_candidates(conv, alt, c_in, c_out, tp, cand, n, bt, h, w, best, live);
    if (st)
        return st;
    pick = -1;
    for (int k = 0; k < n; k++)
        if (live[k] && (pick < 0 || PICK_MARGIN * best[k] < best[pick]))
            pick = k;
    if (pick < 0) /* not reached: the fastest candidate stays in the running */
        pick = 0;
    if (*key) {
        memset(&e, 0, sizeof e);
        snprintf(e.chosen, sizeof e.chosen, "%s", cand_name(cand[pick]));
        for (int k = 0; k < n; k++)
            sleapc__auto_entry_set(&e, cand_name(cand[k]), best[k] < 1e299 ? 1e3 * best[k] : -1);
        sleapc_auto_entry kept;
        int k = sleapc__auto_cache_store_first(key, &e, &kept) ? kept_pick(&kept, cand, n) : -1;
        if (k >= 0)
            pick = k;
    }
    *chosen = cand[pick];
    return SLEAPC_OK;
}

/* Every candidate still in the running has a clean pass. */
static bool all_clean(const double *wall, const bool *live, int n)
{
    for (int k = 0; k < n; k++)
        if (live[k] && wall[k] >= 1e299)
            return false;
    return true;
}

/* live[k]: candidate k stayed in the running; best[k]: its time in seconds,
 * by clean wall time or, where a candidate in the running has no clean
 * pass, by the CPU time of all over the threads (a dropped candidate: its
 * time when dropped, for the record). */
static sleapc_status time_candidates(native_conv *conv, native_conv *alt, int c_in, int c_out,
                                     sleapc_threadpool *tp, const int *cand, int n, int64_t bt,
                                     int64_t h, int64_t w, double *best, bool *live)
{
    int n_threads = sleapc__threadpool_n_threads(tp);
    size_t scratch_bytes = 0;
    for (int k = 0; k < n; k++) {
        sleapc_status st =
            sleapc__native_conv_set_winograd(conv, cand[k] == CAND_TWIN ? 0 : cand[k]);
        if (st)
            return st;
        size_t s = sleapc__native_conv_scratch_size(cand[k] == CAND_TWIN ? alt : conv, h, w,
                                                    n_threads);
        if (s > scratch_bytes)
            scratch_bytes = s;
    }
    size_t n_in = (size_t)(bt * c_in * h * w), n_out = (size_t)(bt * c_out * h * w);
    float *src = sleapc__aligned_alloc(n_in * sizeof *src);
    float *dst = sleapc__aligned_alloc(n_out * sizeof *dst);
    void *scratch = scratch_bytes ? sleapc__aligned_alloc(scratch_bytes) : NULL;
    sleapc_status st = SLEAPC_OK;
    if (!src || !dst || (scratch_bytes && !scratch)) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory timing a conv");
        goto done;
    }
    unsigned seed = 7;
    for (size_t i = 0; i < n_in; i++)
        src[i] = (float)(next_rand(&seed) & 0xffff) / 65536.0f;

    double wall[5], cpu[5];
    for (int k = 0; k < n; k++) {
        sleapc__native_conv_run(cand_set(conv, alt, cand[k]), tp, src, bt, h, w, dst, scratch);
        wall[k] = cpu[k] = 1e300;
        live[k] = true;
    }
    for (int round = 0; round < MAX_ROUNDS; round++) {
        if (round >= ROUNDS && all_clean(wall, live, n))
            break;
        /* Ranked by clean wall time, or by CPU time per thread (never above
         * the wall time of the same pass: a bound that keeps an unclean
         * candidate in the running). */
        double fastest = 1e300;
        for (int k = 0; k < n; k++) {
            double score = wall[k] < 1e299 ? wall[k] : cpu[k] / n_threads;
            fastest = live[k] && score < fastest ? score : fastest;
        }
        for (int k = 0; k < n; k++) {
            double score = wall[k] < 1e299 ? wall[k] : cpu[k] / n_threads;
            if (round > 0 && score > ROUND_MARGIN * fastest)
                live[k] = false;
            if (!live[k])
                continue;
            native_conv *cv = cand_set(conv, alt, cand[k]);
            double c0, q0, c1, q1;
            sleapc__threadpool_times(tp, &c0, &q0);
            double t0 = wall_s();
            sleapc__native_conv_run(cv, tp, src, bt, h, w, dst, scratch);
            double t = wall_s() - t0;
            sleapc__threadpool_times(tp, &c1, &q1);
            bool clean = q0 >= 0 && q1 >= 0 && q1 - q0 <= CLEAN_WAIT * t;
            if (clean && t < wall[k])
                wall[k] = t;
            if (c1 - c0 < cpu[k])
                cpu[k] = c1 - c0;
        }
    }
    bool clean = all_clean(wall, live, n);
    for (int k = 0; k < n; k++)
        best[k] = (clean || !live[k]) && wall[k] < 1e299 ? wall[k] : cpu[k] / n_threads;
done:
    sleapc__aligned_free(src);
    sleapc__aligned_free(dst);
    sleapc__aligned_free(scratch);
    return st;
}
