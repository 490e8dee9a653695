/* sleap-nn 0.3.5's local peaks (#781, sleapc__peaks_find_local_flat): hand-
 * made maps with flat tops of every shape a 3x3 neighbourhood allows, against
 * the rule of inference/ops/peaks.py `find_local_peaks_rough`. sleap-nn 0.3.5
 * itself, run on these same maps (8 x 9, top value 0.8, threshold 0.2),
 * returns the peaks stated here; 0.3.3's strict finder returns none of the
 * multi-pixel tops. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "layers/convention.h"
#include "core/peaks.h"
#include "test_util.h"

#define H 8
#define W 9
#define TOP 0.8f
#define THR 0.2

typedef struct {
    const char *name;
    int n_cells;
    int cells[4][2]; /* (x, y), raster order: the first is the candidate */
    int peak;        /* 1: the cells are one peak; 0: no peak */
} flat_case;

/* Every top of 2 to 4 equal pixels a candidate can have (its equal
 * neighbours come after it: E, SW, S, SE), those that fit in a 2x2 block
 * and those that do not, at the border too. */
static const flat_case CASES[] = {
    {"one pixel", 1, {{3, 3}}, 1},
    {"pair E", 2, {{3, 3}, {4, 3}}, 1},
    {"pair S", 2, {{3, 3}, {3, 4}}, 1},
    {"pair SE", 2, {{3, 3}, {4, 4}}, 1},
    {"pair SW", 2, {{3, 3}, {2, 4}}, 1},
    {"L E S", 3, {{3, 3}, {4, 3}, {3, 4}}, 1},
    {"L E SE", 3, {{3, 3}, {4, 3}, {4, 4}}, 1},
    {"L S SE", 3, {{3, 3}, {3, 4}, {4, 4}}, 1},
    {"L SW S", 3, {{3, 3}, {2, 4}, {3, 4}}, 1},
    {"2x2 block", 4, {{3, 3}, {4, 3}, {3, 4}, {4, 4}}, 1},
    {"anti-diagonal pair", 2, {{4, 3}, {3, 4}}, 1},
    {"row of 3", 3, {{2, 3}, {3, 3}, {4, 3}}, 0},
    {"column of 3", 3, {{3, 2}, {3, 3}, {3, 4}}, 0},
    {"SW and SE", 3, {{3, 3}, {2, 4}, {4, 4}}, 0},
    {"top-left corner", 2, {{0, 0}, {1, 0}}, 1},
    {"bottom-right corner", 2, {{7, 7}, {8, 7}}, 1},
};

static void fill(float *map, const flat_case *fc)
{
    memset(map, 0, sizeof(float) * H * W);
    for (int i = 0; i < fc->n_cells; i++)
        map[fc->cells[i][1] * W + fc->cells[i][0]] = TOP;
}

/* The rule's point: the candidate plus the float32 mean offset of the top. */
static void expected_point(const flat_case *fc, float *x, float *y)
{
    int sx = 0, sy = 0;
    for (int i = 0; i < fc->n_cells; i++) {
        sx += fc->cells[i][0] - fc->cells[0][0];
        sy += fc->cells[i][1] - fc->cells[0][1];
    }
    *x = (float)fc->cells[0][0] + (float)((double)sx / fc->n_cells);
    *y = (float)fc->cells[0][1] + (float)((double)sy / fc->n_cells);
}

static void test_shapes(void)
{
    float map[H * W], pk[8], vals[4];
    int32_t si[4], ci[4];
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const flat_case *fc = &CASES[k];
        fill(map, fc);
        int64_t n = -1;
        CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
        CHECK_MSG(n == fc->peak, "%s: %lld peaks, want %d", fc->name, (long long)n, fc->peak);
        if (n == 1 && fc->peak == 1) {
            float x, y;
            expected_point(fc, &x, &y);
            CHECK_MSG(pk[0] == x && pk[1] == y, "%s: (%.9g, %.9g), want (%.9g, %.9g)", fc->name,
                      (double)pk[0], (double)pk[1], (double)x, (double)y);
            CHECK(vals[0] == TOP && si[0] == 0 && ci[0] == 0);
        }
        /* 0.3.3's strict rule: only the one-pixel top is a peak. */
        n = -1;
        CHECK_OK(sleapc__peaks_find_local(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
        CHECK_MSG(n == (fc->n_cells == 1), "%s: strict finder found %lld", fc->name, (long long)n);
    }
}

/* A top next to a pixel as high, or higher, outside it gives no peak; the
 * higher pixel is the peak. A NaN next to the top does not count (Torch's
 * >= with NaN is false), but a NaN next to the candidate rejects it (its
 * neighbourhood max is NaN). */
static void test_surroundings(void)
{
    float map[H * W], pk[8], vals[4];
    int32_t si[4], ci[4];
    int64_t n;
    const flat_case *pair = &CASES[1]; /* (3, 3), (4, 3) */

    fill(map, pair);
    map[4 * W + 5] = TOP; /* SE of (4, 3): the top is 3 wide */
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 0, "equal neighbour: %lld peaks", (long long)n);

    map[4 * W + 5] = 0.9f;
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 1 && pk[0] == 5.0f && pk[1] == 4.0f && vals[0] == 0.9f,
              "higher neighbour: %lld peaks", (long long)n);

    map[4 * W + 5] = NAN;
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 1 && pk[0] == 3.5f && pk[1] == 3.0f, "NaN by the top: %lld peaks", (long long)n);

    fill(map, &CASES[0]);
    map[2 * W + 2] = NAN; /* NW of the candidate */
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 0, "NaN before: %lld peaks", (long long)n);
    fill(map, &CASES[0]);
    map[4 * W + 4] = NAN; /* SE of the candidate */
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 0, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 0, "NaN after: %lld peaks", (long long)n);

    /* At the threshold: strictly above only. */
    fill(map, pair);
    map[3 * W + 3] = map[3 * W + 4] = 0.25f;
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, 0.25, 0, 4, pk, vals, si, ci, &n));
    CHECK(n == 0);
}

/* Refinement anchors a fractional peak at the pixel it floors to, which for
 * a top going south-west is left of the candidate: (3, 3) with (2, 4) gives
 * (2.5, 3.5), refined around (2, 3). A slope under the top makes the two
 * anchors' patches differ. sleap-nn 0.3.5 gives (2.40119767, 3.49900198)
 * here. */
static void test_refined_anchor(void)
{
    float map[H * W], pk[8], vals[4];
    int32_t si[4], ci[4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            map[y * W + x] = 0.005f * (float)(x + 2 * y);
    map[3 * W + 3] = map[4 * W + 2] = TOP;
    int64_t n = -1;
    CHECK_OK(sleapc__peaks_find_local_flat(map, 1, 1, H, W, THR, 5, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 1, "%lld peaks", (long long)n);
    float ax, ay, cx, cy;
    CHECK_OK(sleapc__peaks_refine_integral(map, H, W, 5, 2, 3, &ax, &ay));
    CHECK_OK(sleapc__peaks_refine_integral(map, H, W, 5, 3, 3, &cx, &cy));
    CHECK_MSG(n == 1 && pk[0] == ax && pk[1] == ay, "(%.9g, %.9g), want (%.9g, %.9g)",
              (double)pk[0], (double)pk[1], (double)ax, (double)ay);
    CHECK(ax != cx || ay != cy); /* the anchor matters on this map */
}

/* Several maps: order is sample, row, column, channel, as for strict
 * peaks. */
static void test_order_and_bound(void)
{
    float maps[2 * 2 * H * W];
    fill(maps, &CASES[9]);              /* sample 0, channel 0: block at (3.5, 3.5) */
    fill(maps + H * W, &CASES[14]);     /* sample 0, channel 1: (0.5, 0) */
    fill(maps + 2 * H * W, &CASES[4]);  /* sample 1, channel 0: (2.5, 3.5) */
    fill(maps + 3 * H * W, &CASES[15]); /* sample 1, channel 1: (7.5, 7) */
    float pk[8], vals[4];
    int32_t si[4], ci[4];
    int64_t n = -1;
    CHECK_OK(sleapc__peaks_find_local_flat(maps, 2, 2, H, W, THR, 0, 4, pk, vals, si, ci, &n));
    CHECK(n == 4);
    const float want[4][2] = {{0.5f, 0.0f}, {3.5f, 3.5f}, {2.5f, 3.5f}, {7.5f, 7.0f}};
    const int32_t want_s[4] = {0, 0, 1, 1}, want_c[4] = {1, 0, 0, 1};
    for (int i = 0; i < 4 && n == 4; i++)
        CHECK_MSG(pk[2 * i] == want[i][0] && pk[2 * i + 1] == want[i][1] && si[i] == want_s[i] &&
                      ci[i] == want_c[i],
                  "peak %d: (%g, %g) s%d c%d", i, (double)pk[2 * i], (double)pk[2 * i + 1], si[i],
                  ci[i]);

    /* A checkerboard of 2x2 blocks: each block touches the next ones at its
     * corners, pixels as high outside it, so no block is a peak. */
    float board[H * W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            board[y * W + x] = ((x / 2 + y / 2) % 2) ? 0.9f : 0.0f;
    n = -1;
    CHECK_OK(
        sleapc__peaks_find_local_flat(board, 1, 1, H, W, THR, 0, 0, NULL, NULL, NULL, NULL, &n));
    CHECK_MSG(n == 0, "checkerboard: %lld peaks", (long long)n);
}

/* The conventions: sleap-nn's finds flat tops when the run asks for them
 * (0.3.5, the stage's flat_tops) and strict maxima otherwise (0.3.3); SLEAP
 * 1.x's keeps strict maxima either way. */
static void test_conventions(void)
{
    float map[H * W], pk[8], vals[4];
    int32_t si[4], ci[4];
    int64_t n;
    fill(map, &CASES[1]);
    const sleapc_convention *nn = &sleapc__convention_sleap_nn, *s1 = &sleapc__convention_sleap1;
    CHECK_OK(nn->find_local(map, 1, 1, H, W, THR, 0, true, 4, pk, vals, si, ci, &n));
    CHECK(n == 1 && pk[0] == 3.5f && pk[1] == 3.0f);
    CHECK_OK(nn->find_local(map, 1, 1, H, W, THR, 0, false, 4, pk, vals, si, ci, &n));
    CHECK(n == 0);
    CHECK_OK(s1->find_local(map, 1, 1, H, W, THR, 0, true, 4, pk, vals, si, ci, &n));
    CHECK(n == 0);
}

int main(void)
{
    test_shapes();
    test_surroundings();
    test_refined_anchor();
    test_order_and_bound();
    test_conventions();
    return test_finish();
}
