/* Replay of a fuzz target's committed corpus (tests/fuzz/corpus/<name>/):
 * every file through the target, as an exact-size copy so that ASan sees a
 * read past its end; no input may end in an unexpected status. Include after
 * the target's source. */
#ifndef SLEAPC_TESTS_FUZZ_REPLAY_H
#define SLEAPC_TESTS_FUZZ_REPLAY_H

#include <stdlib.h>

#include "fuzz_common.h"
#include "test_util.h"

#define FUZZ_REPLAY_MAX 2000

/* Seeded mutants of each corpus file (truncations, flipped and set bytes),
 * the same on every run; SLEAPC_FUZZ_MUTANTS=N replays N per file. */
#ifdef SLEAPC_SANITIZED
#define FUZZ_MUTANTS_DEFAULT 40
#else
#define FUZZ_MUTANTS_DEFAULT 200
#endif

static uint64_t fuzz_rng_state;

static uint32_t fuzz_rng(void)
{
    /* xorshift64*: fixed seeds, the same mutants everywhere. */
    fuzz_rng_state ^= fuzz_rng_state >> 12;
    fuzz_rng_state ^= fuzz_rng_state << 25;
    fuzz_rng_state ^= fuzz_rng_state >> 27;
    return (uint32_t)((fuzz_rng_state * 2685821657736338717ull) >> 32);
}

/* Feed an exact-size copy, so that ASan sees a read past its end. */
static void fuzz_feed(const uint8_t *data, size_t n, const char *name)
{
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy)
        return;
    memcpy(copy, data, n);
    long before = fuzz_unexpected;
    LLVMFuzzerTestOneInput(copy, n);
    CHECK_MSG(fuzz_unexpected == before, "%s: %s", name, fuzz_last_unexpected);
    free(copy);
}

static void fuzz_mutants(const uint8_t *good, size_t size, const char *name, int count)
{
    static const uint8_t special[] = {0x00, 0x01, 0x7f, 0x80, 0xff, '0', '-', ',', '"', '\\'};
    uint8_t *buf = malloc(size + 1);
    if (!buf || size == 0) {
        free(buf);
        return;
    }
    for (int m = 0; m < count; m++) {
        memcpy(buf, good, size);
        size_t n = size;
        int edits = 1 + (int)(fuzz_rng() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = fuzz_rng() % n;
            if (fuzz_rng() % 2)
                buf[at] ^= (uint8_t)(1u << (fuzz_rng() % 8));
            else
                buf[at] = special[fuzz_rng() % sizeof special];
        }
        if (fuzz_rng() % 4 == 0)
            n = fuzz_rng() % size;
        fuzz_feed(buf, n, name);
    }
    free(buf);
}

/* Feed every corpus file of `name` to the target, then its mutants; the
 * number of corpus files. */
static int fuzz_replay(const char *name)
{
    char dir[1024], path[1536];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", SLEAPC_SOURCE_DIR, name);
    const char *env = getenv("SLEAPC_FUZZ_MUTANTS");
    int mutants = env && *env ? atoi(env) : FUZZ_MUTANTS_DEFAULT;
    static char *names[FUZZ_REPLAY_MAX];
    int n = test_list_dir(dir, names, FUZZ_REPLAY_MAX), fed = 0;
    fuzz_rng_state = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t size = 0;
        unsigned char *data = test_read_file(path, &size);
        if (data) {
            fuzz_feed(data, size, names[i]);
            fuzz_mutants(data, size, names[i], mutants);
            fed++;
        }
        free(data);
        free(names[i]);
    }
    return fed;
}

#endif
