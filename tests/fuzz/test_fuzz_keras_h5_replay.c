/* The fuzz target fuzz_keras_h5.c on its committed corpus, in every build: each
 * input ends in an expected status; the sanitizer build checks there is no
 * crash, overflow or leak. */
#include "fuzz_keras_h5.c"
#include "fuzz_replay.h"

int main(void)
{
    int n = fuzz_replay("keras_h5");
    CHECK_MSG(n >= 2, "only %d corpus files", n);
    return test_finish();
}
