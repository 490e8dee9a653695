/* sleapc eval on bad input: each failure exits non-zero with a message that
 * names what does not match, and writes no metrics; and the .npz / .json
 * pair sleap-nn saves. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static char out[1024];

/* Run eval with args; expect failure mentioning `needle` and no output. */
static void expect_error(const char *args, const char *needle)
{
    char cmd[4096];
    remove(out);
    snprintf(cmd, sizeof cmd, "eval -q -s '%s' %s", out, args);
    const int rc = test_run_cli(cmd);
    CHECK_MSG(rc != 0 && strstr(test_cli_output(), needle), "eval %s: rc %d, want \"%s\": %s", args,
              rc, needle, test_cli_output());
    FILE *f = fopen(out, "rb");
    CHECK_MSG(!f, "eval %s: wrote %s", args, out);
    if (f)
        fclose(f);
}

int main(void)
{
    test_require_data();
    snprintf(out, sizeof out, "%s/metrics.json", test_tmp_dir());
    char clip[1024], preds[1024], other[1024], empty[1024], args[4096];
    snprintf(clip, sizeof clip, "%s", test_data_path("sleap-assets/tracks/clip.slp"));
    snprintf(preds, sizeof preds, "%s", test_data_path("sleap-assets/tracks/clip.predictions.slp"));
    snprintf(
        other, sizeof other, "%s",
        test_data_path("sleap-nn-assets/model_ckpts/single_instance_with_metrics/pred_val_0.slp"));
    snprintf(empty, sizeof empty, "%s/empty.slp", test_tmp_dir());
    CHECK(test_write_file(empty, "", 0));

    /* 13-node labels against 2-node predictions: OKS compares node by node */
    snprintf(args, sizeof args, "-g '%s' -p '%s' --match_method oks", clip, preds);
    expect_error(args, "skeletons differ");
    /* predictions of another video: nothing pairs */
    snprintf(args, sizeof args, "-g '%s' -p '%s' --match_method centroid", clip, other);
    expect_error(args, "no video of");
    /* an empty file, as either side */
    snprintf(args, sizeof args, "-g '%s' -p '%s'", empty, preds);
    expect_error(args, "empty.slp");
    snprintf(args, sizeof args, "-g '%s' -p '%s'", clip, empty);
    expect_error(args, "empty.slp");
    /* ground truth without user instances */
    snprintf(args, sizeof args, "-g '%s' -p '%s'", preds, preds);
    expect_error(args, "no user-labeled instances");
    /* bad options */
    snprintf(args, sizeof args, "-g '%s' -p '%s' --match_method mask", clip, preds);
    expect_error(args, "match_method");
    snprintf(args, sizeof args, "-g '%s' -p '%s' --oks_stddev x", clip, preds);
    expect_error(args, "oks_stddev");
    expect_error("-g only.slp", "required");

    /* -s X.npz: sleap-nn's pickled .npz (a zip holding metrics.npy) and X.json */
    char npz[1024], json[1024];
    snprintf(npz, sizeof npz, "%s/m.npz", test_tmp_dir());
    snprintf(json, sizeof json, "%s/m.json", test_tmp_dir());
    snprintf(args, sizeof args,
             "eval -q -g '%s' -p '%s' --match_method centroid "
             "--anchor_part head -s '%s'",
             clip, preds, npz);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    size_t n = 0;
    unsigned char *z = test_read_file(npz, &n);
    CHECK(z && n > 100 && !memcmp(z, "PK\x03\x04", 4) && !memcmp(z + 30, "metrics.npy", 11));
    free(z);
    char *j = (char *)test_read_file(json, &n);
    CHECK(j && n > 10 && strstr(j, "\"detection_metrics\""));
    free(j);
    return test_finish();
}
