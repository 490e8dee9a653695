/* libFuzzer target: bytes -> the ONNX reader -> everything that takes its
 * result without a real image: the interpreter's planner (network segments
 * imported into the IR, a native backend created for each), two runs on a
 * small input when the graph declares one (the second must allocate
 * nothing), and the raw-network importer.
 * Every bad input must end in a status, with no crash, leak or abort; the
 * sanitizers judge the first two. Built as a libFuzzer binary by
 * SLEAPC_BUILD_FUZZERS (clang), and replayed on a fixed corpus by
 * test_fuzz_onnx_replay.c in every build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "core/alloc.h"
#include "fuzz_onnx_read.h"
#include "io/onnx/onnx_read.h"
#include "model/from_onnx.h"

/* Elements of the input a graph is run on: enough for small synthetic graphs,
 * small enough that a network on it costs microseconds. */
#define FUZZ_MAX_INPUT 4096

fuzz_onnx_stats fuzz_onnx_seen;

/* A status a bad or unsupported file may give (plus `also`, unless it is
 * SLEAPC_OK); anything else is a bug. */
static int expected(sleapc_status st, sleapc_status also)
{
    return st == SLEAPC_ERR_FORMAT || st == SLEAPC_ERR_UNSUPPORTED || (also && st == also);
}

static void unexpected(const char *step, sleapc_status st)
{
    fuzz_onnx_seen.unexpected++;
    if (st)
        snprintf(fuzz_onnx_seen.last_unexpected, sizeof fuzz_onnx_seen.last_unexpected,
                 "%s: %s: %s", step, sleapc_status_str(st), sleapc_last_error());
    else
        snprintf(fuzz_onnx_seen.last_unexpected, sizeof fuzz_onnx_seen.last_unexpected, "%s", step);
#ifdef SLEAPC_LIBFUZZER
    fprintf(stderr, "fuzz_onnx_read: %s\n", fuzz_onnx_seen.last_unexpected);
    abort();
#endif
}

/* The input the graph declares, unknown dimensions 4 (rank 4 when the rank
 * is unknown), filled with a pattern in [0, 1]; false when it is not a type
 * the runner takes or has more than FUZZ_MAX_INPUT elements. */
static int make_input(const sleapc_onnx_model *om, sleapc_tensor *x, void *buf)
{
    const sleapc_onnx_graph *g = &om->graph;
    const sleapc_onnx_value *decl = NULL;
    for (int i = 0; i < g->n_inputs && !decl; i++)
        if (!sleapc__onnx_initializer(g, g->inputs[i].name))
            decl = &g->inputs[i];
    if (!decl || decl->ndim > SLEAPC_TENSOR_MAX_DIMS)
        return 0;
    switch (decl->dtype) {
    case SLEAPC_ONNX_DTYPE_FLOAT:
        x->dtype = SLEAPC_DTYPE_F32;
        break;
    case SLEAPC_ONNX_DTYPE_UINT8:
        x->dtype = SLEAPC_DTYPE_U8;
        break;
    case SLEAPC_ONNX_DTYPE_INT64:
        x->dtype = SLEAPC_DTYPE_I64;
        break;
    case SLEAPC_ONNX_DTYPE_INT32:
        x->dtype = SLEAPC_DTYPE_I32;
        break;
    default:
        return 0;
    }
    x->ndim = decl->ndim < 0 ? 4 : decl->ndim;
    int64_t n = 1;
    for (int i = 0; i < x->ndim; i++) {
        x->shape[i] = decl->ndim < 0 || decl->shape[i] < 0 ? 4 : decl->shape[i];
        if (x->shape[i] > FUZZ_MAX_INPUT)
            return 0;
        n *= x->shape[i];
        if (n > FUZZ_MAX_INPUT)
            return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        uint8_t b = (uint8_t)((uint32_t)(i * 2654435761u) >> 24);
        switch (x->dtype) {
        case SLEAPC_DTYPE_F32:
            ((float *)buf)[i] = b / 255.0f;
            break;
        case SLEAPC_DTYPE_U8:
            ((uint8_t *)buf)[i] = b;
            break;
        case SLEAPC_DTYPE_I64:
            ((int64_t *)buf)[i] = b % 4;
            break;
        case SLEAPC_DTYPE_I32:
            ((int32_t *)buf)[i] = b % 4;
            break;
        }
    }
    x->data = buf;
    return 1;
}

/* Two runs: the second, on the same input, must reuse what the first sized
 * and allocate nothing. */
static void run_twice(sleapc_onnxrt *rt, const sleapc_onnx_model *om)
{
    static int64_t buf[FUZZ_MAX_INPUT];
    sleapc_tensor x = {0};
    if (!make_input(om, &x, buf))
        return;
    sleapc_status st = SLEAPC_OK;
    for (int r = 0; r < 2 && !st; r++) {
        sleapc_tensor_map out = {0};
        int64_t before = sleapc__alloc_count();
        st = sleapc__onnxrt_run(rt, &x, &out);
        if (st && !expected(st, SLEAPC_ERR_INVALID_ARG))
            unexpected("run", st);
        if (!st && r == 1 && sleapc__alloc_count() != before)
            unexpected("run: the second run on the same input allocated", SLEAPC_OK);
    }
    fuzz_onnx_seen.ran += !st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_onnx_seen.inputs++;
    sleapc_onnx_model *om = NULL;
    sleapc_status st = sleapc__onnx_parse(data, size, "fuzz.onnx", &om);
    if (st) {
        if (!expected(st, SLEAPC_OK) || om)
            unexpected("parse", st);
        return 0;
    }
    fuzz_onnx_seen.parsed++;
    sleapc_onnxrt *rt = NULL;
    st = sleapc__onnxrt_create(om, "native", 1, &rt);
    if (st && (!expected(st, SLEAPC_OK) || rt))
        unexpected("plan", st);
    if (!st) {
        fuzz_onnx_seen.planned++;
        run_twice(rt, om);
    }
    sleapc__onnxrt_destroy(rt);
    sleapc_weights w = {0};
    sleapc_graph g = {0};
    st = sleapc__graph_from_onnx(om, NULL, 0, &w, &g);
    if (st && !expected(st, SLEAPC_OK))
        unexpected("import", st);
    fuzz_onnx_seen.imported += !st;
    sleapc__graph_clear(&g);
    sleapc__weights_clear(&w);
    sleapc__onnx_destroy(om);
    return 0;
}
