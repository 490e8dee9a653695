/* PAF candidate enumeration and line scoring: unit checks of the order, the
 * sampling and the penalty, then every bottom-up reference case's stored
 * peaks and PAFs against sleap-nn's candidates and line scores. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "core/paf.h"
#include "ops_bottomup_case.h"
#include "test_util.h"

static void test_linspace(void)
{
    /* n = 10 (sleap-nn's default) gives the correctly rounded j / 9. */
    float t[32];
    sleapc__paf_linspace(10, t);
    for (int j = 0; j < 10; j++)
        CHECK_MSG(t[j] == (float)((double)j / 9.0), "t[%d] = %.9g", j, (double)t[j]);
    sleapc__paf_linspace(1, t);
    CHECK(t[0] == 0.0f);
    sleapc__paf_linspace(2, t);
    CHECK(t[0] == 0.0f && t[1] == 1.0f);
    /* Every value within an ulp or so of j / (n - 1), ascending. */
    for (int n = 3; n <= 32; n++) {
        sleapc__paf_linspace(n, t);
        for (int j = 0; j < n; j++) {
            double want = (double)j / (double)(n - 1);
            CHECK_MSG(fabs(t[j] - want) <= 2.5e-7, "n=%d j=%d %.9g", n, j, (double)t[j]);
            if (j)
                CHECK(t[j] > t[j - 1]);
        }
    }
}

static void test_max_edge_length(void)
{
    /* The channel count 2E joins the max of the PAF sizes (sleap-nn quirk). */
    CHECK(sleapc__paf_max_edge_length(0.25, 1, 96, 80, 4) == 0.25 * 96 * 4);
    CHECK(sleapc__paf_max_edge_length(0.25, 100, 96, 80, 4) == 0.25 * 200 * 4);
    CHECK(sleapc__paf_max_edge_length(0.5, 2, 10, 30, 2) == 0.5 * 30 * 2);
}

static void test_candidate_order(void)
{
    const int edges[2][2] = { { 0, 1 }, { 1, 2 } };
    const int32_t ch[5] = { 1, 0, 2, 0, 1 };
    int64_t n = -1;
    CHECK_OK(sleapc__paf_count_candidates(ch, 5, 3, edges, 2, &n));
    CHECK(n == 6);
    int32_t ei[6];
    int64_t epi[6][2];
    CHECK_OK(sleapc__paf_candidates(ch, 5, 3, edges, 2, 6, ei, epi, &n));
    /* Edge order, then source-major, each node's peaks in peak order. */
    const int64_t want[6][3] = { { 0, 1, 0 }, { 0, 1, 4 }, { 0, 3, 0 },
                                 { 0, 3, 4 }, { 1, 0, 2 }, { 1, 4, 2 } };
    CHECK(n == 6);
    for (int i = 0; i < 6 && n == 6; i++)
        CHECK_MSG(ei[i] == want[i][0] && epi[i][0] == want[i][1] && epi[i][1] == want[i][2],
                  "candidate %d: %d (%lld, %lld)", i, (int)ei[i], (long long)epi[i][0],
                  (long long)epi[i][1]);

    /* Too little room, a bad node and a bad edge are refused. */
    CHECK(sleapc__paf_candidates(ch, 5, 3, edges, 2, 5, ei, epi, &n) == SLEAPC_ERR_INVALID_ARG);
    const int32_t bad_ch[2] = { 0, 3 };
    CHECK(sleapc__paf_count_candidates(bad_ch, 2, 3, edges, 2, &n) == SLEAPC_ERR_INVALID_ARG);
    const int bad_edges[1][2] = { { 0, 7 } };
    CHECK(sleapc__paf_count_candidates(ch, 5, 3, bad_edges, 1, &n) == SLEAPC_ERR_INVALID_ARG);
}

static void test_scoring_synthetic(void)
{
    /* One edge, a 10 x 12 field pointing along +x with stride 2. */
    enum { H = 10, W = 12 };
    float pafs[2 * H * W];
    for (int i = 0; i < H * W; i++) {
        pafs[i] = 1.0f;         /* x component */
        pafs[H * W + i] = 0.0f; /* y component */
    }
    const float peaks[6][2] = { { 2, 4 }, { 6, 4 }, { 2, 8 }, { 2, 4 }, { 400, 4 }, { -9, -9 } };
    const int32_t ei[5] = { 0, 0, 0, 0, 0 };
    const int64_t epi[5][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 5, 1 } };
    sleapc_paf_score_opts o = sleapc__paf_score_opts_default();
    o.paf_stride = 2;
    float s[5];
    CHECK_OK(sleapc__paf_score_lines(pafs, 1, H, W, &peaks[0][0], 6, ei, epi, 5, &o, s));
    CHECK(s[0] == 1.0f); /* along the field, shorter than 6: no penalty */
    CHECK(s[1] == 0.0f); /* across the field */
    CHECK(isnan(s[2]));  /* zero length */
    /* max_edge_length = 0.25 * max(2, 12, 10) * 2 = 6; the line is 398 long
     * and samples clip to the map edge: 1 + (6 / 398 - 1). */
    CHECK_MSG(fabsf(s[3] - (6.0f / 398.0f)) < 1e-6f, "%.9g", (double)s[3]);
    CHECK(isfinite(s[4]));

    /* Every sample counted once whatever the summation blocking (scalar
     * below 8 points, vector lanes above, cascaded levels past 512). */
    const int counts[] = { 1, 3, 7, 8, 9, 17, 40, 600 };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        o.n_points = counts[i];
        CHECK_OK(sleapc__paf_score_lines(pafs, 1, H, W, &peaks[0][0], 6, ei, epi, 1, &o, s));
        CHECK_MSG(s[0] == 1.0f, "n_points %d: %.9g", counts[i], (double)s[0]);
    }
    o.n_points = 10;

    const int32_t bad_ei[1] = { 1 };
    CHECK(sleapc__paf_score_lines(pafs, 1, H, W, &peaks[0][0], 6, bad_ei, epi, 1, &o, s) ==
          SLEAPC_ERR_INVALID_ARG);
    const int64_t bad_epi[1][2] = { { 0, 6 } };
    CHECK(sleapc__paf_score_lines(pafs, 1, H, W, &peaks[0][0], 6, ei, bad_epi, 1, &o, s) ==
          SLEAPC_ERR_INVALID_ARG);
    o.n_points = 0;
    CHECK(sleapc__paf_score_lines(pafs, 1, H, W, &peaks[0][0], 6, ei, epi, 1, &o, s) ==
          SLEAPC_ERR_INVALID_ARG);
}

static void test_reference_case(const char *id)
{
    bu_case c;
    if (!bu_case_load(id, &c)) {
        bu_case_free(&c);
        return;
    }
    const int64_t n_peaks = c.peaks.shape[0];
    const int64_t k_want = c.edge_inds.shape[0];
    int64_t k = -1;
    CHECK_OK(sleapc__paf_count_candidates(c.peak_channel_inds.data, n_peaks, c.n_nodes, c.edges,
                                          c.n_edges, &k));
    CHECK_MSG(k == k_want, "%s: %lld candidates, want %lld", id, (long long)k,
              (long long)k_want);
    int32_t *ei = sleapc__malloc((size_t)(k > 0 ? k : 1) * sizeof *ei);
    int64_t(*epi)[2] = sleapc__malloc((size_t)(k > 0 ? k : 1) * sizeof *epi);
    float *scores = sleapc__malloc((size_t)(k > 0 ? k : 1) * sizeof *scores);
    int64_t n = -1;
    CHECK_OK(sleapc__paf_candidates(c.peak_channel_inds.data, n_peaks, c.n_nodes, c.edges,
                                    c.n_edges, k, ei, epi, &n));
    if (n == k_want) {
        /* Indices must agree exactly. */
        const int32_t *ei_want = c.edge_inds.data;
        const int64_t *epi_want = c.edge_peak_inds.data;
        int64_t n_bad = 0;
        for (int64_t i = 0; i < n; i++)
            n_bad += ei[i] != ei_want[i] || epi[i][0] != epi_want[2 * i] ||
                     epi[i][1] != epi_want[2 * i + 1];
        CHECK_MSG(n_bad == 0, "%s: %lld candidates differ", id, (long long)n_bad);

        CHECK_OK(sleapc__paf_score_lines(c.pafs.data, c.n_edges, c.pafs.shape[2],
                                         c.pafs.shape[3], c.peaks.data, n_peaks, ei,
                                         (const int64_t(*)[2])epi, n, &c.score_opts, scores));
        ref_diff d = { 0 };
        ref_diff_add(&d, scores, c.line_scores.data, n);
        /* README: line scores agree to ~1e-5 (float32, Torch's batched dot
         * product and mean sum in their own order). */
        CHECK_MSG(d.max_abs <= 1e-5 && d.n_nan_mismatch == 0,
                  "%s: line scores max |err| %.3g, %lld NaN mismatches", id, d.max_abs,
                  (long long)d.n_nan_mismatch);
        printf("%-44s candidates %3lld exact; line scores max |err| %.3g (%lld of %lld differ "
               "in any bit)\n",
               id, (long long)n, d.max_abs, (long long)d.n_diff_bits, (long long)d.n);
    }
    sleapc__free(ei);
    sleapc__free(epi);
    sleapc__free(scores);
    bu_case_free(&c);
}

int main(void)
{
    test_linspace();
    test_max_edge_length();
    test_candidate_order();
    test_scoring_synthetic();

    test_require_data();
    static ref_cases all;
    const char *ids[REF_MAX_CASES];
    int n = bu_list_cases(&all, ids, REF_MAX_CASES);
    CHECK_MSG(n >= 9, "found only %d bottom-up cases", n);
    for (int i = 0; i < n; i++)
        test_reference_case(ids[i]);
    return test_finish();
}
