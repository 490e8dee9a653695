/* libFuzzer target: .npy files (header dict, dtype, shape, fortran order,
 * payload size), read from a scratch file as the CLI reads them. Every
 * input must end in a status with a message, never a crash, leak or abort.
 * Replayed on its committed corpus by test_fuzz_npy_replay.c. */
#include "fuzz_common.h"
#include "io/npy/npy_file.h"
#include "sleapc/tools.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch("fuzz.npy", data, size);
    if (!path)
        return 0;
    sleapc_tensor t;
    sleapc_status st = sleapc__npy_read(path, &t);
    fuzz_expect("fuzz_npy_read", st);
    if (!st)
        sleapc_tensor_free(&t);
    return 0;
}
