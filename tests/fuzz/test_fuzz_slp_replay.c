/* The fuzz target fuzz_slp_read.c on its committed corpus, in every build: each
 * input ends in an expected status; the sanitizer build checks there is no
 * crash, overflow or leak. */
#include "fuzz_replay.h"
#include "fuzz_slp_read.c"

int main(void)
{
    int n = fuzz_replay("slp");
    CHECK_MSG(n >= 2, "only %d corpus files", n);
    return test_finish();
}
