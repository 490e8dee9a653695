/* libFuzzer target: the command line's option values and frame lists. The
 * first byte picks what the rest is:
 *  - 0 mod 3: a --frames list ("0-99,150"), parsed against a frame count
 *    taken from the next four bytes;
 *  - 1 or 2 mod 3: NUL-separated arguments to `predict` or `render`. The
 *    harness appends an output in a folder that does not exist (and, for
 *    predict, a missing model and input), so every run stops at the option
 *    parser or the output check, before any file is read.
 * Every input must end in exit code 0 or 1 (after an error line), never a
 * crash, leak or abort. Replayed on its committed corpus by
 * test_fuzz_cli_args_replay.c. */
#include "fuzz_common.h"

#include "../../tools/cli/args.c"
#include "../../tools/cli/frames_arg.c"
#include "../../tools/cli/output_check.c"
#include "../../tools/cli/progress.c"
#include "../../tools/cli/predict_inputs.c"
#include "../../tools/cli/predict_options.c"
#include "../../tools/cli/predict_embed.c"
#include "../../tools/cli/predict_outputs.c"
#include "../../tools/cli/predict_run.c"
#include "../../tools/cli/predict_usage.c"
#include "../../tools/cli/suggest.c"
#include "../../tools/cli/tracker_choice_args.c"
#include "../../tools/cli/tracking_args.c"
#define usage predict_usage
#include "../../tools/cli/cmd_predict.c"
#undef usage
#define usage render_usage
#include "../../tools/cli/cmd_render.c"
#undef usage

#define FUZZ_MAX_ARGS 64
#define MISSING "/nonexistent-sleapc-fuzz"

static void fuzz_frames(const uint8_t *data, size_t size)
{
    if (size < 4)
        return;
    int64_t n_frames = (int64_t)(data[0] | data[1] << 8 | data[2] << 16) + (data[3] & 1);
    char *spec = malloc(size - 4 + 1);
    if (!spec)
        return;
    memcpy(spec, data + 4, size - 4);
    spec[size - 4] = '\0';
    int64_t *idx = NULL, n = 0;
    if (cli_parse_frames(spec, n_frames, &idx, &n) == 0) {
        /* Each frame once, inside the input. */
        uint8_t *seen = calloc((size_t)n_frames + 1, 1);
        for (int64_t i = 0; seen && i < n; i++) {
            if (idx[i] < 0 || idx[i] >= n_frames || seen[idx[i]])
                abort();
            seen[idx[i]] = 1;
        }
        free(seen);
    }
    free(idx);
    free(spec);
}

static void fuzz_command(int which, const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[FUZZ_MAX_ARGS + 10];
    int argc = 0;
    argv[argc++] = which == 1 ? "predict" : "render";
    for (size_t at = 0; at < size && argc < FUZZ_MAX_ARGS;) {
        argv[argc++] = text + at;
        at += strlen(text + at) + 1;
    }
    argv[argc++] = "-o";
    argv[argc++] = which == 1 ? MISSING "/out.slp" : MISSING "/out.png";
    if (which == 1) {
        argv[argc++] = "-i";
        argv[argc++] = MISSING "/in.mp4";
        argv[argc++] = "-m";
        argv[argc++] = MISSING "/model";
    }
    argv[argc] = NULL;
    int rc = which == 1 ? cmd_predict(argc, argv) : cmd_render(argc, argv);
    if (rc != 0 && rc != 1)
        abort();
    free(text);
}

/* The error lines (thousands a second) are silenced by running the fuzzer
 * with -close_fd_mask=3, which keeps libFuzzer's and the sanitizers' own
 * reports (reopening stderr here would hide those too). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int which = data[0] % 3;
    if (which == 0)
        fuzz_frames(data + 1, size - 1);
    else
        fuzz_command(which, data + 1, size - 1);
    return 0;
}
