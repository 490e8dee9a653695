/* sleapc demo: the synthetic sample's predictions land within 1 px of the
 * known keypoints (issue goal: >= 99% of points), and its model folder is a
 * sleap-nn model folder the other commands read. Needs no shared data. */
#include <string.h>
#include <sys/wait.h>

#include "test_util.h"

static char output[65536];

static int run_cli(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", SLEAPC_CLI_PATH, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void)
{
    char args[4096];
    snprintf(args, sizeof args, "demo '%s/demo' --frames 16 --threads 2", test_tmp_dir());
    CHECK_MSG(run_cli(args) == 0, "%s", output);
    CHECK_MSG(strstr(output, "result:       PASS") != NULL, "%s", output);
    CHECK(strstr(output, "points 48, found 48") != NULL);

    snprintf(args, sizeof args, "info -m '%s/demo/model'", test_tmp_dir());
    CHECK_MSG(run_cli(args) == 0, "%s", output);
    CHECK(strstr(output, "type:           single_instance") != NULL);
    CHECK(strstr(output, "head->thorax") != NULL);

    snprintf(args, sizeof args, "demo '%s/demo' --frames 0", test_tmp_dir());
    CHECK(run_cli(args) == 1 && strstr(output, "sleapc: error: --frames") != NULL);
    return test_finish();
}
