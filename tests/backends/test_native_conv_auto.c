/* --conv auto repeats its choices: a conv's method, once timed, is kept in
 * the auto cache and used by every later plan of the same key without
 * timing; of concurrent first runs (SLURM shards) all use the choice the
 * first to finish kept; SLEAPC_CONV pins what auto means. The speed of the
 * methods is not asserted (bench/), only that choices are kept and reused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/auto_cache.h"
#include "backends/native/native_conv_choose.h"
#include "backends/native/native_kernels.h"
#include "test_util.h"

/* Large enough to be timed (MIN_TIMED_FLOP), small enough to be quick. */
enum { C = 32, H = 24, W = 24, N_CHILDREN = 4 };

static char cache_dir[1024];

static native_conv *make_conv(void)
{
    float *wt = malloc(sizeof(float) * C * C * 9);
    unsigned s = 1;
    for (int i = 0; i < C * C * 9; i++) {
        s = s * 1664525u + 1013904223u;
        wt[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    native_conv *conv = NULL;
    CHECK_OK(sleapc__native_conv_create(C, C, 3, 3, wt, NULL, true, &conv));
    free(wt);
    return conv;
}

static int choose(native_conv *conv, sleapc_threadpool *tp, const char *prefix, int node)
{
    CHECK_OK(sleapc__native_conv_choose(conv, NULL, C, C, tp, NATIVE_CONV_AUTO, 0, prefix, node, 2, H,
                                        W));
    return sleapc__native_conv_winograd(conv);
}

static const char *name_of(int m)
{
    return m == 0 ? "direct" : m == 2 ? "f2" : m == 4 ? "f4" : "f6";
}

static void key_of(const char *prefix, int node, char *key, size_t cap)
{
    snprintf(key, cap, "%s node %d input %dx%dx%d", prefix, node, C, H, W);
}

static int count_files(void)
{
    char *names[64];
    int n = test_list_dir(cache_dir, names, 64);
    for (int i = 0; i < n; i++)
        free(names[i]);
    return n < 0 ? 0 : n;
}

/* The first choice is kept; a later plan uses what the cache says, even a
 * choice this run's timing would not make (it is not timed again). */
static void check_kept_and_reused(native_conv *conv, sleapc_threadpool *tp)
{
    const char *prefix = "test kept";
    int m = choose(conv, tp, prefix, 1);
    char key[512];
    key_of(prefix, 1, key, sizeof key);
    sleapc_auto_entry e;
    CHECK_MSG(sleapc__auto_cache_load(key, &e), "no entry kept for the timed conv");
    CHECK_MSG(strcmp(e.chosen, name_of(m)) == 0, "kept %s, ran %s", e.chosen, name_of(m));
    double ms;
    CHECK(sleapc__auto_entry_get(&e, "direct", &ms) && ms >= 0);

    int other = m == 0 ? 2 : 0;
    snprintf(e.chosen, sizeof e.chosen, "%s", name_of(other));
    CHECK_OK(sleapc__auto_cache_store(key, &e));
    for (int run = 0; run < 3; run++)
        CHECK_MSG(choose(conv, tp, prefix, 1) == other, "run %d did not reuse the kept %s", run,
                  name_of(other));
    /* Another node is another key: timed, and kept beside. */
    int before = count_files();
    choose(conv, tp, prefix, 2);
    CHECK(count_files() == before + 1);
}

/* Of concurrent writers, the first entry stays and every writer reads it. */
static void check_first_writer_wins(void)
{
    const char *key = "test first writer";
    sleapc_auto_entry a = {.chosen = "f4"}, b = {.chosen = "direct"}, kept;
    sleapc__auto_entry_set(&a, "f4", 1.0);
    sleapc__auto_entry_set(&b, "direct", 0.5);
    CHECK(sleapc__auto_cache_store_first(key, &a, &kept) && strcmp(kept.chosen, "f4") == 0);
    CHECK(sleapc__auto_cache_store_first(key, &b, &kept) && strcmp(kept.chosen, "f4") == 0);
    /* A file that does not parse is replaced. */
    char path[2048];
    CHECK(sleapc__auto_cache_path(key, path, sizeof path));
    CHECK(test_write_file(path, "not a cache file\n", 17));
    CHECK(sleapc__auto_cache_store_first(key, &b, &kept) && strcmp(kept.chosen, "direct") == 0);
}

/* Processes started together on an empty cache (shards of one job) each
 * time the conv, and all run the same method. */
static void check_concurrent_processes(native_conv *conv)
{
    const char *prefix = "test concurrent";
    pid_t pid[N_CHILDREN];
    for (int k = 0; k < N_CHILDREN; k++) {
        pid[k] = fork();
        if (pid[k] == 0) {
            sleapc_threadpool *tp = NULL;
            if (sleapc__threadpool_create(1, &tp) != SLEAPC_OK)
                _exit(100);
            if (sleapc__native_conv_choose(conv, NULL, C, C, tp, NATIVE_CONV_AUTO, 0, prefix, 7, 1, H,
                                           W) != SLEAPC_OK)
                _exit(101);
            int m = sleapc__native_conv_winograd(conv);
            sleapc__threadpool_destroy(tp);
            _exit(m);
        }
        CHECK(pid[k] > 0);
    }
    int first = -1;
    for (int k = 0; k < N_CHILDREN; k++) {
        int status = 0;
        CHECK(pid[k] > 0 && waitpid(pid[k], &status, 0) == pid[k] && WIFEXITED(status));
        int m = WEXITSTATUS(status);
        CHECK_MSG(m <= 6, "child %d failed (%d)", k, m);
        if (first < 0)
            first = m;
        CHECK_MSG(m == first, "child %d ran %s, child 0 %s", k, name_of(m), name_of(first));
    }
    char key[512];
    key_of(prefix, 7, key, sizeof key);
    sleapc_auto_entry e;
    CHECK(sleapc__auto_cache_load(key, &e) && strcmp(e.chosen, name_of(first)) == 0);
}

static void check_pin(void)
{
    test_setenv("SLEAPC_CONV", "direct");
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_AUTO) == NATIVE_CONV_DIRECT);
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_WINOGRAD) == NATIVE_CONV_WINOGRAD);
    test_setenv("SLEAPC_CONV", "winograd");
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_AUTO) == NATIVE_CONV_WINOGRAD);
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_DIRECT) == NATIVE_CONV_DIRECT);
    test_setenv("SLEAPC_CONV", NULL);
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_AUTO) == NATIVE_CONV_AUTO);
}

int main(void)
{
    /* The suite keeps the cache off and pins auto to direct. */
    test_setenv("SLEAPC_NO_CACHE", NULL);
    test_setenv("SLEAPC_CONV", NULL);
    snprintf(cache_dir, sizeof cache_dir, "%s/conv-cache", test_tmp_dir());
    test_setenv("SLEAPC_CACHE_DIR", cache_dir);
    check_pin();
    native_conv *conv = make_conv();
    sleapc_threadpool *tp = NULL;
    CHECK_OK(sleapc__threadpool_create(1, &tp));
    if (conv && tp) {
        check_kept_and_reused(conv, tp);
        check_first_writer_wins();
        check_concurrent_processes(conv);
        /* Without a cache nothing is kept, and the conv still gets a method. */
        test_setenv("SLEAPC_NO_CACHE", "1");
        int before = count_files();
        choose(conv, tp, "test no cache", 1);
        CHECK(count_files() == before);
    }
    sleapc__threadpool_destroy(tp);
    sleapc__native_conv_destroy(conv);
    return test_finish();
}
