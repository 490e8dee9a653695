/* The method of each 3x3 conv, chosen when the plan is built: the direct
 * method or Winograd F(m), among the tile sizes accurate enough for the
 * layer, by timing each on the planned shape (random input, the plan's
 * thread pool). Candidates are timed in interleaved rounds by the process's
 * CPU time and the best pass counts: on a machine shared with other jobs
 * wall time mostly measures the others (measured at a load of 10 per core,
 * wall-time choices left a UNet's convs 1.24x slower than the best
 * choice), while CPU time is the work each method costs. */
#include "backends/native/native_conv_choose.h"

#include <time.h>

#include "backends/native/native_winograd.h"
#include "core/alloc.h"
#include "core/error.h"

/* Timing passes per candidate after a warmup pass (faults the transformed
 * weights and scratch in); after the first, only for candidates within
 * ROUND_MARGIN of the best so far. */
#define ROUNDS 2
#define ROUND_MARGIN 1.15
/* Batch items timed: both methods' time grows linearly with the batch, and
 * every item timed adds about ten conv runs per item to a plan. */
#define TIMED_ITEMS 1
/* Below this many FLOPs a conv stays direct untimed: the time is too short
 * to tell the methods apart, and too small to matter. */
#define MIN_TIMED_FLOP 4e6

/* F(m)'s float32 error bound over the direct method's, on c_in input
 * channels: gain(m) (the transforms' absolute sums over the direct 9
 * products) times the rounding chains, K = c_in + 4 alpha + 2 against
 * 9 c_in + 1 (see tests/backends/test_native_winograd.c). At most
 * WINO_BOUND_RATIO: F(4) then needs c_in >= 4 and F(6) c_in >= 10, which
 * leaves out the input convs (1 or 3 channels, where Winograd is never the
 * faster anyway); F(2) passes everywhere. With F(6) forced on every 3x3
 * conv, bound or not, every reference head stayed within 3.4e-5 of
 * sleap-nn (README "Winograd convolutions"). */
#define WINO_BOUND_RATIO 256.0

bool sleapc__native_wino_accurate(int m, int c_in)
{
    double gain = sleapc__native_wino_gain(m);
    if (gain <= 0 || c_in < 1)
        return false;
    double ratio = gain * (c_in + 4.0 * (m + 2) + 2) / (9.0 * c_in + 1);
    return ratio <= WINO_BOUND_RATIO;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

sleapc_status sleapc__native_conv_choose(native_conv *conv, int c_in, int c_out,
                                         sleapc_threadpool *tp, native_conv_method how,
                                         int force_m, int64_t b, int64_t h, int64_t w)
{
    if (how == NATIVE_CONV_DIRECT || !sleapc__native_conv_winograd_ok(conv))
        return sleapc__native_conv_set_winograd(conv, 0);
    if (how == NATIVE_CONV_WINOGRAD && force_m)
        return sleapc__native_conv_set_winograd(conv, force_m);
    int cand[4], n = 0;
    if (how == NATIVE_CONV_AUTO)
        cand[n++] = 0;
    for (int m = 2; m <= 6; m += 2)
        if (sleapc__native_wino_accurate(m, c_in))
            cand[n++] = m;
    if (n == 0 || 18.0 * c_in * c_out * (double)(b * h * w) < MIN_TIMED_FLOP)
        return sleapc__native_conv_set_winograd(conv, 0);
    if (n == 1)
        return sleapc__native_conv_set_winograd(conv, cand[0]);

    int64_t bt = b < TIMED_ITEMS ? b : TIMED_ITEMS;
    int n_threads = sleapc__threadpool_n_threads(tp);
    size_t scratch_bytes = 0;
    for (int k = 0; k < n; k++) {
        sleapc_status st = sleapc__native_conv_set_winograd(conv, cand[k]);
        if (st)
            return st;
        size_t s = sleapc__native_conv_scratch_size(conv, h, w, n_threads);
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

    double best[4];
    for (int k = 0; k < n; k++) {
        sleapc__native_conv_set_winograd(conv, cand[k]);
        sleapc__native_conv_run(conv, tp, src, bt, h, w, dst, scratch);
        best[k] = 1e300;
    }
    for (int round = 0; round < ROUNDS; round++) {
        double fastest = 1e300;
        for (int k = 0; k < n; k++)
            fastest = best[k] < fastest ? best[k] : fastest;
        for (int k = 0; k < n; k++) {
            if (round > 0 && best[k] > ROUND_MARGIN * fastest)
                continue;
            sleapc__native_conv_set_winograd(conv, cand[k]);
            double t0 = cpu_s();
            sleapc__native_conv_run(conv, tp, src, bt, h, w, dst, scratch);
            double t = cpu_s() - t0;
            if (t < best[k])
                best[k] = t;
        }
    }
    int pick = 0;
    for (int k = 1; k < n; k++)
        if (best[k] < best[pick])
            pick = k;
    st = sleapc__native_conv_set_winograd(conv, cand[pick]);
done:
    sleapc__aligned_free(src);
    sleapc__aligned_free(dst);
    sleapc__aligned_free(scratch);
    return st;
}
