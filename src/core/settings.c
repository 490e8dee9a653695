/* The one table of settings, and the one reader of the environment.
 *
 * Each setting keeps two texts: what the environment said when the table was
 * first read, and what the caller set through sleapc_setting_set (which wins
 * while it is set). Both are fixed arrays: a setting read inside a planned
 * loop allocates nothing, and the fail-the-Nth-allocation tests never meet a
 * settings read. A spin lock guards them: reads are a few per run (backend
 * creation, a plan, a cache file), never per pixel. */
#include "core/settings.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#ifndef SLEAPC_DEV_SETTINGS
#define SLEAPC_DEV_SETTINGS 0
#endif

/* The longest value kept: a cache folder's path (PATH_MAX on Linux). */
#define VALUE_CAP 4096

static bool is_name(const char *v);
static bool is_conv(const char *v);
static bool is_measure(const char *v);
static bool is_any(const char *v);
static bool is_size(const char *v);
static bool is_timeout(const char *v);
static bool is_switch(const char *v);

typedef struct row {
    sleapc_setting_info info;
    bool (*valid)(const char *v); /* a value sleapc_setting_set takes; "" always is */
} row;

/* docs/library.md, "Settings", shows this table (test_settings compares them). */
static const row table[SLEAPC_SETTING_COUNT] = {
    [SLEAPC_SETTING_BACKEND] = {{"backend", "SLEAPC_BACKEND", "a backend name, auto", "auto",
                                 "What a backend of \"auto\" means: a name pins it (no "
                                 "measurement, no cache), for runs compared to the bit.",
                                 false},
                                is_name},
    [SLEAPC_SETTING_CONV] = {{"conv", "SLEAPC_CONV", "auto, direct, winograd", "auto",
                              "What the native backend's conv method \"auto\" means: a method "
                              "pins it (no timing).",
                              false},
                             is_conv},
    [SLEAPC_SETTING_AUTO_MEASURE] = {{"auto_measure", "SLEAPC_AUTO_MEASURE", "auto, full, off",
                                      "auto",
                                      "How backend auto measures: as the run's length repays, "
                                      "every candidate (fill the cache once), or never.",
                                      false},
                                     is_measure},
    [SLEAPC_SETTING_CACHE_DIR] = {{"cache_dir",
                                   "SLEAPC_CACHE_DIR, SLEAPC_NO_CACHE=1, XDG_CACHE_HOME, HOME",
                                   "a folder; \"\": none",
                                   "$XDG_CACHE_HOME/sleapc, else ~/.cache/sleapc",
                                   "Where auto's choices are kept; none: nothing is written, "
                                   "each run measures again.",
                                   false},
                                  is_any},
    [SLEAPC_SETTING_MEMORY_LIMIT] = {{"memory_limit", "SLEAPC_MEMORY_LIMIT",
                                      "bytes, or with K, M, G, T (e.g. 8G); \"\": none", "none",
                                      "The memory a network's plan may take above what the "
                                      "process holds; a larger plan is refused before it runs.",
                                      false},
                                     is_size},
    [SLEAPC_SETTING_LIVE_TIMEOUT_S] = {{"live_timeout_s", "SLEAPC_LIVE_TIMEOUT_S",
                                        "seconds in (0, 3600]", "10",
                                        "How long a network source may stay silent before it "
                                        "counts as ended (or, before its first bytes, failed).",
                                        false},
                                       is_timeout},
    [SLEAPC_SETTING_OVERLAP] = {{"overlap", "SLEAPC_OVERLAP", "0, 1",
                                 "on unless the device is the CPU",
                                 "The overlapped GPU path: the next batch runs on the device "
                                 "while the host post-processes this one.",
                                 false},
                                is_switch},
    [SLEAPC_SETTING_AMX] = {{"amx", "SLEAPC_AMX", "0, 1", "off",
                             "1: the native backend's bf16 runs on the CPU's AMX tiles where "
                             "it has them (not yet checked on AMX hardware: off by default).",
                             false},
                            is_switch},
    [SLEAPC_SETTING_BF16_FORCE] = {{"bf16_force", "SLEAPC_BF16_FORCE", "1", "off",
                                    "Keep bf16/fp16 whatever the float32 check says: for "
                                    "measuring what it does to a model, never for results.",
                                    true},
                                   NULL},
    [SLEAPC_SETTING_BF16_KEEP] = {{"bf16_keep", "SLEAPC_BF16_KEEP", "0 to 15 (bits)", "7",
                                   "Which convolutions bf16 keeps in float32 (bf16_policy.h: 1 "
                                   "first, 2 heads, 4 last decoder block, 8 the decoder).",
                                   true},
                                  NULL},
    [SLEAPC_SETTING_VULKAN_FP16_MATH] = {{"vulkan_fp16_math", "SLEAPC_VULKAN_FP16_MATH", "0",
                                          "on where the device has it",
                                          "0 keeps Vulkan fp16 to storage only, for comparing "
                                          "fp16 arithmetic with it.",
                                          true},
                                         NULL},
    [SLEAPC_SETTING_VULKAN_VALIDATION] = {{"vulkan_validation", "SLEAPC_VULKAN_VALIDATION", "1",
                                           "off",
                                           "The Khronos validation layer on, any message it "
                                           "gives a failure (the Vulkan tests).",
                                           true},
                                          NULL},
    [SLEAPC_SETTING_AMX_MODEL] = {{"amx_model", "SLEAPC_AMX_MODEL", "1", "off",
                                   "The native backend's bf16 on the software model of the "
                                   "AMX tiles, on any CPU: for testing the tile code.",
                                   true},
                                  NULL},
};

typedef struct slot {
    char env[VALUE_CAP]; /* from the environment at load; "" when unset */
    char api[VALUE_CAP]; /* from sleapc_setting_set, while has_api */
    bool has_api;
} slot;

static slot slots[SLEAPC_SETTING_COUNT];
static bool loaded;
/* Developer switches set in the environment of a build that ignores them,
 * said once the lock is released (a log hook may call back in here). */
static unsigned ignored;
_Static_assert(SLEAPC_SETTING_COUNT <= 32, "ignored holds one bit per setting");
static atomic_flag lock_flag = ATOMIC_FLAG_INIT;

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&lock_flag, memory_order_acquire))
        ;
}

static void unlock(void)
{
    unsigned said = ignored;
    ignored = 0;
    atomic_flag_clear_explicit(&lock_flag, memory_order_release);
    for (int i = 0; said && i < SLEAPC_SETTING_COUNT; i++)
        if (said & (1u << i))
            sleapc__log(SLEAPC_LOG_WARN,
                        "%s is a developer switch, which this build ignores "
                        "(built without SLEAPC_DEV_SETTINGS)",
                        table[i].info.env);
}

static bool set_true(const char *v)
{
    return v && *v && strcmp(v, "0") != 0;
}

static void copy(char *dst, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= VALUE_CAP)
        n = 0; /* too long to be a value: as if unset */
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

/* The auto cache's folder from its four variables, as it always was read:
 * off with SLEAPC_NO_CACHE, else SLEAPC_CACHE_DIR, else XDG's cache home
 * (absolute only, as the XDG spec says), else ~/.cache; "" for none. */
static void read_cache_dir(char *dst)
{
    const char *dir;
    int n = 0;
    dst[0] = '\0';
    if (set_true(getenv("SLEAPC_NO_CACHE")))
        return;
    if ((dir = getenv("SLEAPC_CACHE_DIR")) && *dir)
        n = snprintf(dst, VALUE_CAP, "%s", dir);
    else if ((dir = getenv("XDG_CACHE_HOME")) && dir[0] == '/')
        n = snprintf(dst, VALUE_CAP, "%s/sleapc", dir);
    else if ((dir = getenv("HOME")) && *dir)
        n = snprintf(dst, VALUE_CAP, "%s/.cache/sleapc", dir);
    if (n < 0 || n >= VALUE_CAP)
        dst[0] = '\0';
}

/* Under the lock. */
static void read_environment(void)
{
    for (int i = 0; i < SLEAPC_SETTING_COUNT; i++) {
        if (i == SLEAPC_SETTING_CACHE_DIR) {
            read_cache_dir(slots[i].env);
            continue;
        }
        const char *v = getenv(table[i].info.env);
        if (table[i].info.developer && !SLEAPC_DEV_SETTINGS) {
            if (v && *v)
                ignored |= 1u << i;
            v = NULL;
        }
        copy(slots[i].env, v);
    }
    loaded = true;
}

/* Under the lock: the text in force. */
static const char *value(sleapc_setting id)
{
    if (!loaded)
        read_environment();
    return slots[id].has_api ? slots[id].api : slots[id].env;
}

const sleapc_setting_info *sleapc__settings_info(int id)
{
    return id >= 0 && id < SLEAPC_SETTING_COUNT ? &table[id].info : NULL;
}

bool sleapc__settings_dev_build(void)
{
    return SLEAPC_DEV_SETTINGS != 0;
}

void sleapc__settings_reload(void)
{
    lock();
    read_environment();
    unlock();
}

static int find(const char *name)
{
    for (int i = 0; name && i < SLEAPC_SETTING_COUNT; i++)
        if (strcmp(table[i].info.name, name) == 0)
            return i;
    return -1;
}

/* "backend, conv, ..." for messages. */
static void list_names(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < SLEAPC_SETTING_COUNT && n < cap; i++) {
        if (table[i].info.developer)
            continue;
        int w = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", table[i].info.name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

sleapc_status sleapc__settings_set(const char *name, const char *v)
{
    int id = find(name);
    if (id < 0 || table[id].info.developer) {
        char names[256];
        list_names(names, sizeof names);
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "set setting: %s: %s (settings: %s)",
                            name ? name : "(null)",
                            id < 0 ? "no such setting"
                                   : "a developer switch, read from the "
                                     "environment only",
                            names);
    }
    if (v && (strlen(v) >= VALUE_CAP || (*v && !table[id].valid(v))))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "set setting: %s: \"%.200s\": expected %s",
                            name, v, table[id].info.values);
    lock();
    if (!loaded)
        read_environment();
    slots[id].has_api = v != NULL;
    copy(slots[id].api, v);
    unlock();
    return SLEAPC_OK;
}

/* Under the lock: the plain form of what is in force. */
static void plain(int id, char *dst, size_t cap)
{
    const char *v = value((sleapc_setting)id);
    switch ((sleapc_setting)id) {
    case SLEAPC_SETTING_BACKEND:
        snprintf(dst, cap, "%s", *v ? v : "auto");
        return;
    case SLEAPC_SETTING_CONV:
        snprintf(dst, cap, "%s",
                 strcmp(v, "direct") == 0     ? "direct"
                 : strcmp(v, "winograd") == 0 ? "winograd"
                                              : "auto");
        return;
    case SLEAPC_SETTING_AUTO_MEASURE:
        snprintf(dst, cap, "%s",
                 strcmp(v, "full") == 0  ? "full"
                 : strcmp(v, "off") == 0 ? "off"
                                         : "auto");
        return;
    case SLEAPC_SETTING_OVERLAP:
    case SLEAPC_SETTING_AMX:
    case SLEAPC_SETTING_VULKAN_VALIDATION:
        snprintf(dst, cap, "%s", *v ? (strcmp(v, "0") != 0 ? "1" : "0") : "");
        return;
    default:
        snprintf(dst, cap, "%s", v);
        return;
    }
}

sleapc_status sleapc__settings_get(const char *name, char *buf, size_t cap)
{
    int id = find(name);
    if (id < 0 || !buf || cap == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "get setting: %s: %s", name ? name : "(null)",
                            id < 0 ? "no such setting" : "a buffer is required");
    char text[VALUE_CAP];
    lock();
    plain(id, text, sizeof text);
    unlock();
    size_t n = strlen(text);
    if (n >= cap)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "get setting: %s: its value needs %zu bytes, the buffer has %zu", name,
                            n + 1, cap);
    memcpy(buf, text, n + 1);
    return SLEAPC_OK;
}

/* Copy the text in force into buf; false when it is "" or does not fit. */
static bool read_text(sleapc_setting id, char *buf, size_t cap)
{
    lock();
    const char *v = value(id);
    size_t n = strlen(v);
    bool ok = n > 0 && n < cap;
    if (ok)
        memcpy(buf, v, n + 1);
    unlock();
    return ok;
}

/* Whether the text in force equals s. */
static bool equals(sleapc_setting id, const char *s)
{
    lock();
    bool eq = strcmp(value(id), s) == 0;
    unlock();
    return eq;
}

bool sleapc__settings_backend_pin(char *buf, size_t cap)
{
    return read_text(SLEAPC_SETTING_BACKEND, buf, cap) && strcmp(buf, "auto") != 0;
}

sleapc_settings_conv sleapc__settings_conv(void)
{
    if (equals(SLEAPC_SETTING_CONV, "direct"))
        return SLEAPC_SETTINGS_CONV_DIRECT;
    if (equals(SLEAPC_SETTING_CONV, "winograd"))
        return SLEAPC_SETTINGS_CONV_WINOGRAD;
    return SLEAPC_SETTINGS_CONV_AUTO;
}

sleapc_settings_measure sleapc__settings_auto_measure(void)
{
    if (equals(SLEAPC_SETTING_AUTO_MEASURE, "full"))
        return SLEAPC_SETTINGS_MEASURE_FULL;
    if (equals(SLEAPC_SETTING_AUTO_MEASURE, "off"))
        return SLEAPC_SETTINGS_MEASURE_OFF;
    return SLEAPC_SETTINGS_MEASURE_AUTO;
}

bool sleapc__settings_cache_dir(char *buf, size_t cap)
{
    return read_text(SLEAPC_SETTING_CACHE_DIR, buf, cap);
}

bool sleapc__settings_memory_limit(char *buf, size_t cap)
{
    return read_text(SLEAPC_SETTING_MEMORY_LIMIT, buf, cap);
}

int64_t sleapc__settings_parse_bytes(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0))
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    double unit = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        unit = 1024.0;
        end++;
        break;
    case 'M':
        unit = 1024.0 * 1024;
        end++;
        break;
    case 'G':
        unit = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
        unit = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default:
        break;
    }
    if (toupper((unsigned char)*end) == 'I')
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end || v * unit >= 9.0e18)
        return -1;
    return (int64_t)(v * unit);
}

double sleapc__settings_live_timeout_s(void)
{
    char text[64];
    if (!read_text(SLEAPC_SETTING_LIVE_TIMEOUT_S, text, sizeof text))
        return 0.0;
    /* As it was always read: a leading number, the rest ignored. */
    double t = strtod(text, NULL);
    return t > 0.0 && t <= 3600.0 ? t : 0.0;
}

int sleapc__settings_overlap(void)
{
    lock();
    const char *v = value(SLEAPC_SETTING_OVERLAP);
    int on = *v ? strcmp(v, "0") != 0 : -1;
    unlock();
    return on;
}

bool sleapc__settings_bf16_force(void)
{
    return equals(SLEAPC_SETTING_BF16_FORCE, "1");
}

bool sleapc__settings_bf16_keep(unsigned long *bits)
{
    char text[64];
    if (!read_text(SLEAPC_SETTING_BF16_KEEP, text, sizeof text))
        return false;
    char *end = NULL;
    unsigned long v = strtoul(text, &end, 0);
    if (!end || *end != '\0')
        return false;
    *bits = v;
    return true;
}

bool sleapc__settings_amx(void)
{
    lock();
    const char *v = value(SLEAPC_SETTING_AMX);
    bool on = *v && strcmp(v, "0") != 0;
    unlock();
    return on;
}

bool sleapc__settings_amx_model(void)
{
    return equals(SLEAPC_SETTING_AMX_MODEL, "1");
}

bool sleapc__settings_vulkan_fp16_math(void)
{
    return !equals(SLEAPC_SETTING_VULKAN_FP16_MATH, "0");
}

bool sleapc__settings_vulkan_validation(void)
{
    lock();
    bool on = set_true(value(SLEAPC_SETTING_VULKAN_VALIDATION));
    unlock();
    return on;
}

/* What sleapc_setting_set takes, per setting. */

static bool is_name(const char *v)
{
    size_t n = strlen(v);
    if (n >= 32)
        return false;
    for (; *v; v++)
        if (!((*v >= 'a' && *v <= 'z') || (*v >= '0' && *v <= '9') || *v == '_'))
            return false;
    return true;
}

static bool is_conv(const char *v)
{
    return strcmp(v, "auto") == 0 || strcmp(v, "direct") == 0 || strcmp(v, "winograd") == 0;
}

static bool is_measure(const char *v)
{
    return strcmp(v, "auto") == 0 || strcmp(v, "full") == 0 || strcmp(v, "off") == 0;
}

static bool is_any(const char *v)
{
    (void)v;
    return true;
}

static bool is_size(const char *v)
{
    return sleapc__settings_parse_bytes(v) >= 0;
}

static bool is_timeout(const char *v)
{
    char *end = NULL;
    double t = strtod(v, &end);
    return end != v && *end == '\0' && t > 0.0 && t <= 3600.0;
}

static bool is_switch(const char *v)
{
    return strcmp(v, "0") == 0 || strcmp(v, "1") == 0;
}
