/* The checkpoint fuzz target (fuzz_ckpt_read.c) on its committed corpus, in
 * every build: each input ends in an expected status; the sanitizer build
 * checks there is no crash, overflow or leak. */
#include "fuzz_ckpt_read.c"
#include "fuzz_replay.h"

int main(void)
{
    int n = fuzz_replay("ckpt");
    CHECK_MSG(n >= 2, "only %d corpus files", n);
    return test_finish();
}
