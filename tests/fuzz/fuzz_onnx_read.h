/* The ONNX fuzz target (fuzz_onnx_read.c): the libFuzzer entry point, and
 * what it saw, for the replay test that links the same code. */
#ifndef SLEAPC_TESTS_FUZZ_ONNX_READ_H
#define SLEAPC_TESTS_FUZZ_ONNX_READ_H

#include <stddef.h>
#include <stdint.h>

/* Parse data as an ONNX model; when it parses, plan it for the interpreter
 * (networks imported and given a native backend), run a small input through
 * it twice when its declared input is small (the second run must allocate
 * nothing), and import it as a raw network.
 * Always returns 0 (libFuzzer's contract). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How far the inputs got, since the program started. A status outside what a
 * bad file may give (a bug) is counted in `unexpected`; the libFuzzer build
 * aborts on it instead, so the fuzzer keeps the input. */
typedef struct fuzz_onnx_stats {
    long inputs;
    long parsed;   /* sleapc__onnx_parse succeeded */
    long planned;  /* sleapc__onnxrt_create succeeded */
    long ran;      /* both runs succeeded */
    long imported; /* sleapc__graph_from_onnx succeeded */
    long unexpected;
    char last_unexpected[512]; /* the step, the status and sleapc_last_error() */
} fuzz_onnx_stats;

extern fuzz_onnx_stats fuzz_onnx_seen;

#endif
