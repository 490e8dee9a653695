/* eval and eval-tracking read predictions in any format sleapc writes: the
 * same predictions as .slp, sleapc .json and analysis .h5 (converted by
 * sleapc convert) give the same metrics file, and the same tracking figures
 * (the points are float32 values in every one of them, so "the same" is
 * byte for byte). */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static char *metrics_of(const char *gt, const char *pred, const char *tag)
{
    char out[1024], args[4096];
    snprintf(out, sizeof out, "%s/metrics_%s.json", test_tmp_dir(), tag);
    snprintf(args, sizeof args, "eval -q -g '%s' -p '%s' -s '%s'", gt, pred, out);
    CHECK_MSG(test_run_cli(args) == 0, "%s: %s", tag, test_cli_output());
    size_t n = 0;
    char *text = (char *)test_read_file(out, &n);
    if (text) {
        text = realloc(text, n + 1);
        text[n] = '\0';
    }
    return text;
}

int main(void)
{
    test_require_data();
    char gt[1024], gt13[1024], slp[1024], json[1024], h5[1024], args[4096];
    snprintf(gt, sizeof gt, "%s", test_data_path("sleap-assets/tracks/clip.2node.slp"));
    snprintf(gt13, sizeof gt13, "%s", test_data_path("sleap-assets/tracks/clip.slp"));
    snprintf(slp, sizeof slp, "%s", test_data_path("sleap-assets/tracks/clip.predictions.slp"));
    snprintf(json, sizeof json, "%s/p.json", test_tmp_dir());
    snprintf(h5, sizeof h5, "%s/p.h5", test_tmp_dir());
    snprintf(args, sizeof args, "convert -q '%s' '%s'", slp, json);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args, "convert -q '%s' '%s'", slp, h5);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());

    char *a = metrics_of(gt, slp, "slp"), *b = metrics_of(gt, json, "json"),
         *c = metrics_of(gt, h5, "h5");
    CHECK(a && b && c && strlen(a) > 1000);
    CHECK_MSG(a && b && !strcmp(a, b), ".json predictions give other metrics");
    CHECK_MSG(a && c && !strcmp(a, c), ".h5 predictions give other metrics");
    free(a);
    free(b);
    free(c);

    const char *preds[3] = {slp, json, h5};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "eval-tracking --compat 0.3.3 -g '%s' -p '%s'", gt13, preds[k]);
        CHECK_MSG(test_run_cli(args) == 0 && strstr(test_cli_output(), "| IDF1 | 0.9116 |") &&
                      strstr(test_cli_output(), "| ID switches | 15 |"),
                  "%s: %s", preds[k], test_cli_output());
    }
    return test_finish();
}
