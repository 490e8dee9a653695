/* The settings table (core/settings.c): each variable read from the
 * environment once, values set through sleapc_setting_set winning over it,
 * values a setting does not take refused, developer switches out of the API's
 * reach (and of the environment's in a build without SLEAPC_DEV_SETTINGS), a
 * cache folder of none writing nothing, and docs/library.md's table matching
 * the C table row for row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/auto_cache.h"
#include "backends/native/native_conv_choose.h"
#include "core/mem_budget.h"
#include "core/settings.h"
#include "core/threadpool.h"
#include "test_util.h"

enum { C = 32, H = 24, W = 24 };

static const char *get(const char *name)
{
    static char buf[4096];
    CHECK_OK(sleapc_setting_get(name, buf, sizeof buf));
    return buf;
}

#define CHECK_GET(name, want)                                                                      \
    CHECK_MSG(strcmp(get(name), want) == 0, "%s: \"%s\", expected \"%s\"", name, get(name), want)

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int count_files(const char *dir)
{
    char *names[64];
    int n = test_list_dir(dir, names, 64);
    for (int i = 0; i < n; i++)
        free(names[i]);
    return n < 0 ? 0 : n;
}

/* Read once: the environment at the first read holds until a reload. */
static void check_environment(void)
{
    setenv("SLEAPC_BACKEND", "native", 1);
    setenv("SLEAPC_CONV", "direct", 1);
    setenv("SLEAPC_AUTO_MEASURE", "off", 1);
    setenv("SLEAPC_NO_CACHE", "1", 1);
    setenv("SLEAPC_MEMORY_LIMIT", "8G", 1);
    setenv("SLEAPC_LIVE_TIMEOUT_S", "2.5", 1);
    setenv("SLEAPC_OVERLAP", "0", 1);
    char buf[64];
    CHECK(sleapc__settings_backend_pin(buf, sizeof buf) && strcmp(buf, "native") == 0);
    CHECK(sleapc__settings_conv() == SLEAPC_SETTINGS_CONV_DIRECT);
    CHECK(sleapc__settings_auto_measure() == SLEAPC_SETTINGS_MEASURE_OFF);
    CHECK(!sleapc__settings_cache_dir(buf, sizeof buf));
    CHECK(sleapc__settings_memory_limit(buf, sizeof buf) && strcmp(buf, "8G") == 0);
    CHECK(sleapc__settings_live_timeout_s() == 2.5);
    CHECK(sleapc__settings_overlap() == 0);
    CHECK_GET("backend", "native");
    CHECK_GET("conv", "direct");
    CHECK_GET("auto_measure", "off");
    CHECK_GET("cache_dir", "");
    CHECK_GET("memory_limit", "8G");
    CHECK_GET("live_timeout_s", "2.5");
    CHECK_GET("overlap", "0");

    /* Changed after the first read: not seen until the settings are read again. */
    setenv("SLEAPC_BACKEND", "onednn", 1);
    setenv("SLEAPC_OVERLAP", "yes", 1);
    CHECK_GET("backend", "native");
    sleapc__settings_reload();
    CHECK_GET("backend", "onednn");
    CHECK(sleapc__settings_overlap() == 1);
    CHECK_GET("overlap", "1");

    /* Unset: the fallbacks. */
    const char *vars[] = {"SLEAPC_BACKEND",      "SLEAPC_CONV",           "SLEAPC_AUTO_MEASURE",
                          "SLEAPC_MEMORY_LIMIT", "SLEAPC_LIVE_TIMEOUT_S", "SLEAPC_OVERLAP"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    sleapc__settings_reload();
    CHECK(!sleapc__settings_backend_pin(buf, sizeof buf));
    CHECK(sleapc__settings_conv() == SLEAPC_SETTINGS_CONV_AUTO);
    CHECK(sleapc__settings_auto_measure() == SLEAPC_SETTINGS_MEASURE_AUTO);
    CHECK(!sleapc__settings_memory_limit(buf, sizeof buf));
    CHECK(sleapc__settings_live_timeout_s() == 0.0);
    CHECK(sleapc__settings_overlap() == -1);
    CHECK_GET("backend", "auto");
    CHECK_GET("conv", "auto");
    CHECK_GET("auto_measure", "auto");
    /* As always read: "auto" pins nothing; a timeout out of range is none. */
    setenv("SLEAPC_BACKEND", "auto", 1);
    setenv("SLEAPC_LIVE_TIMEOUT_S", "7200", 1);
    sleapc__settings_reload();
    CHECK(!sleapc__settings_backend_pin(buf, sizeof buf));
    CHECK(sleapc__settings_live_timeout_s() == 0.0);
    unsetenv("SLEAPC_BACKEND");
    unsetenv("SLEAPC_LIVE_TIMEOUT_S");
    sleapc__settings_reload();
}

/* The API wins over the environment until dropped; bad values are refused. */
static void check_api(void)
{
    setenv("SLEAPC_BACKEND", "native", 1);
    sleapc__settings_reload();
    char buf[64];
    CHECK_OK(sleapc_setting_set("backend", "auto"));
    CHECK(!sleapc__settings_backend_pin(buf, sizeof buf));
    CHECK_GET("backend", "auto");
    /* Still set after the environment is read again. */
    sleapc__settings_reload();
    CHECK_GET("backend", "auto");
    CHECK_OK(sleapc_setting_set("backend", NULL));
    CHECK_GET("backend", "native");
    unsetenv("SLEAPC_BACKEND");
    sleapc__settings_reload();

    CHECK_OK(sleapc_setting_set("conv", "winograd"));
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_AUTO) == NATIVE_CONV_WINOGRAD);
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_DIRECT) == NATIVE_CONV_DIRECT);
    CHECK_OK(sleapc_setting_set("conv", ""));
    CHECK(sleapc__native_conv_method_of(SLEAPC_CONV_AUTO) == NATIVE_CONV_AUTO);
    CHECK_OK(sleapc_setting_set("conv", NULL));

    CHECK_OK(sleapc_setting_set("live_timeout_s", "30"));
    CHECK(sleapc__settings_live_timeout_s() == 30.0);
    CHECK_OK(sleapc_setting_set("live_timeout_s", NULL));
    CHECK_OK(sleapc_setting_set("overlap", "1"));
    CHECK(sleapc__settings_overlap() == 1);
    CHECK_OK(sleapc_setting_set("overlap", NULL));
    CHECK_OK(sleapc_setting_set("auto_measure", "full"));
    CHECK(sleapc__settings_auto_measure() == SLEAPC_SETTINGS_MEASURE_FULL);
    CHECK_OK(sleapc_setting_set("auto_measure", NULL));

    /* A memory limit set here caps the budget, and says where it came from. */
    CHECK_OK(sleapc_setting_set("memory_limit", "64M"));
    sleapc_mem_budget b = sleapc__mem_budget();
    CHECK_MSG(b.bytes <= 64 << 20 && strstr(b.limit, "SLEAPC_MEMORY_LIMIT"), "%lld: %s",
              (long long)b.bytes, b.limit);
    CHECK(sleapc__mem_check(1LL << 30, "a test") == SLEAPC_ERR_NOMEM);
    CHECK_OK(sleapc_setting_set("memory_limit", "")); /* none, whatever the environment says */
    b = sleapc__mem_budget();
    CHECK(strstr(b.limit, "SLEAPC_MEMORY_LIMIT") == NULL);
    CHECK_OK(sleapc_setting_set("memory_limit", NULL));

    struct {
        const char *name, *value, *says;
    } bad[] = {
        {"no_such", "1", "no such setting"},
        {NULL, "1", "no such setting"},
        {"bf16_force", "1", "developer switch"},
        {"vulkan_validation", NULL, "developer switch"},
        {"conv", "fast", "auto, direct, winograd"},
        {"auto_measure", "always", "auto, full, off"},
        {"backend", "Native!", "a backend name"},
        {"memory_limit", "lots", "bytes"},
        {"memory_limit", "-1G", "bytes"},
        {"live_timeout_s", "0", "seconds"},
        {"live_timeout_s", "5s", "seconds"},
        {"live_timeout_s", "3601", "seconds"},
        {"overlap", "on", "0, 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sleapc_status st = sleapc_setting_set(bad[i].name, bad[i].value);
        CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG && strstr(sleapc_last_error(), bad[i].says),
                  "%s=%s: %d: %s", bad[i].name ? bad[i].name : "NULL",
                  bad[i].value ? bad[i].value : "NULL", (int)st, sleapc_last_error());
    }
    CHECK(sleapc_setting_get("no_such", buf, sizeof buf) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_setting_get("backend", NULL, 8) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_setting_get("backend", buf, 3) == SLEAPC_ERR_INVALID_ARG &&
          strstr(sleapc_last_error(), "needs 5 bytes"));
    CHECK_OK(sleapc_setting_get("backend", buf, 5));
    CHECK_GET("backend", "auto"); /* nothing refused changed anything */
}

/* Developer switches: read from the environment only in a build that has
 * them; readable through get, never settable. */
static void check_developer(void)
{
    setenv("SLEAPC_BF16_FORCE", "1", 1);
    setenv("SLEAPC_BF16_KEEP", "15", 1);
    setenv("SLEAPC_VULKAN_FP16_MATH", "0", 1);
    setenv("SLEAPC_VULKAN_VALIDATION", "1", 1);
    setenv("SLEAPC_AMX_MODEL", "1", 1);
    sleapc__settings_reload();
    bool dev = sleapc__settings_dev_build();
    unsigned long bits = 0;
    CHECK(sleapc__settings_bf16_force() == dev);
    CHECK(sleapc__settings_bf16_keep(&bits) == dev && (!dev || bits == 15));
    CHECK(sleapc__settings_vulkan_fp16_math() == !dev);
    CHECK(sleapc__settings_vulkan_validation() == dev);
    CHECK(sleapc__settings_amx_model() == dev);
    printf("developer switches: %s\n", dev ? "read (SLEAPC_DEV_SETTINGS)" : "ignored");
    unsetenv("SLEAPC_BF16_FORCE");
    unsetenv("SLEAPC_BF16_KEEP");
    unsetenv("SLEAPC_VULKAN_FP16_MATH");
    unsetenv("SLEAPC_VULKAN_VALIDATION");
    unsetenv("SLEAPC_AMX_MODEL");
    sleapc__settings_reload();
    CHECK(!sleapc__settings_bf16_force() && !sleapc__settings_bf16_keep(&bits) &&
          sleapc__settings_vulkan_fp16_math() && !sleapc__settings_vulkan_validation() &&
          !sleapc__settings_amx_model());
}

/* A conv timed by --conv auto keeps its choice in the cache folder: with the
 * folder set to none, nothing is written anywhere (HOME's default included). */
static void check_cache_dir(void)
{
    char home[1024], dflt[1100], dir[1024];
    snprintf(home, sizeof home, "%s/home", test_tmp_dir());
    snprintf(dflt, sizeof dflt, "%s/.cache/sleapc", home);
    snprintf(dir, sizeof dir, "%s/chosen", test_tmp_dir());
    CHECK(mkdir(home, 0700) == 0);
    setenv("HOME", home, 1);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("SLEAPC_CACHE_DIR");
    unsetenv("SLEAPC_NO_CACHE");
    sleapc__settings_reload();
    CHECK_GET("cache_dir", dflt);
    setenv("XDG_CACHE_HOME", "relative/not/used", 1);
    sleapc__settings_reload();
    CHECK_GET("cache_dir", dflt);

    float *wt = malloc(sizeof(float) * C * C * 9);
    for (int i = 0; i < C * C * 9; i++)
        wt[i] = (float)((i * 2654435761u) >> 24) / 256.0f - 0.5f;
    native_conv *conv = NULL;
    CHECK_OK(sleapc__native_conv_create(C, C, 3, 3, wt, NULL, true, &conv));
    free(wt);
    sleapc_threadpool *tp = NULL;
    CHECK_OK(sleapc__threadpool_create(1, &tp));

    /* None: the conv still gets a method, and no file or folder appears. */
    CHECK_OK(sleapc_setting_set("cache_dir", ""));
    CHECK_GET("cache_dir", "");
    char buf[64];
    CHECK(!sleapc__settings_cache_dir(buf, sizeof buf));
    CHECK_OK(sleapc__native_conv_choose(conv, NULL, C, C, tp, NATIVE_CONV_AUTO, 0, "test settings", 1, 2,
                                        H, W));
    sleapc_auto_entry e = {.chosen = "direct"};
    sleapc__auto_entry_set(&e, "direct", 1.0);
    CHECK(sleapc__auto_cache_store("test settings store", &e) != SLEAPC_OK);
    CHECK_MSG(count_files(home) == 0, "%s: files written with no cache", home);
    CHECK(!exists(dflt));

    /* A folder: the choice is kept there, and only there. */
    CHECK_OK(sleapc_setting_set("cache_dir", dir));
    CHECK_GET("cache_dir", dir);
    CHECK_OK(sleapc__native_conv_choose(conv, NULL, C, C, tp, NATIVE_CONV_AUTO, 0, "test settings", 1, 2,
                                        H, W));
    CHECK_MSG(count_files(dir) == 1, "%s: %d files", dir, count_files(dir));
    CHECK(!exists(dflt));

    /* Dropped: the environment's folder again. */
    CHECK_OK(sleapc_setting_set("cache_dir", NULL));
    CHECK_GET("cache_dir", dflt);
    setenv("SLEAPC_NO_CACHE", "1", 1);
    sleapc__settings_reload();
    CHECK_GET("cache_dir", "");
    sleapc__threadpool_destroy(tp);
    sleapc__native_conv_destroy(conv);
}

/* docs/library.md's "Settings" table holds each row as the C table says it. */
static void check_docs(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/library.md", SLEAPC_SOURCE_DIR);
    size_t size = 0;
    unsigned char *raw = test_read_file(path, &size);
    CHECK_MSG(raw != NULL, "%s: cannot read", path);
    char *doc = raw ? malloc(size + 1) : NULL;
    if (!doc) {
        free(raw);
        return;
    }
    memcpy(doc, raw, size);
    doc[size] = '\0';
    free(raw);
    for (int i = 0; sleapc__settings_info(i); i++) {
        const sleapc_setting_info *s = sleapc__settings_info(i);
        CHECK(s->name && s->env && s->values && s->fallback && s->doc);
        char row[1024];
        snprintf(row, sizeof row, "| %s%s%s | `%s` | %s | %s | %s |", s->developer ? "" : "`",
                 s->developer ? "(developer)" : s->name, s->developer ? "" : "`", s->env, s->values,
                 s->fallback, s->doc);
        CHECK_MSG(strstr(doc, row) != NULL, "%s lacks the row\n%s", path, row);
    }
    CHECK(sleapc__settings_info(SLEAPC_SETTING_COUNT) == NULL);
    free(doc);
}

int main(void)
{
    check_environment();
    check_api();
    check_developer();
    check_cache_dir();
    check_docs();
    return test_finish();
}
