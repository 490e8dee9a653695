/* sleapc eval --match_method bbox from the command line: the summary, the
 * .npz with its .json beside it (bbox_mAP as sleap-nn's run of the same
 * case, tests/goldens/sleapnn-0.3.5-families/eval/bbox_ssd__video, within
 * 1e-9), auto picking bbox mode for box-only predictions, and what is
 * refused: masks as the GT source, the report page, and no predicted boxes
 * (no metrics, nothing written, exit 0, as sleap-nn). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define FAM SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define GT FAM "/eval/gt.slp"
#define BOXES FAM "/cases/bbox_ssd__video/pred.slp"

static double json_number(const char *path, const char *key)
{
    size_t n = 0;
    char *text = (char *)test_read_file(path, &n);
    char *z = text ? realloc(text, n + 1) : NULL;
    if (!z) {
        free(text);
        return NAN;
    }
    z[n] = '\0';
    cJSON *j = cJSON_Parse(z);
    free(z);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    const double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(j);
    return d;
}

static bool exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

int main(void)
{
    char args[2048], npz[1024], json[1024];
    snprintf(npz, sizeof npz, "%s", test_tmp_path("bbox_metrics.npz"));
    snprintf(json, sizeof json, "%s", test_tmp_path("bbox_metrics.json"));
    remove(npz);
    remove(json);
    /* auto: the predictions hold boxes and no instance */
    snprintf(args, sizeof args, "eval -g %s -p %s -s %s", GT, BOXES, npz);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "bbox mode (COCO)") &&
                  strstr(test_cli_output(), "| mAP @[.5:.95] | 0.1891 |") &&
                  strstr(test_cli_output(), "boxes from instances"),
              "rc %d: %s", rc, test_cli_output());
    CHECK(exists(npz) && exists(json));
    const double want = json_number(FAM "/eval/bbox_ssd__video/metrics.json", "bbox_mAP");
    CHECK_MSG(fabs(json_number(json, "bbox_mAP") - want) <= 1e-9, "bbox_mAP %.17g, want %.17g",
              json_number(json, "bbox_mAP"), want);

    snprintf(args, sizeof args, "eval -g %s -p %s --match_method bbox --bbox_source masks", GT,
             BOXES);
    rc = test_run_cli(args);
    CHECK_MSG(rc != 0 && strstr(test_cli_output(), "sleapc reads no masks"), "rc %d: %s", rc,
              test_cli_output());

    snprintf(args, sizeof args, "eval -g %s -p %s --report %s", GT, BOXES,
             test_tmp_path("bbox_report.html"));
    rc = test_run_cli(args);
    CHECK_MSG(rc != 0 && strstr(test_cli_output(), "no report page"), "rc %d: %s", rc,
              test_cli_output());

    /* pose predictions: no boxes, no metrics */
    char none[1024];
    snprintf(none, sizeof none, "%s", test_tmp_path("bbox_none.npz"));
    remove(none);
    snprintf(args, sizeof args, "eval -g %s -p %s --match_method bbox -s %s", GT,
             FAM "/cases/embedding__topdown_slp/pred.slp", none);
    rc = test_run_cli(args);
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "0 predicted boxes"), "rc %d: %s", rc,
              test_cli_output());
    CHECK(!exists(none));
    return test_finish();
}
