/* sleapc bench --latency: the report's shape and consistency (not its speed:
 * speed is never tested), on a real model and video. */
#include <cjson/cJSON.h>
#include <string.h>

#include "test_util.h"

static double field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

int main(void)
{
    test_require_data();
    char args[8192], model[2048], video[2048];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/small_robot.mp4"));
    snprintf(args, sizeof args, "bench --latency -m '%s' --video '%s' --runs 10 --threads 2 --json",
             model, video);
    CHECK_MSG(test_run_cli_stdout(args) == 0, "%s", test_cli_output());
    cJSON *j = cJSON_Parse(test_cli_output());
    CHECK_MSG(j != NULL, "not JSON: %s", test_cli_output());
    const char *layer = cJSON_GetStringValue(cJSON_GetObjectItem(j, "layer"));
    CHECK(layer && strcmp(layer, "SingleInstanceLayer") == 0);
    CHECK(field(j, "frames") == 10);
    CHECK(field(j, "batch") == 1);
    /* One robot in every frame of this clip. */
    CHECK(field(j, "instances") == 10);
    const cJSON *mem = cJSON_GetObjectItem(j, "in_memory_ms"), *dec = cJSON_GetObjectItem(j, "with_decoding_ms");
    CHECK(field(mem, "p50") > 0 && field(mem, "p50") <= field(mem, "p99") &&
          field(mem, "p99") <= field(mem, "max"));
    CHECK(field(dec, "p50") > 0 && field(dec, "p50") <= field(dec, "p99") &&
          field(dec, "p99") <= field(dec, "max"));
    const cJSON *cpu = cJSON_GetObjectItem(j, "cpu_ms");
    CHECK(field(cpu, "p50") > 0 && field(cpu, "p50") <= field(cpu, "p99") &&
          field(cpu, "p99") <= field(cpu, "max"));
    /* Decoding adds to the same frames' times. */
    CHECK(field(dec, "max") >= field(mem, "p50"));
    cJSON_Delete(j);

    /* Without models, and with more frames than the video has: clear errors. */
    CHECK(test_run_cli("bench --latency") == 1);
    CHECK(strstr(test_cli_output(), "-m") != NULL);
    snprintf(args, sizeof args, "bench --latency -m '%s' --video '%s' --runs 100000", model, video);
    CHECK(test_run_cli(args) == 1);
    CHECK_MSG(strstr(test_cli_output(), "frames") != NULL, "%s", test_cli_output());
    return test_finish();
}
