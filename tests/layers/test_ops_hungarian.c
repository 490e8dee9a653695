/* Rectangular assignment: optimality against brute force on random small
 * matrices (square, wide, tall, ties, forbidden pairs), scipy's tie-breaking
 * on constant matrices, and the NaN / -inf / infeasible rules. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/hungarian.h"
#include "test_util.h"

/* xorshift: reproducible matrices without libc rand(). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Cheapest cost of a full assignment of min(r, c) pairs, by trying every
 * injective map of the smaller side into the larger one; INFINITY when none
 * avoids the forbidden pairs. */
static double brute_force(const double *cost, int r, int c)
{
    const bool tall = r > c;
    const int n_small = tall ? c : r, n_big = tall ? r : c;
    int pick[8];
    bool used[8] = { false };
    double best = INFINITY;
    /* Depth-first over picks for the small side. */
    int depth = 0;
    pick[0] = -1;
    while (depth >= 0) {
        if (depth == n_small) {
            double total = 0.0;
            for (int i = 0; i < n_small; i++)
                total += tall ? cost[pick[i] * c + i] : cost[i * c + pick[i]];
            best = total < best ? total : best;
            depth--;
            continue;
        }
        if (pick[depth] >= 0)
            used[pick[depth]] = false;
        int next = pick[depth] + 1;
        while (next < n_big && used[next])
            next++;
        if (next >= n_big) {
            pick[depth] = -1;
            depth--;
            continue;
        }
        pick[depth] = next;
        used[next] = true;
        depth++;
        if (depth < n_small)
            pick[depth] = -1;
    }
    return best;
}

static void test_random_against_brute_force(void)
{
    double cost[36];
    int64_t row[6], col[6];
    int n_checked = 0, n_infeasible = 0;
    for (int trial = 0; trial < 3000; trial++) {
        const int r = 1 + (int)(rng_next() % 6), c = 1 + (int)(rng_next() % 6);
        const int kind = (int)(rng_next() % 3);
        for (int i = 0; i < r * c; i++) {
            if (kind == 0) /* continuous */
                cost[i] = (double)(rng_next() % 1000000) / 1000.0 - 500.0;
            else /* few distinct values: many ties */
                cost[i] = (double)(rng_next() % 3);
            if (kind == 2 && rng_next() % 5 < 2)
                cost[i] = INFINITY;
        }
        const double want = brute_force(cost, r, c);
        const int k = r < c ? r : c;
        sleapc_status st = sleapc__hungarian_solve(cost, r, c, row, col);
        if (want == INFINITY) {
            CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG, "trial %d: infeasible not reported", trial);
            n_infeasible++;
            int64_t n_pairs = -1;
            CHECK_OK(sleapc__hungarian_solve_partial(cost, r, c, row, col, &n_pairs));
            CHECK(n_pairs < k);
            for (int64_t i = 0; i < n_pairs; i++)
                CHECK(cost[row[i] * c + col[i]] != INFINITY);
            continue;
        }
        CHECK_OK(st);
        double got = 0.0;
        bool col_used[6] = { false }, valid = true;
        for (int i = 0; i < k; i++) {
            valid = valid && row[i] >= 0 && row[i] < r && col[i] >= 0 && col[i] < c &&
                    !col_used[col[i]] && (i == 0 || row[i] > row[i - 1]);
            if (!valid)
                break;
            col_used[col[i]] = true;
            got += cost[row[i] * c + col[i]];
        }
        CHECK_MSG(valid, "trial %d (%dx%d): not a valid assignment sorted by row", trial, r, c);
        CHECK_MSG(valid && fabs(got - want) <= 1e-9, "trial %d (%dx%d): cost %g, optimum %g",
                  trial, r, c, got, want);
        /* Feasible: the partial solver must give scipy's answer unchanged. */
        int64_t prow[6], pcol[6], n_pairs = -1;
        CHECK_OK(sleapc__hungarian_solve_partial(cost, r, c, prow, pcol, &n_pairs));
        CHECK(n_pairs == k && memcmp(prow, row, (size_t)k * sizeof *row) == 0 &&
              memcmp(pcol, col, (size_t)k * sizeof *col) == 0);
        n_checked++;
    }
    CHECK_MSG(n_checked > 1000 && n_infeasible > 40, "%d checked, %d infeasible", n_checked,
              n_infeasible);
}

static void test_constant_matrix_ties(void)
{
    /* scipy scans columns from the last and prefers a free column among
     * equals, so constant matrices give the identity (scipy issue 11602). */
    double zeros[16] = { 0 };
    int64_t row[4], col[4];
    CHECK_OK(sleapc__hungarian_solve(zeros, 4, 4, row, col));
    for (int i = 0; i < 4; i++)
        CHECK(row[i] == i && col[i] == i);
    CHECK_OK(sleapc__hungarian_solve(zeros, 2, 4, row, col));
    CHECK(row[0] == 0 && col[0] == 0 && row[1] == 1 && col[1] == 1);
    CHECK_OK(sleapc__hungarian_solve(zeros, 4, 2, row, col));
    CHECK(row[0] == 0 && col[0] == 0 && row[1] == 1 && col[1] == 1);
}

static void test_tall_tie(void)
{
    /* Three rows, two columns; column 1 is tied between rows 0 and 2, and
     * row 1 is clearly best for column 0. scipy solves the transpose: the
     * second transposed row scans columns 2, 1, 0 and settles on the free
     * column 0 among the equals, so row 0 (not row 2) gets column 1. */
    const double cost[6] = { -1e-13, -1.0, -2e-12, -1.0, -1e-21, -1.0 };
    int64_t row[2], col[2];
    CHECK_OK(sleapc__hungarian_solve(cost, 3, 2, row, col));
    CHECK_MSG(row[0] == 0 && col[0] == 1 && row[1] == 1 && col[1] == 0,
              "got (%lld, %lld), (%lld, %lld)", (long long)row[0], (long long)col[0],
              (long long)row[1], (long long)col[1]);
}

static void test_invalid_entries(void)
{
    int64_t row[2], col[2], n = -1;
    const double with_nan[4] = { 0.0, NAN, 1.0, 2.0 };
    CHECK(sleapc__hungarian_solve(with_nan, 2, 2, row, col) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__hungarian_solve_partial(with_nan, 2, 2, row, col, &n) ==
          SLEAPC_ERR_INVALID_ARG);
    const double with_neg_inf[4] = { 0.0, -INFINITY, 1.0, 2.0 };
    CHECK(sleapc__hungarian_solve(with_neg_inf, 2, 2, row, col) == SLEAPC_ERR_INVALID_ARG);

    /* Column 0 is forbidden: scipy calls this infeasible; the partial
     * solver keeps the cheapest single pair. */
    const double blocked[4] = { INFINITY, 1.0, INFINITY, 2.0 };
    CHECK(sleapc__hungarian_solve(blocked, 2, 2, row, col) == SLEAPC_ERR_INVALID_ARG);
    CHECK_OK(sleapc__hungarian_solve_partial(blocked, 2, 2, row, col, &n));
    CHECK(n == 1 && row[0] == 0 && col[0] == 1);
    const double all_inf[2] = { INFINITY, INFINITY };
    CHECK_OK(sleapc__hungarian_solve_partial(all_inf, 1, 2, row, col, &n));
    CHECK(n == 0);

    /* +inf alone is fine when a finite assignment exists. */
    const double some_inf[4] = { INFINITY, 1.0, 3.0, INFINITY };
    CHECK_OK(sleapc__hungarian_solve(some_inf, 2, 2, row, col));
    CHECK(col[0] == 1 && col[1] == 0);

    /* Empty matrices give no pairs. */
    CHECK_OK(sleapc__hungarian_solve(NULL, 0, 3, NULL, NULL));
    CHECK_OK(sleapc__hungarian_solve_partial(NULL, 3, 0, NULL, NULL, &n));
    CHECK(n == 0);
    CHECK(sleapc__hungarian_solve(some_inf, -1, 2, row, col) == SLEAPC_ERR_INVALID_ARG);
}

static void test_out_of_memory(void)
{
    const double cost[4] = { 1.0, 2.0, 3.0, 4.0 };
    int64_t row[2], col[2];
    sleapc__alloc_fail_after(1);
    CHECK(sleapc__hungarian_solve(cost, 2, 2, row, col) == SLEAPC_ERR_NOMEM);
    sleapc__alloc_fail_after(0);
    CHECK_OK(sleapc__hungarian_solve(cost, 2, 2, row, col));
    CHECK(col[0] == 0 && col[1] == 1);
}

int main(void)
{
    test_random_against_brute_force();
    test_constant_matrix_ties();
    test_tall_tie();
    test_invalid_entries();
    test_out_of_memory();
    return test_finish();
}
