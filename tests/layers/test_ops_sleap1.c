/* SLEAP 1.x variants of the post-processing ops: the +0.5 px input-scale
 * step, SLEAP's peak refinement (integral through crop_and_resize, and the
 * quarter-pixel "local" one), global peaks below the threshold, class-map
 * look-ups outside the map, top-down class grouping, and PAF line scoring
 * with out-of-map samples. Expected values follow from the definitions. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "layers/ops/coords.h"
#include "layers/ops/identity.h"
#include "core/paf.h"
#include "core/peaks.h"
#include "layers/ops/peaks_sleap1.h"
#include "test_util.h"

static void test_coords(void)
{
    float xy[4] = {10.0f, 3.0f, NAN, 1.0f};
    sleapc__coords_undo_input_scale_sleap1(xy, 2, 0.5);
    CHECK(xy[0] == 20.5f && xy[1] == 6.5f && isnan(xy[2]) && xy[3] == 2.5f);
    sleapc__coords_undo_input_scale_sleap1(xy, 2, 1.0); /* identity at 1 */
    CHECK(xy[0] == 20.5f && xy[1] == 6.5f);
}

static void test_refine(void)
{
    enum { H = 9, W = 9 };
    float map[H * W];
    memset(map, 0, sizeof map);
    /* Two equal cells side by side: the integral offset is half a cell. */
    map[4 * W + 4] = 1.0f;
    map[4 * W + 5] = 1.0f;
    float xy[2] = {4, 4};
    CHECK_OK(sleapc__peaks_sleap1_refine(map, H, W, 5, xy));
    CHECK_MSG(xy[0] == 4.5f && xy[1] == 4.0f, "got (%g, %g)", (double)xy[0], (double)xy[1]);
    /* Local refinement: a quarter pixel towards the larger neighbour. */
    float lxy[2] = {4, 4};
    CHECK_OK(sleapc__peaks_sleap1_refine(map, H, W, 0, lxy));
    CHECK(lxy[0] == 4.25f && lxy[1] == 4.0f);
    /* At the bottom-right corner the box leaves the map; outside reads 0. */
    memset(map, 0, sizeof map);
    map[8 * W + 8] = 2.0f;
    map[8 * W + 7] = 2.0f;
    float cxy[2] = {8, 8};
    CHECK_OK(sleapc__peaks_sleap1_refine(map, H, W, 5, cxy));
    CHECK(cxy[0] == 7.5f && cxy[1] == 8.0f);
    float nxy[2] = {NAN, NAN};
    CHECK_OK(sleapc__peaks_sleap1_refine(map, H, W, 5, nxy));
    CHECK(isnan(nxy[0]) && isnan(nxy[1]));
    CHECK(sleapc__peaks_sleap1_refine(map, H, W, SLEAPC_PEAKS_MAX_PATCH + 1, xy) ==
          SLEAPC_ERR_INVALID_ARG);
}

/* On odd patches SLEAP's crop lands on whole cells, so its integral
 * refinement equals sleap-nn's up to summation order (1e-5 cells). */
static void test_local_matches_sleap_nn(void)
{
    enum { H = 24, W = 20 };
    float map[2 * H * W];
    for (int c = 0; c < 2; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float dx = (float)x - (c ? 13.3f : 4.6f), dy = (float)y - (c ? 7.8f : 18.2f);
                map[(c * H + y) * W + x] = expf(-(dx * dx + dy * dy) / 6.0f);
            }
    float p1[16], v1[8], p2[16], v2[8];
    int32_t s1[8], c1[8], s2[8], c2[8];
    int64_t n1 = 0, n2 = 0;
    CHECK_OK(sleapc__peaks_sleap1_find_local(map, 1, 2, H, W, 0.2, 5, 8, p1, v1, s1, c1, &n1));
    CHECK_OK(sleapc__peaks_find_local(map, 1, 2, H, W, 0.2, 5, 8, p2, v2, s2, c2, &n2));
    CHECK(n1 == 2 && n2 == 2);
    for (int64_t i = 0; i < n1 && n1 == n2; i++) {
        CHECK(c1[i] == c2[i] && v1[i] == v2[i]);
        CHECK(fabsf(p1[2 * i] - p2[2 * i]) < 1e-5f && fabsf(p1[2 * i + 1] - p2[2 * i + 1]) < 1e-5f);
    }
}

static void test_global_below_threshold(void)
{
    float map[2 * 3 * 3];
    memset(map, 0, sizeof map);
    map[4] = 0.1f;      /* channel 0: below 0.2 */
    map[9 + 4] = 0.9f;  /* channel 1 */
    float peaks[4], vals[2];
    CHECK_OK(sleapc__peaks_sleap1_find_global(map, 1, 2, 3, 3, 0.2, 0, peaks, vals));
    /* SLEAP blanks the point but keeps its value (sleap-nn gives 0). */
    CHECK(isnan(peaks[0]) && isnan(peaks[1]) && vals[0] == 0.1f);
    CHECK(peaks[2] == 1.0f && peaks[3] == 1.0f && vals[1] == 0.9f);
}

static void test_classify_outside(void)
{
    /* 2 classes, 4 x 4 maps at stride 2; border cell (3, 1) reads (0.8, 0.2). */
    float maps[2 * 16];
    memset(maps, 0, sizeof maps);
    maps[1 * 4 + 1] = 0.9f;
    maps[16 + 1 * 4 + 1] = 0.1f;
    maps[1 * 4 + 3] = 0.8f;
    maps[16 + 1 * 4 + 3] = 0.2f;
    /* p0 at cell (1, 1); p1 at x = 9 px = cell 4.5 -> 4: outside the map. */
    const float peaks[2][2] = {{2, 2}, {9, 2}};
    const float vals[2] = {0.5f, 0.6f};
    const int32_t samp[2] = {0, 0}, ch[2] = {0, 0};
    float pts[2 * 2], pv[2], cp[2];
    /* SLEAP 1.x: p1 reads (0, 0); the assignment gives it class 1, and 0 is
     * its largest probability, so it stays with probability 0. */
    CHECK_OK(sleapc__identity_classify_peaks_sleap1(maps, 1, 2, 4, 4, 2, &peaks[0][0], vals,
                                                    samp, ch, 2, 1, NULL, pts, pv, cp));
    CHECK(pts[0] == 2 && pv[0] == 0.5f && cp[0] == 0.9f);
    CHECK(pts[2] == 9 && pv[1] == 0.6f && cp[1] == 0.0f);
    /* sleap-nn clamps: p1 reads the border (0.8, 0.2), is matched to class 1,
     * which is not its best, and is dropped. */
    CHECK_OK(sleapc__identity_classify_peaks(maps, 1, 2, 4, 4, 2, &peaks[0][0], vals, samp, ch,
                                             2, 1, NULL, pts, pv, cp));
    CHECK(pts[0] == 2 && cp[0] == 0.9f && isnan(pts[2]) && isnan(cp[1]));
}

static void test_topdown_classes(void)
{
    /* Frame 0: A (0.9, 0.1), B (0.6, 0.4): the assignment pairs B with
     * class 1, not its best, so B is dropped. Frame 1: one crop, class 1.
     * Frame 2: three crops, two classes: one is left over. */
    const float vecs[6][2] = {{0.9f, 0.1f}, {0.6f, 0.4f}, {0.3f, 0.7f},
                              {0.2f, 0.8f}, {0.7f, 0.3f}, {0.6f, 0.4f}};
    const int64_t frame[6] = {0, 0, 1, 2, 2, 2};
    int64_t cls[6];
    float prob[6];
    CHECK_OK(
        sleapc__identity_topdown_classes_sleap1(&vecs[0][0], 6, 2, frame, 3, NULL, cls, prob));
    CHECK(cls[0] == 0 && prob[0] == 0.9f && cls[1] == -1 && isnan(prob[1]));
    CHECK(cls[2] == 1 && prob[2] == 0.7f);
    CHECK(cls[3] == 1 && cls[4] == 0 && cls[5] == -1);
    const int64_t bad[1] = {3};
    CHECK(sleapc__identity_topdown_classes_sleap1(&vecs[0][0], 1, 2, bad, 3, NULL, cls, prob) ==
          SLEAPC_ERR_INVALID_ARG);
}

static void test_paf_outside(void)
{
    /* One edge, 4 x 4 PAF at stride 1, field (1, 0) everywhere. */
    float pafs[2 * 16];
    for (int i = 0; i < 16; i++) {
        pafs[i] = 1.0f;
        pafs[16 + i] = 0.0f;
    }
    const float peaks[3][2] = {{0, 1}, {3, 1}, {6, 1}};
    const int32_t edge_inds[2] = {0, 0};
    const int64_t epi[2][2] = {{0, 1}, {0, 2}};
    sleapc_paf_score_opts o = sleapc__paf_score_opts_default();
    /* max edge length 0.25 * max(4, 4, 2) * 1 = 1 px. */
    float sleap1[2], nn[2];
    o.sleap1 = true;
    CHECK_OK(sleapc__paf_score_lines(pafs, 1, 4, 4, &peaks[0][0], 3, edge_inds, epi, 2, &o,
                                     sleap1));
    o.sleap1 = false;
    CHECK_OK(sleapc__paf_score_lines(pafs, 1, 4, 4, &peaks[0][0], 3, edge_inds, epi, 2, &o, nn));
    /* Inside: every sample reads 1; penalty 1/3 - 1. */
    CHECK(fabsf(sleap1[0] - (1.0f + (1.0f / 3.0f - 1.0f))) < 1e-6f);
    CHECK(fabsf(nn[0] - sleap1[0]) < 1e-6f);
    /* To x = 6: samples x = 6j/9 round to 0 1 1 2 3 3 4 5 5 6; SLEAP reads 0
     * for the four beyond x = 3 (mean 0.6), sleap-nn clips them onto the
     * border (mean 1). Penalty 1/6 - 1. */
    CHECK_MSG(fabsf(sleap1[1] - (0.6f + (1.0f / 6.0f - 1.0f))) < 1e-6f, "got %g",
              (double)sleap1[1]);
    CHECK(fabsf(nn[1] - (1.0f + (1.0f / 6.0f - 1.0f))) < 1e-6f);
}

int main(void)
{
    test_coords();
    test_refine();
    test_local_matches_sleap_nn();
    test_global_below_threshold();
    test_classify_outside();
    test_topdown_classes();
    test_paf_outside();
    return test_finish();
}
