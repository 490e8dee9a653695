/* An instance's centroid by sleap-nn 0.3.5's generate_centroids on small
 * hand-made instances: the mean and box midpoint ignore missing nodes, the
 * anchor falls back when its node is missing, and the config values sleapc
 * cannot compute or that contradict each other are refused, naming the key. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "layers/ops/instance_centroids.h"
#include "test_util.h"

/* 3 nodes, node 1 missing. */
static const float PTS[] = {0.0f, 0.0f, NAN, NAN, 10.0f, 4.0f};
static const float NONE[] = {NAN, NAN, NAN, NAN};

static void check_xy(const sleapc_centroid_rule *r, const float *pts, int n, float x, float y)
{
    float c[2];
    sleapc__instance_centroid(r, pts, n, c);
    CHECK_MSG(c[0] == x && c[1] == y, "centroid (%g, %g), want (%g, %g)", c[0], c[1], x, y);
}

static void check_refused(int anchor, const char *method, const char *fallback, const char *key)
{
    sleapc_centroid_rule r;
    CHECK(sleapc__centroid_rule_resolve(anchor, method, fallback, "cfg", &r) != SLEAPC_OK);
    CHECK_MSG(strstr(sleapc_last_error(), key) != NULL, "error names %s: %s", key,
              sleapc_last_error());
}

int main(void)
{
    sleapc_centroid_rule r;
    /* Nothing set: the NaN-ignoring mean. */
    CHECK_OK(sleapc__centroid_rule_resolve(-1, NULL, NULL, "cfg", &r));
    CHECK(r.method == SLEAPC_CENTROID_CENTER_OF_MASS);
    check_xy(&r, PTS, 3, 5.0f, 2.0f);
    float c[2];
    sleapc__instance_centroid(&r, NONE, 2, c);
    CHECK(isnan(c[0]) && isnan(c[1]));

    CHECK_OK(sleapc__centroid_rule_resolve(-1, "bbox_center", NULL, "cfg", &r));
    const float box[] = {0.0f, 1.0f, 4.0f, 9.0f, 3.0f, 2.0f};
    check_xy(&r, box, 3, 2.0f, 5.0f);

    /* An anchor: that node, else the fallback (center_of_mass by default). */
    CHECK_OK(sleapc__centroid_rule_resolve(2, NULL, NULL, "cfg", &r));
    CHECK(r.method == SLEAPC_CENTROID_ANCHOR && r.anchor == 2);
    check_xy(&r, PTS, 3, 10.0f, 4.0f);
    CHECK_OK(sleapc__centroid_rule_resolve(1, "anchor", NULL, "cfg", &r));
    check_xy(&r, PTS, 3, 5.0f, 2.0f);
    CHECK_OK(sleapc__centroid_rule_resolve(1, NULL, "bbox_center", "cfg", &r));
    const float three[] = {0.0f, 0.0f, NAN, NAN, 10.0f, 4.0f, 2.0f, 10.0f};
    check_xy(&r, three, 4, 5.0f, 5.0f);

    check_refused(-1, "geometric_median", NULL, "centroid_method");
    check_refused(0, NULL, "anchor", "centroid_fallback");
    check_refused(0, "center_of_mass", NULL, "anchor_part");
    check_refused(-1, "anchor", NULL, "anchor_part");
    return test_finish();
}
