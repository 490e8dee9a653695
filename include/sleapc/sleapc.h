/* sleapc: native inference for SLEAP / sleap-nn pose models.
 *
 * Umbrella header: version, status codes, error messages and the log hook.
 * Every public function returns a sleapc_status; on failure a message of the
 * shape "action: object: reason" is available from sleapc_last_error() on the
 * calling thread until that thread's next failing call. */
#ifndef SLEAPC_SLEAPC_H
#define SLEAPC_SLEAPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SLEAPC_BUILDING) && defined(__GNUC__)
#define SLEAPC_API __attribute__((visibility("default")))
#else
#define SLEAPC_API
#endif

#define SLEAPC_VERSION_MAJOR 0
#define SLEAPC_VERSION_MINOR 2
#define SLEAPC_VERSION_PATCH 0
#define SLEAPC_VERSION_STRING "0.2.0"

typedef enum sleapc_status {
    SLEAPC_OK = 0,
    SLEAPC_ERR_INVALID_ARG,  /* caller passed a bad value or NULL: fix the call    */
    SLEAPC_ERR_STATE,        /* calls in the wrong order                           */
    SLEAPC_ERR_IO,           /* cannot open, read or write a file                  */
    SLEAPC_ERR_FORMAT,       /* file read, content corrupt or inconsistent         */
    SLEAPC_ERR_UNSUPPORTED,  /* valid, but not implemented here                    */
    SLEAPC_ERR_NOMEM,        /* an allocation failed                               */
    SLEAPC_ERR_BACKEND,      /* a backend failed or does not conform               */
    SLEAPC_ERR_INTERRUPTED,  /* the caller asked to stop                           */
    SLEAPC_STATUS_COUNT
} sleapc_status;

/* The version as one number for comparisons: (major << 16) | (minor << 8) | patch. */
#define SLEAPC_VERSION_NUMBER \
    ((SLEAPC_VERSION_MAJOR << 16) | (SLEAPC_VERSION_MINOR << 8) | SLEAPC_VERSION_PATCH)

/* The binary interface: raised whenever a caller compiled against older
 * headers would break (a struct layout, a signature, an enum value changes).
 * A binding or plugin checks sleapc_abi_version() against the value it was
 * written for before its first call. */
#define SLEAPC_ABI_VERSION 4

/* Version of the library actually linked, e.g. "0.1.0". Static text. */
SLEAPC_API const char *sleapc_version(void);
/* SLEAPC_VERSION_NUMBER and SLEAPC_ABI_VERSION of the library actually linked. */
SLEAPC_API uint32_t sleapc_version_number(void);
SLEAPC_API int sleapc_abi_version(void);

/* Which sleap-nn release a run reproduces where releases differ: how video
 * frames are decoded (sleap-io 0.9.5 converts with the stream's colour
 * matrix; the 0.3.3 reference frames forced BT.601), how uint8 frames are
 * resized (PyTorch 2.x's uint8 kernel; PyTorch 1.13 computed in float), how
 * top-down crops are sized. docs/compatibility.md lists every difference.
 * Zero is the newest release sleapc follows. */
typedef enum sleapc_compat {
    SLEAPC_COMPAT_DEFAULT = 0,      /* = SLEAPC_COMPAT_SLEAP_NN_0_3_5 */
    SLEAPC_COMPAT_SLEAP_NN_0_3_5 = 1,
    SLEAPC_COMPAT_SLEAP_NN_0_3_3 = 2
} sleapc_compat;

/* "0.3.5" or "0.3.3" (DEFAULT resolved). Static text; NULL for an unknown value. */
SLEAPC_API const char *sleapc_compat_name(sleapc_compat c);
/* "0.3.5", "0.3.3" (a leading "sleap-nn" / "sleap-nn-" / "sleap-nn==" is
 * allowed) into *out. SLEAPC_ERR_INVALID_ARG, naming the choices, otherwise. */
SLEAPC_API sleapc_status sleapc_compat_parse(const char *s, sleapc_compat *out);

/* Short static description of a status ("format error"). Never NULL. */
SLEAPC_API const char *sleapc_status_str(sleapc_status st);

/* This thread's last failure message, in detail. Never NULL ("" when none).
 * Owned by the library; valid until this thread's next failing call. */
SLEAPC_API const char *sleapc_last_error(void);

typedef enum sleapc_log_level {
    SLEAPC_LOG_DEBUG = 0,
    SLEAPC_LOG_INFO,
    SLEAPC_LOG_WARN,
    SLEAPC_LOG_ERROR
} sleapc_log_level;

/* Log hook. The library never prints: messages go to fn, or are dropped when
 * fn is NULL (the default). msg is valid only during the call. */
typedef void (*sleapc_log_fn)(sleapc_log_level level, const char *msg, void *user);
SLEAPC_API void sleapc_log_set(sleapc_log_fn fn, void *user);

/* The layout of a public struct as this library was compiled: its size and
 * each field's name, offset and size. Bindings that mirror the structs (the
 * Python package's ctypes) check their copies against it before their first
 * call. struct_name: the typedef name, e.g. "sleapc_predictor_opts";
 * *fields points to static storage of *n_fields entries. Returns SLEAPC_OK
 * or SLEAPC_ERR_INVALID_ARG (a struct the library does not describe, NULL). */
typedef struct sleapc_field_layout {
    const char *name;
    size_t offset;
    size_t size;
} sleapc_field_layout;
SLEAPC_API sleapc_status sleapc_struct_layout(const char *struct_name, size_t *size,
                                              int *n_fields,
                                              const sleapc_field_layout **fields);

/* The one way to stop a long call. fn returns true to stop; the library
 * polls it between batches of a prediction (sleapc_predictor_run on more
 * frames than a batch, sleapc_predict_array, sleapc_predict_input), between
 * frames of sleapc_render, and while it waits on a live source (opening a
 * named pipe or network stream, waiting for its next bytes); the call then
 * returns SLEAPC_ERR_INTERRUPTED, keeping what it finished (the frames done
 * stay in the writer; a rendered video keeps its frames). Process-wide; fn
 * may be called from any of the library's threads, so it should only read
 * a flag (a signal handler of the caller's sets it). fn NULL (the default):
 * never stop. */
typedef bool (*sleapc_abort_fn)(void *user);
SLEAPC_API void sleapc_abort_set(sleapc_abort_fn fn, void *user);

/* Process-wide settings. Each has a name here and an environment variable;
 * the library reads the environment once, on first use, and nowhere else
 * (docs/library.md, "Settings", is the full table):
 *   "backend"        SLEAPC_BACKEND: what a backend of "auto" means; a name
 *                    pins it (no measurement, no cache); "auto": unpinned
 *   "conv"           SLEAPC_CONV: what conv method "auto" means: "auto",
 *                    "direct", "winograd"
 *   "auto_measure"   SLEAPC_AUTO_MEASURE: "auto" (as a run's length repays),
 *                    "full", "off"
 *   "cache_dir"      SLEAPC_CACHE_DIR (SLEAPC_NO_CACHE=1, $XDG_CACHE_HOME/sleapc,
 *                    ~/.cache/sleapc): where backend and conv "auto" keep their
 *                    choices; "": none, the library writes no file there
 *   "memory_limit"   SLEAPC_MEMORY_LIMIT: bytes, or e.g. "8G"; "": none
 *   "live_timeout_s" SLEAPC_LIVE_TIMEOUT_S: a live network source's timeout,
 *                    seconds in (0, 3600]; "": 10
 *   "overlap"        SLEAPC_OVERLAP: the overlapped GPU path, "0" or "1"; "":
 *                    on unless the device is the CPU
 * Developer switches (SLEAPC_BF16_FORCE, SLEAPC_BF16_KEEP,
 * SLEAPC_VULKAN_FP16_MATH, SLEAPC_VULKAN_VALIDATION) are read from the
 * environment only, and only by a library built with SLEAPC_DEV_SETTINGS.
 *
 * sleapc_setting_set: value wins over the environment for the rest of the
 * process; "" is the setting's "none" (above); NULL drops an earlier set, so
 * the environment's value applies again. value is copied. A setting applies
 * to what starts after it is set (a predictor reads backend and conv at
 * creation, the cache when it measures): set them before creating
 * predictors. Returns SLEAPC_OK, or SLEAPC_ERR_INVALID_ARG for an unknown
 * name, a developer switch, or a value the setting does not take (the
 * message says what it takes). */
SLEAPC_API sleapc_status sleapc_setting_set(const char *name, const char *value);
/* The value in force, set or from the environment, in plain form ("auto"
 * for an unpinned backend, the cache folder in use or "" for none) into buf
 * (cap bytes, the NUL included). Returns SLEAPC_OK, or SLEAPC_ERR_INVALID_ARG
 * for an unknown name, a NULL buf or one too small (the message gives the
 * size needed). */
SLEAPC_API sleapc_status sleapc_setting_get(const char *name, char *buf, size_t cap);

/* Every option struct a caller fills starts with struct_size =
 * sizeof(the struct) as the caller's headers define it; its _default()
 * function sets it. A caller compiled against an older, smaller struct gets
 * the defaults for the fields it lacks; a struct_size of 0 or larger than
 * this library's is refused with SLEAPC_ERR_INVALID_ARG. */

/* Free a buffer the library allocated for the caller (e.g. the pixels of
 * sleapc_image_decode). Accepts NULL. */
SLEAPC_API void sleapc_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
