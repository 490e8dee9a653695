/* The library's process-wide settings: one table (settings.c) of every knob
 * the environment can turn, each read once, on first use, and overridable
 * through the public sleapc_setting_set(). Modules ask here, never the
 * environment: settings.c is the one file that reads it.
 *
 * Developer switches (measuring, debugging, test hooks) are read only when
 * the library is built with SLEAPC_DEV_SETTINGS (on when the tests or the
 * benchmarks are built); the public setter refuses them. docs/library.md,
 * "Settings", is the table for users; test_settings checks it matches. */
#ifndef SLEAPC_CORE_SETTINGS_H
#define SLEAPC_CORE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef enum sleapc_setting {
    SLEAPC_SETTING_BACKEND = 0,    /* SLEAPC_BACKEND */
    SLEAPC_SETTING_CONV,           /* SLEAPC_CONV */
    SLEAPC_SETTING_AUTO_MEASURE,   /* SLEAPC_AUTO_MEASURE */
    SLEAPC_SETTING_CACHE_DIR,      /* SLEAPC_CACHE_DIR, SLEAPC_NO_CACHE, XDG_CACHE_HOME, HOME */
    SLEAPC_SETTING_MEMORY_LIMIT,   /* SLEAPC_MEMORY_LIMIT */
    SLEAPC_SETTING_LIVE_TIMEOUT_S, /* SLEAPC_LIVE_TIMEOUT_S */
    SLEAPC_SETTING_OVERLAP,        /* SLEAPC_OVERLAP */
    SLEAPC_SETTING_AMX,            /* SLEAPC_AMX */
    /* Developer switches. */
    SLEAPC_SETTING_BF16_FORCE,        /* SLEAPC_BF16_FORCE */
    SLEAPC_SETTING_BF16_KEEP,         /* SLEAPC_BF16_KEEP */
    SLEAPC_SETTING_VULKAN_FP16_MATH,  /* SLEAPC_VULKAN_FP16_MATH */
    SLEAPC_SETTING_VULKAN_VALIDATION, /* SLEAPC_VULKAN_VALIDATION */
    SLEAPC_SETTING_AMX_MODEL,         /* SLEAPC_AMX_MODEL */
    SLEAPC_SETTING_COUNT
} sleapc_setting;

/* One row of the table, static. */
typedef struct sleapc_setting_info {
    const char *name;     /* the public name: sleapc_setting_set("cache_dir", ...) */
    const char *env;      /* the environment variable(s) read, as the docs list them */
    const char *values;   /* what it takes, e.g. "auto, direct, winograd" */
    const char *fallback; /* what applies when nothing is set */
    const char *doc;      /* one sentence: what it does */
    bool developer;       /* a developer switch: see the top of this file */
} sleapc_setting_info;

/* The table's rows, by id; NULL past the end. */
const sleapc_setting_info *sleapc__settings_info(int id);
/* Whether this build reads the developer switches (SLEAPC_DEV_SETTINGS). */
bool sleapc__settings_dev_build(void);

/* Set one setting by its public name; value NULL drops an earlier set
 * (the environment's value, or the fallback, applies again). A developer
 * switch, an unknown name or a value the setting does not take is refused
 * with SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__settings_set(const char *name, const char *value);
/* The value in force, in its plain form ("" for none), into buf. */
sleapc_status sleapc__settings_get(const char *name, char *buf, size_t cap);

/* Read the environment again (values set through the API stay). For the
 * tests that change a variable after the library has read it; not safe
 * while another thread runs the library. */
void sleapc__settings_reload(void);

/* Typed reads, one per setting. */

/* The backend "auto" stands for into buf; false when "auto" is not pinned. */
bool sleapc__settings_backend_pin(char *buf, size_t cap);

typedef enum sleapc_settings_conv {
    SLEAPC_SETTINGS_CONV_AUTO = 0, /* not pinned */
    SLEAPC_SETTINGS_CONV_DIRECT,
    SLEAPC_SETTINGS_CONV_WINOGRAD
} sleapc_settings_conv;
/* What the native backend's conv "auto" is pinned to. */
sleapc_settings_conv sleapc__settings_conv(void);

typedef enum sleapc_settings_measure {
    SLEAPC_SETTINGS_MEASURE_AUTO = 0, /* as the run's length repays */
    SLEAPC_SETTINGS_MEASURE_FULL,
    SLEAPC_SETTINGS_MEASURE_OFF
} sleapc_settings_measure;
/* How the auto backend measures its candidates. */
sleapc_settings_measure sleapc__settings_auto_measure(void);

/* The auto cache's folder into buf; false when no cache is kept on disk
 * (set to none, SLEAPC_NO_CACHE, no HOME, or a path longer than cap). */
bool sleapc__settings_cache_dir(char *buf, size_t cap);

/* The memory limit's text (e.g. "8G") into buf; false when there is none.
 * sleapc__settings_parse_bytes reads it. */
bool sleapc__settings_memory_limit(char *buf, size_t cap);
/* "8G", "512M", "1.5GiB", "1000000" -> bytes; -1 when it is not a size. */
int64_t sleapc__settings_parse_bytes(const char *s);

/* A live source's timeout in seconds, in (0, 3600]; 0 when none is set (the
 * reader's own default applies). */
double sleapc__settings_live_timeout_s(void);

/* The overlapped GPU path: 1 on, 0 off, -1 not set (the device decides). */
int sleapc__settings_overlap(void);

/* Developer switches: their fallbacks in a build without SLEAPC_DEV_SETTINGS. */

/* bf16/fp16 kept whatever the float32 check says (measuring only). */
bool sleapc__settings_bf16_force(void);
/* The bf16 keep bits into *bits; false when not set or not a number. */
bool sleapc__settings_bf16_keep(unsigned long *bits);
/* fp16 arithmetic on the Vulkan devices that have it (true unless "0"). */
bool sleapc__settings_vulkan_fp16_math(void);
/* The Khronos validation layer on, any message a failure. */
bool sleapc__settings_vulkan_validation(void);
/* The native backend's bf16 on the software model of the AMX tiles, on any
 * CPU (native_amx.h): for testing the tile code where AMX is absent. */
bool sleapc__settings_amx_model(void);
/* The native backend's bf16 on the CPU's AMX tiles (where it has them):
 * asked for with amx=1 until the tile code is checked on AMX hardware. */
bool sleapc__settings_amx(void);

#endif
