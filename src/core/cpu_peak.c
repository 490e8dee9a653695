#include "core/cpu_peak.h"

#include <immintrin.h>
#include <time.h>

#include "core/threadpool.h"

/* Twelve independent accumulator chains hide the FMA latency (4 cycles,
 * 2 ports: 8 in flight suffice; 12 leaves room). */
#define CHAINS 12
#define INNER 1000

typedef float v16sf __attribute__((vector_size(64)));
typedef float v8sf __attribute__((vector_size(32)));

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__attribute__((target("avx512f,fma"))) static float fma_avx512(long iters)
{
    v16sf acc[CHAINS], a, b;
    for (int i = 0; i < 16; i++) {
        a[i] = 0.999f;
        b[i] = 0.001f;
    }
    for (int c = 0; c < CHAINS; c++)
        acc[c] = b * (float)c;
    for (long it = 0; it < iters; it++)
        for (int c = 0; c < CHAINS; c++)
            acc[c] = acc[c] * a + b;
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        s += acc[c][0];
    return s;
}

__attribute__((target("avx2,fma"))) static float fma_avx2(long iters)
{
    v8sf acc[CHAINS], a, b;
    for (int i = 0; i < 8; i++) {
        a[i] = 0.999f;
        b[i] = 0.001f;
    }
    for (int c = 0; c < CHAINS; c++)
        acc[c] = b * (float)c;
    for (long it = 0; it < iters; it++)
        for (int c = 0; c < CHAINS; c++)
            acc[c] = acc[c] * a + b;
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        s += acc[c][0];
    return s;
}

/* The intrinsic, not a compiler builtin: gcc and clang name the builtin
 * differently. */
__attribute__((target("avx512bf16,avx512bw,avx512f"))) static float dp_bf16(long iters)
{
    __m512 acc[CHAINS];
    const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80); /* 1.0 in bfloat16 */
    const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3a83); /* ~0.001 */
    for (int c = 0; c < CHAINS; c++)
        acc[c] = _mm512_setzero_ps();
    for (long it = 0; it < iters; it++)
        for (int c = 0; c < CHAINS; c++)
            acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        s += _mm512_cvtss_f32(acc[c]);
    return s;
}

static float fma_generic(long iters)
{
    float acc[CHAINS][4];
    for (int c = 0; c < CHAINS; c++)
        for (int i = 0; i < 4; i++)
            acc[c][i] = 0.001f * (float)c;
    for (long it = 0; it < iters; it++)
        for (int c = 0; c < CHAINS; c++)
            for (int i = 0; i < 4; i++)
                acc[c][i] = acc[c][i] * 0.999f + 0.001f;
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        s += acc[c][0];
    return s;
}

typedef struct peak_job {
    bool bf16;
    long iters;
    volatile float sink;
} peak_job;

static void run_chunk(void *ctx, int64_t task)
{
    peak_job *j = ctx;
    (void)task;
    float s;
    if (j->bf16)
        s = dp_bf16(j->iters);
    else if (__builtin_cpu_supports("avx512f"))
        s = fma_avx512(j->iters);
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        s = fma_avx2(j->iters);
    else
        s = fma_generic(j->iters);
    j->sink = s;
}

const char *sleapc__cpu_simd_name(void)
{
    if (__builtin_cpu_supports("avx512f"))
        return "avx512f";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "avx2+fma";
    return "generic";
}

/* FLOP of one iteration of the inner loop on one thread. */
static double flop_per_iter(bool bf16)
{
    if (bf16)
        return CHAINS * 16 * 2 * 2.0;  /* 2 bf16 products per lane, then the add */
    if (__builtin_cpu_supports("avx512f"))
        return CHAINS * 16 * 2.0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return CHAINS * 8 * 2.0;
    return CHAINS * 4 * 2.0;
}

double sleapc__cpu_peak_gflops(int n_threads, bool bf16, double seconds)
{
    if (bf16 && !__builtin_cpu_supports("avx512bf16"))
        return 0.0;
    sleapc_threadpool *tp = NULL;
    if (sleapc__threadpool_create(n_threads, &tp) != SLEAPC_OK)
        return 0.0;
    int n = sleapc__threadpool_n_threads(tp);
    peak_job j = {.bf16 = bf16, .iters = INNER};
    /* Grow the work until one round takes a tenth of the budget. */
    double t = 0;
    for (;;) {
        double t0 = now_s();
        sleapc__threadpool_run(tp, run_chunk, &j, n);
        t = now_s() - t0;
        if (t >= seconds / 10 || j.iters > (1L << 40))
            break;
        j.iters *= 4;
    }
    /* The best of a few rounds: the machine's limit, not its noise. */
    double best = t;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        sleapc__threadpool_run(tp, run_chunk, &j, n);
        double dt = now_s() - t0;
        best = dt < best ? dt : best;
    }
    sleapc__threadpool_destroy(tp);
    return best > 0 ? flop_per_iter(bf16) * (double)j.iters * n / best * 1e-9 : 0.0;
}
