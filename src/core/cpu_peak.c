/* syscall() for arch_prctl, which has no libc wrapper. */
#define _DEFAULT_SOURCE
#include "core/cpu_peak.h"

#include <time.h>

/* x86 loops (AVX2, AVX-512, AVX512-BF16, AMX) are built only for x86;
 * AArch64 has its NEON loop; any other target times the generic one. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CPU_PEAK_X86 1
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/threadpool.h"

/* Each loop keeps CHAINS independent accumulators in registers, written with
 * explicit FMA intrinsics: plain C `a * b + c` is not contracted under
 * -std=c11 and would time a multiply and an add instead (half the peak). An
 * FMA has 4-5 cycles of latency on two ports, so 8-10 chains keep both busy;
 * 16 leave margin and fit with the two operands in AVX-512's 32 registers,
 * 12 in AVX2's 16. The generated code has no loads or stores in the loop
 * (objdump: 16 vfmadd132ps / vdpbf16ps on zmm registers, then the branch). */
#define INNER 1000

#define REP16(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
                 X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef CPU_PEAK_X86
__attribute__((target("avx512f"))) static float fma_avx512(long iters)
{
    const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
#define DECL(i) __m512 acc##i = _mm512_set1_ps(0.001f * (float)(i));
    REP16(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm512_fmadd_ps(acc##i, a, b);
        REP16(STEP)
#undef STEP
    }
    __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, acc##i);
    REP16(SUM)
#undef SUM
    return _mm512_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) static float fma_avx2(long iters)
{
    const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
#define DECL(i) __m256 acc##i = _mm256_set1_ps(0.001f * (float)(i));
    REP12(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm256_fmadd_ps(acc##i, a, b);
        REP12(STEP)
#undef STEP
    }
    __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, acc##i);
    REP12(SUM)
#undef SUM
    return _mm256_cvtss_f32(s);
}

/* VDPBF16PS: per fp32 lane, two bf16 products added to the accumulator. */
__attribute__((target("avx512bf16,avx512bw,avx512f"))) static float dp_bf16(long iters)
{
    const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80); /* 1.0 in bfloat16 */
    const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3a83); /* ~0.001 */
    /* Distinct starting values: equal chains would be merged into one. */
#define DECL(i) __m512 acc##i = _mm512_set1_ps((float)(i));
    REP16(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm512_dpbf16_ps(acc##i, a, b);
        REP16(STEP)
#undef STEP
    }
    __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, acc##i);
    REP16(SUM)
#undef SUM
    return _mm512_cvtss_f32(s);
}
#endif

#ifdef __aarch64__
/* NEON: FMLA has 4 cycles of latency on up to 4 pipes (Neoverse V1/V2), so
 * 16 chains; they and the two operands fit in the 32 registers. */
static float fma_neon(long iters)
{
    const float32x4_t a = vdupq_n_f32(0.999f), b = vdupq_n_f32(0.001f);
#define DECL(i) float32x4_t acc##i = vdupq_n_f32(0.001f * (float)(i));
    REP16(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define STEP(i) acc##i = vfmaq_f32(b, acc##i, a);
        REP16(STEP)
#undef STEP
    }
    float32x4_t s = vdupq_n_f32(0.0f);
#define SUM(i) s = vaddq_f32(s, acc##i);
    REP16(SUM)
#undef SUM
    return vgetq_lane_f32(s, 0);
}
#endif

/* Scalar fallback: four independent lanes per chain, left to the compiler. */
static float fma_generic(long iters)
{
    float acc[12][4];
    for (int c = 0; c < 12; c++)
        for (int i = 0; i < 4; i++)
            acc[c][i] = 0.001f * (float)c;
    for (long it = 0; it < iters; it++)
        for (int c = 0; c < 12; c++)
            for (int i = 0; i < 4; i++)
                acc[c][i] = acc[c][i] * 0.999f + 0.001f;
    float s = 0;
    for (int c = 0; c < 12; c++)
        s += acc[c][0];
    return s;
}

/* AMX (Intel's "Intel AMX" chapter of the SDM, vol. 1 ch. 18 and vol. 3
 * 13.14): TDPBF16PS multiplies a 16x32 bf16 tile by a 32x16 one (stored as
 * 16 rows of 16 bf16 pairs) into a 16x16 fp32 tile: 16*16*32 multiply-adds.
 * Four accumulator tiles (tmm0-3) from two A tiles (tmm4-5) and two B tiles
 * (tmm6-7) keep the unit busy across the instruction's latency. Only ever
 * called after amx_usable() said yes. */
#define AMX_FLOP_PER_ITER (4.0 * 16 * 16 * 32 * 2)

#ifdef CPU_PEAK_X86

typedef struct amx_tilecfg {
    uint8_t palette_id, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_tilecfg;

__attribute__((target("amx-tile,amx-bf16"))) static float amx_bf16(long iters)
{
    amx_tilecfg cfg = {.palette_id = 1};
    for (int t = 0; t < 8; t++) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    static const uint16_t ones[16 * 32] = {0};  /* zeros: throughput does not depend on values */
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, ones, 64);
    _tile_loadd(5, ones, 64);
    _tile_loadd(6, ones, 64);
    _tile_loadd(7, ones, 64);
    for (long it = 0; it < iters; it++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    float out[16 * 16];
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}

/* The CPU has AMX-TILE and AMX-BF16, the OS saves the tile state (XCR0 bits
 * 17-18), and Linux granted this process the tile data (arch_prctl). */
static bool amx_usable(void)
{
#if defined(__linux__) && defined(SYS_arch_prctl)
    static int state;  /* 0 unknown, 1 yes, -1 no; first asked before threads start */
    if (state)
        return state > 0;
    state = -1;
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    const unsigned amx_bf16_bit = 1u << 22, amx_tile_bit = 1u << 24;
    if ((d & (amx_bf16_bit | amx_tile_bit)) != (amx_bf16_bit | amx_tile_bit))
        return false;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))  /* OSXSAVE */
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & (3u << 17)) != (3u << 17))
        return false;
    const long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
    if (syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) != 0)
        return false;
    state = 1;
    return true;
#else
    return false;
#endif
}

#else

static bool amx_usable(void)
{
    return false;
}

#endif

/* The widest fp32 FMA this CPU runs. */
typedef enum fma_set { FMA_GENERIC, FMA_NEON, FMA_AVX2, FMA_AVX512 } fma_set;

static fma_set fma_best(void)
{
#ifdef CPU_PEAK_X86
    if (__builtin_cpu_supports("avx512f"))
        return FMA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return FMA_AVX2;
#elif defined(__aarch64__)
    return FMA_NEON;
#endif
    return FMA_GENERIC;
}

static bool has_bf16_dot(void)
{
#ifdef CPU_PEAK_X86
    return __builtin_cpu_supports("avx512bf16");
#else
    return false;
#endif
}

#define MAX_PEAK_THREADS 256

typedef struct peak_job {
    sleapc_peak_unit unit;
    long iters;
    double cpu_s[MAX_PEAK_THREADS];  /* each thread's own CPU time for the round */
    volatile float sink;
} peak_job;

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run_chunk(void *ctx, int64_t task)
{
    peak_job *j = ctx;
    double t0 = thread_cpu_s();
    float s;
    /* The bf16 units are asked for only where present (x86). */
    switch (j->unit) {
#ifdef CPU_PEAK_X86
    case SLEAPC_PEAK_BF16_AMX:
        s = amx_bf16(j->iters);
        break;
    case SLEAPC_PEAK_BF16_DOT:
        s = dp_bf16(j->iters);
        break;
#endif
    default:
        switch (fma_best()) {
#ifdef CPU_PEAK_X86
        case FMA_AVX512:
            s = fma_avx512(j->iters);
            break;
        case FMA_AVX2:
            s = fma_avx2(j->iters);
            break;
#endif
#ifdef __aarch64__
        case FMA_NEON:
            s = fma_neon(j->iters);
            break;
#endif
        default:
            s = fma_generic(j->iters);
        }
    }
    j->sink = s;
    if (task < MAX_PEAK_THREADS)
        j->cpu_s[task] = thread_cpu_s() - t0;
}

const char *sleapc__cpu_simd_name(void)
{
    static const char *const names[] = {
        [FMA_GENERIC] = "generic", [FMA_NEON] = "neon",
        [FMA_AVX2] = "avx2+fma",   [FMA_AVX512] = "avx512f"};
    return names[fma_best()];
}

/* FLOP of one iteration of the inner loop on one thread. */
static double flop_per_iter(sleapc_peak_unit unit)
{
    switch (unit) {
    case SLEAPC_PEAK_BF16_AMX:
        return AMX_FLOP_PER_ITER;
    case SLEAPC_PEAK_BF16_DOT:
        return 16 * 16 * 2 * 2.0;  /* 16 chains x 16 lanes x 2 products, each a multiply-add */
    default:
        switch (fma_best()) {
        case FMA_AVX512:
            return 16 * 16 * 2.0;
        case FMA_AVX2:
            return 12 * 8 * 2.0;
        case FMA_NEON:
            return 16 * 4 * 2.0;
        default:
            return 12 * 4 * 2.0;
        }
    }
}

bool sleapc__cpu_peak_unit_present(sleapc_peak_unit unit)
{
    switch (unit) {
    case SLEAPC_PEAK_BF16_AMX:
        return amx_usable();
    case SLEAPC_PEAK_BF16_DOT:
        return has_bf16_dot();
    default:
        return true;
    }
}

double sleapc__cpu_peak_unit_gflops(int n_threads, sleapc_peak_unit unit, double seconds)
{
    if (!sleapc__cpu_peak_unit_present(unit))
        return 0.0;
    sleapc_threadpool *tp = NULL;
    if (sleapc__threadpool_create(n_threads, &tp) != SLEAPC_OK)
        return 0.0;
    int n = sleapc__threadpool_n_threads(tp);
    n = n < MAX_PEAK_THREADS ? n : MAX_PEAK_THREADS;
    peak_job j = {.unit = unit, .iters = unit == SLEAPC_PEAK_BF16_AMX ? INNER / 10 : INNER};
    /* Grow the work until one round takes a tenth of the budget in CPU time
     * (wall time on a loaded machine would stop it at rounds too short to
     * time); the growing rounds also bring the clock up from idle, which
     * read 30% low without them. */
    for (;;) {
        double t0 = now_s();
        sleapc__threadpool_run(tp, run_chunk, &j, n);
        if (j.cpu_s[0] >= seconds / 10 || now_s() - t0 >= seconds || j.iters > (1L << 40))
            break;
        j.iters *= 2;
    }
    /* Each thread's rate by its own CPU time, all threads running at once (so
     * the all-core clock counts): on a machine shared with other jobs wall
     * time would under-read the peak, and a kernel timed there would then
     * appear to beat it. The best of a few rounds. */
    double best = 0;
    for (int r = 0; r < 5; r++) {
        sleapc__threadpool_run(tp, run_chunk, &j, n);
        double rate = 0;
        for (int t = 0; t < n; t++)
            rate += j.cpu_s[t] > 0 ? flop_per_iter(unit) * (double)j.iters / j.cpu_s[t] : 0;
        best = rate > best ? rate : best;
    }
    sleapc__threadpool_destroy(tp);
    return best * 1e-9;
}

double sleapc__cpu_peak_gflops(int n_threads, bool bf16, double seconds)
{
    if (!bf16)
        return sleapc__cpu_peak_unit_gflops(n_threads, SLEAPC_PEAK_FP32_FMA, seconds);
    /* bf16 work runs on whichever unit is fastest: the peak is the best. */
    double dot = sleapc__cpu_peak_unit_gflops(n_threads, SLEAPC_PEAK_BF16_DOT, seconds);
    double amx = sleapc__cpu_peak_unit_gflops(n_threads, SLEAPC_PEAK_BF16_AMX, seconds);
    return amx > dot ? amx : dot;
}
