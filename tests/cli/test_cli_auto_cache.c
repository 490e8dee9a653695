/* `sleapc predict` with the default backend "auto" and its cache: a run that
 * measures says so on stderr without -v and keeps the choice in the cache
 * folder (SLEAPC_CACHE_DIR); the next run says "cached", times nothing and
 * leaves the file as it was; a corrupt cache file is ignored; three runs
 * measuring at once leave a valid file; --quiet says nothing of it. The
 * first progress line's ETA leaves out the measuring: it is at most the
 * whole run's time, where counting a measurement made on the first batch
 * would put it at several times that. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

static char dir[1024], cache[1100], args[8192], model[2048], video[2048];

/* The one auto-*.txt in the cache folder; how many files there are. */
static int cache_file(char *path, size_t cap)
{
    char *names[16];
    int n = test_list_dir(cache, names, 16);
    for (int i = 0; i < n; i++) {
        if (i == 0)
            snprintf(path, cap, "%s/%s", cache, names[i]);
        free(names[i]);
    }
    return n;
}

static struct timespec mtime_of(const char *path)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    stat(path, &st);
    return st.st_mtim;
}

static int predict(const char *frames, const char *out, const char *extra)
{
    snprintf(args, sizeof args,
             "predict -m '%s' -i '%s' --frames %s --batch_size 4 -o '%s/%s' %s", model, video,
             frames, dir, out, extra);
    return test_run_cli(args);
}

/* "ETA mm:ss" of the first progress line, in seconds; -1 when none. */
static int first_eta(const char *text)
{
    const char *e = strstr(text, ", ETA ");
    int m, s;
    return e && sscanf(e + 6, "%d:%d", &m, &s) == 2 ? 60 * m + s : -1;
}

/* Seconds of the summary line ("... in 3.4 s (..."). */
static double run_seconds(const char *text)
{
    const char *e = strstr(text, " instances in ");
    double s;
    return e && sscanf(e + 14, "%lf", &s) == 1 ? s : -1;
}

int main(void)
{
    test_require_data();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/small_robot.mp4"));
    /* The suite pins the backend and keeps the cache off. */
    unsetenv("SLEAPC_BACKEND");
    unsetenv("SLEAPC_NO_CACHE");
    setenv("SLEAPC_CACHE_DIR", cache, 1);
    /* Four frames are far too few to repay timing: ask for it. */
    setenv("SLEAPC_AUTO_MEASURE", "full", 1);

    int rc = predict("0-3", "a.slp", "");
    CHECK_MSG(rc == 0, "first run: %s", test_cli_output());
    if (!strstr(test_cli_output(), "backend auto: ")) {
        /* One backend built in: auto is that backend, nothing to measure. */
        char path[2048];
        CHECK(cache_file(path, sizeof path) == 0);
        printf("only one backend built in: nothing to measure\n");
        return test_finish();
    }
    CHECK_MSG(strstr(test_cli_output(), "sleapc: backend auto: chose ") &&
                  strstr(test_cli_output(), "(measured in ") &&
                  strstr(test_cli_output(), "cached in "),
              "first run: %s", test_cli_output());
    char chosen[32] = "", on[64];
    const char *c = strstr(test_cli_output(), "auto: chose ");
    if (c)
        sscanf(c + 12, "%31[a-z0-9_]", chosen);
    snprintf(on, sizeof on, "model on %s ->", chosen);
    CHECK_MSG(strstr(test_cli_output(), on), "summary does not say %s: %s", chosen,
              test_cli_output());
    char path[2048] = "";
    CHECK_MSG(cache_file(path, sizeof path) == 1, "no cache file in %s", cache);
    struct timespec m0 = mtime_of(path);

    /* The next run, as a user runs it: the cached choice, nothing timed. */
    unsetenv("SLEAPC_AUTO_MEASURE");
    rc = predict("0-3", "b.slp", "");
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "(cached: ") &&
                  !strstr(test_cli_output(), "(measured in ") && strstr(test_cli_output(), on),
              "second run: %s", test_cli_output());
    struct timespec m1 = mtime_of(path);
    CHECK_MSG(m0.tv_sec == m1.tv_sec && m0.tv_nsec == m1.tv_nsec, "cache file rewritten");

    /* --quiet: not a word of it. */
    rc = predict("0-3", "q.slp", "--quiet");
    CHECK_MSG(rc == 0 && !strstr(test_cli_output(), "backend auto"), "quiet: %s",
              test_cli_output());

    /* A corrupt cache file: ignored (a short run then times nothing). */
    CHECK(test_write_file(path, "sleapc auto backend cache 1\nkey x\n\xff", 35));
    rc = predict("0-3", "c.slp", "");
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "(not measured: a run of 4 frames is too short") &&
                  !strstr(test_cli_output(), "error"),
              "corrupt cache: %s", test_cli_output());

    /* Three runs measuring at once: each succeeds, the file they leave is
     * whole and the next run uses it. */
    char cmd[16384];
    int n = snprintf(cmd, sizeof cmd, "cd '%s' || exit 1; ", dir);
    for (int i = 0; i < 3; i++)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n,
                      "(SLEAPC_AUTO_MEASURE=full '%s' predict -m '%s' -i '%s' --frames 0-3 "
                      "--batch_size 4 -o p%d.slp > p%d.log 2>&1; echo $? > p%d.rc) & ",
                      SLEAPC_CLI_PATH, model, video, i, i, i);
    snprintf(cmd + n, sizeof cmd - (size_t)n, "wait");
    CHECK(system(cmd) == 0);
    for (int i = 0; i < 3; i++) {
        char f[1200];
        snprintf(f, sizeof f, "%s/p%d.rc", dir, i);
        char *t = (char *)test_read_file(f, NULL);
        CHECK_MSG(t && atoi(t) == 0, "concurrent run %d failed", i);
        free(t);
    }
    CHECK_MSG(cache_file(path, sizeof path) == 1, "concurrent runs left %s as more than one file",
              cache);
    rc = predict("0-3", "d.slp", "");
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "(cached: "), "after concurrent runs: %s",
              test_cli_output());

    /* A measurement on the first batch stays out of the first ETA (an empty
     * cache, so that this run measures). */
    snprintf(cache, sizeof cache, "%s/cache2", dir);
    setenv("SLEAPC_CACHE_DIR", cache, 1);
    setenv("SLEAPC_AUTO_MEASURE", "full", 1);
    rc = predict("0-39", "e.slp", "--progress_interval 0.01");
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "(measured in "), "eta run: %s",
              test_cli_output());
    int eta = first_eta(test_cli_output());
    double total = run_seconds(test_cli_output());
    CHECK_MSG(eta >= 0 && total > 0 && eta <= total + 1, "first ETA %d s, the run took %.1f s: %s",
              eta, total, test_cli_output());
    return test_finish();
}
