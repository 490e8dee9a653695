/* The fuzz target fuzz_config_json.c on its committed corpus, in every build: each
 * input ends in an expected status; the sanitizer build checks there is no
 * crash, overflow or leak. */
#include "fuzz_config_json.c"
#include "fuzz_replay.h"

int main(void)
{
    int n = fuzz_replay("config_json");
    CHECK_MSG(n >= 2, "only %d corpus files", n);
    return test_finish();
}
