/* Shared by the file-format fuzz targets (tests/fuzz/fuzz_*.c): what a bad
 * input may end in, and a scratch file for readers that take a path. Each
 * target is also compiled into its replay test (test_fuzz_*_replay.c), which
 * feeds it the committed corpus in every build. */
#ifndef SLEAPC_TESTS_FUZZ_COMMON_H
#define SLEAPC_TESTS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sleapc/sleapc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs that ended in a status a bad file may not give (a bug). The
 * libFuzzer build aborts on the first, so the fuzzer keeps the input. */
static long fuzz_unexpected;
static char fuzz_last_unexpected[768];

/* A damaged file may be refused as malformed, unsupported or unreadable,
 * or need more memory than it may have; anything else is a bug. */
static inline void fuzz_expect(const char *target, sleapc_status st)
{
    if (st == SLEAPC_OK || st == SLEAPC_ERR_FORMAT || st == SLEAPC_ERR_UNSUPPORTED ||
        st == SLEAPC_ERR_IO || st == SLEAPC_ERR_NOMEM) {
        if (st != SLEAPC_OK && !sleapc_last_error()[0]) {
            fuzz_unexpected++;
            snprintf(fuzz_last_unexpected, sizeof fuzz_last_unexpected,
                     "%s: %s with an empty message", target, sleapc_status_str(st));
        } else {
            return;
        }
    } else {
        fuzz_unexpected++;
        snprintf(fuzz_last_unexpected, sizeof fuzz_last_unexpected, "%s: %s: %s", target,
                 sleapc_status_str(st), sleapc_last_error());
    }
#ifdef SLEAPC_LIBFUZZER
    fprintf(stderr, "%s\n", fuzz_last_unexpected);
    abort();
#endif
}

static char fuzz_dir[256];
static char fuzz_file[320];

static inline void fuzz_remove_scratch(void)
{
    if (fuzz_file[0])
        unlink(fuzz_file);
    if (fuzz_dir[0])
        rmdir(fuzz_dir);
}

/* Write data to this process's scratch file named `name`; its path, or NULL
 * when the folder cannot be made. Removed at exit. */
static inline const char *fuzz_scratch(const char *name, const uint8_t *data, size_t size)
{
    if (!fuzz_dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/sleapc_fuzz_XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(fuzz_dir)) {
            fuzz_dir[0] = '\0';
            return NULL;
        }
        atexit(fuzz_remove_scratch);
    }
    if (fuzz_file[0])
        unlink(fuzz_file);
    snprintf(fuzz_file, sizeof fuzz_file, "%s/%s", fuzz_dir, name);
    FILE *f = fopen(fuzz_file, "wb");
    if (!f)
        return NULL;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || put != size)
        return NULL;
    return fuzz_file;
}

#endif
