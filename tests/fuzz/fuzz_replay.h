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

/* Feed every corpus file of `name` to the target; the number fed. */
static int fuzz_replay(const char *name)
{
    char dir[1024], path[1536];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", SLEAPC_SOURCE_DIR, name);
    static char *names[FUZZ_REPLAY_MAX];
    int n = test_list_dir(dir, names, FUZZ_REPLAY_MAX), fed = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t size = 0;
        unsigned char *data = test_read_file(path, &size);
        if (data) {
            long before = fuzz_unexpected;
            LLVMFuzzerTestOneInput(data, size);
            CHECK_MSG(fuzz_unexpected == before, "%s: %s", names[i], fuzz_last_unexpected);
            fed++;
        }
        free(data);
        free(names[i]);
    }
    return fed;
}

#endif
