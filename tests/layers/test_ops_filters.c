/* Post-inference filters on small hand-made outputs: the default config is
 * the identity, and each filter drops exactly what sleap-nn's
 * FilterPipeline drops. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/filters.h"
#include "test_util.h"

/* 1 frame, 4 slots, 3 nodes. */
enum { B = 1, I = 4, N = 3 };

typedef struct batch {
    float kp[B * I * N * 2];
    float vals[B * I * N];
    float scores[B * I];
    float cen[B * I * 2];
    float cen_vals[B * I];
} batch;

static void fill(batch *b)
{
    /* Slot 0: box (0,0)-(10,10), score 0.9. Slot 1: nearly the same box,
     * score 0.8. Slot 2: far away, one node missing, score 0.4. Slot 3:
     * empty. */
    const float kp[I][N][2] = {
        { { 0, 0 }, { 10, 10 }, { 5, 5 } },
        { { 0, 0 }, { 10, 11 }, { 5, 5 } },
        { { 100, 100 }, { 110, 108 }, { NAN, NAN } },
        { { NAN, NAN }, { NAN, NAN }, { NAN, NAN } },
    };
    const float vals[I][N] = { { 0.9f, 0.8f, 0.1f }, { 0.7f, 0.7f, 0.7f },
                               { 0.3f, 0.2f, NAN }, { NAN, NAN, NAN } };
    const float scores[I] = { 0.9f, 0.8f, 0.4f, NAN };
    const float cen[I][2] = { { 5, 5 }, { 5, 6 }, { 105, 104 }, { NAN, NAN } };
    const float cen_vals[I] = { 0.5f, 0.7f, 0.6f, NAN };
    memcpy(b->kp, kp, sizeof kp);
    memcpy(b->vals, vals, sizeof vals);
    memcpy(b->scores, scores, sizeof scores);
    memcpy(b->cen, cen, sizeof cen);
    memcpy(b->cen_vals, cen_vals, sizeof cen_vals);
}

static sleapc_filter_outputs view(batch *b)
{
    sleapc_filter_outputs o = { B, I, N, b->kp, b->vals, b->scores, b->cen, b->cen_vals };
    return o;
}

/* Slot i was dropped: every field NaN. */
static bool dropped(const batch *b, int i)
{
    bool all = isnan(b->scores[i]) && isnan(b->cen[2 * i]) && isnan(b->cen_vals[i]);
    for (int j = 0; j < N; j++)
        all = all && isnan(b->kp[(i * N + j) * 2]) && isnan(b->vals[i * N + j]);
    return all;
}

static void test_default_is_identity(void)
{
    batch a, b;
    fill(&a);
    fill(&b);
    sleapc_filter_config cfg = sleapc__filters_config_default();
    sleapc_filter_outputs o = view(&b);
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(cfg.overlapping_threshold == 0.8 && cfg.overlapping_method == SLEAPC_FILTER_OVERLAP_IOU);
}

static void test_min_peak_value(void)
{
    batch b;
    fill(&b);
    sleapc_filter_config cfg = sleapc__filters_config_default();
    cfg.min_peak_value = 0.25;
    sleapc_filter_outputs o = view(&b);
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    /* Slot 0 node 2 (0.1) and slot 2 node 1 (0.2) go; scores stay. */
    CHECK(isnan(b.kp[(0 * N + 2) * 2]) && isnan(b.kp[(0 * N + 2) * 2 + 1]) && isnan(b.vals[2]));
    CHECK(isnan(b.kp[(2 * N + 1) * 2]) && isnan(b.vals[2 * N + 1]));
    CHECK(b.kp[(2 * N + 0) * 2] == 100 && b.vals[2 * N] == 0.3f && b.scores[2] == 0.4f);
}

static void test_node_count(void)
{
    batch b;
    fill(&b);
    sleapc_filter_config cfg = sleapc__filters_config_default();
    cfg.min_visible_nodes = 3;
    sleapc_filter_outputs o = view(&b);
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(!dropped(&b, 0) && !dropped(&b, 1) && dropped(&b, 2));

    fill(&b);
    cfg = sleapc__filters_config_default();
    cfg.min_visible_node_fraction = 0.6; /* 2/3 passes */
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(!dropped(&b, 2));
    cfg.min_visible_node_fraction = 0.7;
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(dropped(&b, 2) && !dropped(&b, 0));
}

static void test_confidence(void)
{
    batch b;
    fill(&b);
    sleapc_filter_config cfg = sleapc__filters_config_default();
    cfg.min_instance_score = 0.8; /* 0.8 itself is kept (>=) */
    sleapc_filter_outputs o = view(&b);
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(!dropped(&b, 0) && !dropped(&b, 1) && dropped(&b, 2));

    fill(&b);
    cfg = sleapc__filters_config_default();
    cfg.min_mean_node_score = 0.6; /* means: 0.6, 0.7, 0.25 */
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(!dropped(&b, 1) && dropped(&b, 2));
    /* Slot 0's float32 mean (0.9 + 0.8 + 0.1) / 3 decides it either way. */
    const float mean0 = (0.9f + 0.8f + 0.1f) / 3.0f;
    CHECK(dropped(&b, 0) == !(mean0 >= 0.6f));

    /* Centroid-only outputs gate on the centroid values (no instance
     * scores); NaN values are dropped too. */
    fill(&b);
    sleapc_filter_outputs c = { B, I, N, NULL, NULL, NULL, b.cen, b.cen_vals };
    cfg = sleapc__filters_config_default();
    cfg.min_instance_score = 0.55;
    CHECK_OK(sleapc__filters_apply(&cfg, &c));
    CHECK(isnan(b.cen[0]) && isnan(b.cen_vals[0]));
    CHECK(b.cen[2] == 5 && b.cen_vals[1] == 0.7f && b.cen_vals[2] == 0.6f);
}

static void test_similarity(void)
{
    const float a[2][2] = { { 0, 0 }, { 2, 2 } };
    const float b[2][2] = { { 1, 1 }, { 3, 3 } };
    CHECK(fabs(sleapc__filters_bbox_iou(&a[0][0], &b[0][0], 2) - 1.0 / 7.0) < 1e-7);
    const float none[2][2] = { { NAN, NAN }, { NAN, NAN } };
    CHECK(sleapc__filters_bbox_iou(&a[0][0], &none[0][0], 2) == 0.0);
    CHECK(sleapc__filters_oks(&a[0][0], &a[0][0], 2) == 1.0);
    /* d^2 = 2 per point, area 4: exp(-2 / (2 * 4 * 0.01)) = exp(-25). */
    CHECK(fabs(sleapc__filters_oks(&a[0][0], &b[0][0], 2) - exp(-25.0)) < 1e-12);
    const float one[2][2] = { { 0, 0 }, { NAN, NAN } };
    CHECK(sleapc__filters_oks(&one[0][0], &a[0][0], 2) == 0.0);
}

static void test_overlapping(void)
{
    for (int m = 0; m < 2; m++) {
        batch b;
        fill(&b);
        sleapc_filter_config cfg = sleapc__filters_config_default();
        cfg.overlapping = true;
        cfg.overlapping_method = m ? SLEAPC_FILTER_OVERLAP_OKS : SLEAPC_FILTER_OVERLAP_IOU;
        sleapc_filter_outputs o = view(&b);
        CHECK_OK(sleapc__filters_apply(&cfg, &o));
        /* Slot 1 overlaps the better-scoring slot 0 (IoU 100/110). */
        CHECK_MSG(!dropped(&b, 0) && dropped(&b, 1) && !dropped(&b, 2), "method %d", m);
    }
    /* A threshold above the IoU keeps both (the test is strict >). */
    batch b;
    fill(&b);
    sleapc_filter_config cfg = sleapc__filters_config_default();
    cfg.overlapping = true;
    cfg.overlapping_threshold = 0.95;
    sleapc_filter_outputs o = view(&b);
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(!dropped(&b, 0) && !dropped(&b, 1));
}

static void test_centroid_distance(void)
{
    batch b;
    fill(&b);
    sleapc_filter_config cfg = sleapc__filters_config_default();
    cfg.min_centroid_distance = 2.0;
    sleapc_filter_outputs o = view(&b);
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    /* Centroid values 0.5 and 0.7 one pixel apart: the 0.7 one stays. */
    CHECK(dropped(&b, 0) && !dropped(&b, 1) && !dropped(&b, 2));
    fill(&b);
    cfg.min_centroid_distance = 1.0; /* distance 1 is not < 1 */
    CHECK_OK(sleapc__filters_apply(&cfg, &o));
    CHECK(!dropped(&b, 0) && !dropped(&b, 1));
}

static void test_errors(void)
{
    sleapc_filter_config cfg = sleapc__filters_config_default();
    sleapc_filter_outputs o = { -1, 1, 1, NULL, NULL, NULL, NULL, NULL };
    CHECK(sleapc__filters_apply(&cfg, &o) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__filters_apply(NULL, &o) == SLEAPC_ERR_INVALID_ARG);
    batch b;
    fill(&b);
    o = view(&b);
    cfg.overlapping = true;
    sleapc__alloc_fail_after(1);
    CHECK(sleapc__filters_apply(&cfg, &o) == SLEAPC_ERR_NOMEM);
    sleapc__alloc_fail_after(0);
}

int main(void)
{
    test_default_is_identity();
    test_min_peak_value();
    test_node_count();
    test_confidence();
    test_similarity();
    test_overlapping();
    test_centroid_distance();
    test_errors();
    return test_finish();
}
