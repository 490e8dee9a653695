/* The bf16 fragility estimate (layers/bf16_fragility.h) against counted
 * events, where its assumptions hold by construction: float32 maps with a
 * known peak layout (quadratic peaks whose centre lies anywhere within their
 * cell; runner-up maxima and threshold margins spread around sigma), and
 * "bf16" maps that are the same plus independent normal errors of spread
 * sigma (a deterministic generator). Over thousands of peaks, the estimate's
 * expected count of peaks that move (a neighbour or, on a global-maximum
 * head, the runner-up overtakes the maximum) and that cross the threshold
 * must match the counted ones within 5 binomial standard deviations (plus
 * one event); a spread off
 * by sqrt2 would miss the ~500 events of each kind by ~200, twice that. With
 * no error, nothing moves and the spreads are zero. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layers/bf16_fragility.h"
#include "test_util.h"

#define N 4096 /* planes */
#define H 5
#define W 9
#define SIGMA 0.01
#define K 0.2 /* K/2 >> sqrt2 sigma: the estimate's premise */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

typedef struct events {
    double expected, sd;  /* from the estimate; binomial sd of the count */
    long counted;
} events;

static void check(const char *what, const events *e)
{
    double tol = 5 * e->sd + 1;
    printf("%-32s expected %8.1f  counted %6ld  (tolerance %.1f)\n", what, e->expected,
           e->counted, tol);
    CHECK_MSG(fabs((double)e->counted - e->expected) <= tol, "%s: expected %.1f, counted %ld",
              what, e->expected, e->counted);
}

/* Plane k: the maximum at (2, 2), a quadratic peak of second difference K
 * centred at a uniform random point of that cell, so that its neighbours
 * fall short of it by 0 to K/2; global planes also hold a runner-up maximum at
 * (2, 6), below by a gap from 0 to 5 sigma, with its own neighbours low;
 * threshold planes put the maximum at t + 0 to 4 sigma. The rest lies below
 * the threshold or far below the maximum's neighbours. */
static void fill(float *a, int kind, int k, double t)
{
    double f = (k + 0.5) / N; /* never 0: a tie would be two peaks */
    for (int i = 0; i < H * W; i++)
        a[i] = 0.1f;
    for (int y = 1; y <= 3; y++)
        for (int x = 1; x <= 3; x++)
            a[y * W + x] = 0.5f;
    a[2 * W + 2] = 1.0f;
    if (kind <= 1) {
        double x0 = 2 + uniform() - 0.5, y0 = 2 + uniform() - 0.5;
        for (int y = 1; y <= 3; y++)
            for (int x = 1; x <= 3; x++)
                a[y * W + x] = (float)(1.0 - 0.5 * K * ((x - x0) * (x - x0) + (y - y0) * (y - y0)));
    }
    if (kind == 1)
        a[2 * W + 6] = (float)(a[2 * W + 2] - 5 * SIGMA * f);
    if (kind == 2) {
        a[2 * W + 2] = (float)(t + 4 * SIGMA * f);
        for (int y = 1; y <= 3; y++)
            for (int x = 1; x <= 3; x++)
                if (y != 2 || x != 2)
                    a[y * W + x] = (float)(t - 0.3);
    }
}

static int64_t argmax(const float *a)
{
    int64_t best = 0;
    for (int64_t i = 1; i < H * W; i++)
        if (a[i] > a[best])
            best = i;
    return best;
}

static void run(int kind)
{
    const double t = 0.2;
    float *a = malloc(sizeof(float) * N * H * W), *b = malloc(sizeof(float) * N * H * W);
    CHECK(a && b);
    if (!a || !b) {
        free(a);
        free(b);
        return;
    }
    events moved = {0}, crossed = {0};
    for (int k = 0; k < N; k++) {
        float *pa = a + (size_t)k * H * W, *pb = b + (size_t)k * H * W;
        fill(pa, kind, k, t);
        for (int i = 0; i < H * W; i++)
            pb[i] = (float)(pa[i] + SIGMA * normal());
        if (kind == 2)
            crossed.counted += pb[2 * W + 2] < t;
        else
            moved.counted += argmax(pb) != 2 * W + 2;
    }
    sleapc_tensor t16 = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {N, 1, H, W}, .data = b};
    sleapc_tensor t32 = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {N, 1, H, W}, .data = a};
    const sleapc_tensor *m16[1] = {&t16}, *m32[1] = {&t32};
    bool global[1] = {kind == 1};
    sleapc_bf16_fragility f = sleapc__bf16_fragility(m16, m32, global, 1, (float)t);
    CHECK_MSG(f.peaks == N, "%lld peaks, want %d", (long long)f.peaks, N);
    /* Differences of two independent errors spread by sqrt2 sigma. */
    CHECK_MSG(fabs(f.sigma_d / (SIGMA * sqrt(2.0)) - 1) < 0.05, "sigma_d %.4g", f.sigma_d);
    CHECK_MSG(fabs(f.sigma_v / SIGMA - 1) < 0.05, "sigma_v %.4g", f.sigma_v);
    /* The binomial spread of a count whose mean is the estimate: at most
     * sqrt(mean), which is what is used. */
    moved.expected = f.moved * N;
    moved.sd = sqrt(moved.expected);
    crossed.expected = f.crossed * N;
    crossed.sd = sqrt(crossed.expected);
    if (kind == 2) {
        check("threshold crossings", &crossed);
    } else {
        check(kind ? "runner-up overtakes (global)" : "neighbour overtakes", &moved);
        CHECK_MSG(f.crossed < 1e-6, "crossed %.3g with the maximum 40 sigma up", f.crossed);
    }

    /* No error: nothing moves, nothing is spread. */
    sleapc_bf16_fragility z = sleapc__bf16_fragility(m32, m32, global, 1, (float)t);
    CHECK(z.peaks == N && z.sigma_d == 0 && z.sigma_v == 0 && z.crossed == 0);
    CHECK_MSG(z.moved == 0, "moved %.3g without any error", z.moved);
    free(a);
    free(b);
}

int main(void)
{
    for (int kind = 0; kind < 3; kind++)
        run(kind);
    return test_finish();
}
