/* sleapc bench: the report's shape (not its speed: speed is never tested).
 * A sample config with random weights on a small input, as JSON. */
#include <cjson/cJSON.h>
#include <string.h>

#include "test_util.h"


/* 1 when /proc/cpuinfo lists avx512_bf16 or amx_bf16, 0 when not, -1 when
 * there is no such file. */
static int cpu_has_bf16(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[8192];
    int has = 0;
    while (!has && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0)
            has = strstr(line, " avx512_bf16") || strstr(line, " amx_bf16");
    fclose(f);
    return has;
}

int main(void)
{
    test_require_data();
    char args[4096];
    snprintf(args, sizeof args,
             "bench --config '%s' --random-weights --size 64x64 --batch 1,2 --runs 10 "
             "--backend native --threads 2 --json",
             test_data_path("bench_configs/config_bottomup_unet_medium_rf.yaml"));
    CHECK_MSG(test_run_cli_stdout(args) == 0, "%s", test_cli_output());
    cJSON *j = cJSON_Parse(test_cli_output());
    CHECK_MSG(j != NULL, "not JSON: %s", test_cli_output());
    const cJSON *results = cJSON_GetObjectItem(j, "results");
    CHECK(cJSON_GetArraySize(results) == 2);
    const cJSON *r;
    cJSON_ArrayForEach(r, results)
    {
        const char *fields[] = {"ms_median", "ms_p99", "fps", "gflops_per_s", "peak_fraction"};
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
            CHECK_MSG(cJSON_IsNumber(cJSON_GetObjectItem(r, fields[k])), "missing %s", fields[k]);
        CHECK(cJSON_GetObjectItem(r, "ms_p99")->valuedouble >=
              cJSON_GetObjectItem(r, "ms_median")->valuedouble);
        CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "backend")), "native") == 0);
    }
    CHECK(cJSON_GetObjectItem(j, "gflop_per_frame")->valuedouble > 0);
    cJSON_Delete(j);

    /* "auto" rows name the backend it measured and chose. */
    snprintf(args, sizeof args,
             "bench --config '%s' --random-weights --size 64x64 --runs 10 --backend auto "
             "--threads 2 --json",
             test_data_path("bench_configs/config_bottomup_unet_medium_rf.yaml"));
    CHECK_MSG(test_run_cli_stdout(args) == 0, "%s", test_cli_output());
    j = cJSON_Parse(test_cli_output());
    r = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "results"), 0);
    const char *label = r ? cJSON_GetStringValue(cJSON_GetObjectItem(r, "backend")) : NULL;
    CHECK_MSG(label && (strcmp(label, "native") == 0 || strncmp(label, "auto:", 5) == 0),
              "backend \"%s\"", label ? label : "(none)");
    cJSON_Delete(j);

    /* A bf16 peak exactly where the CPU has a bf16 unit. */
    CHECK(test_run_cli_stdout("bench --peak --json --threads 1") == 0);
    j = cJSON_Parse(test_cli_output());
    const cJSON *peak = cJSON_GetObjectItem(j, "peak_gflops");
    CHECK(j && cJSON_GetObjectItem(peak, "fp32")->valuedouble > 0);
    int bf16 = cpu_has_bf16();
    if (bf16 >= 0 && peak)
        CHECK_MSG((cJSON_GetObjectItem(peak, "bf16")->valuedouble > 0) == bf16,
                  "bf16 peak %.1f, CPU %s bf16", cJSON_GetObjectItem(peak, "bf16")->valuedouble,
                  bf16 ? "has" : "lacks");
    cJSON_Delete(j);

    CHECK(test_run_cli_stdout("bench") == 1);
    snprintf(args, sizeof args, "bench --config '%s'",
             test_data_path("bench_configs/config_centroid_unet.yaml"));
    CHECK(test_run_cli_stdout(args) == 1);
    return test_finish();
}
