/* sleapc_struct_layout, which bindings check their struct mirrors against:
 * for every public struct it describes, the fields are those the header
 * declares (counted from the header's text, so a field added to a header and
 * not to the table fails here), in order, without overlap, and covering the
 * struct up to alignment padding; unknown names are refused. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sleapc/eval.h"
#include "sleapc/input.h"
#include "sleapc/predictor.h"
#include "sleapc/render.h"
#include "sleapc/tracking.h"
#include "test_util.h"

static const char *const headers[] = {"sleapc.h",    "tensor.h",   "model.h",  "runner.h",
                                      "predictor.h", "writer.h",   "frame.h",  "stream.h",
                                      "pipeline.h",  "tracking.h", "render.h", "eval.h"};

/* Fields the header declares between "typedef struct NAME {" and "} NAME;":
 * one per declarator (int a, b; is two); -1 when not found. */
static int header_fields(const char *name)
{
    char open[160], close[160];
    snprintf(open, sizeof open, "typedef struct %s {", name);
    snprintf(close, sizeof close, "} %s;", name);
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; h++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/include/sleapc/%s", SLEAPC_SOURCE_DIR, headers[h]);
        size_t size = 0;
        unsigned char *raw = test_read_file(path, &size);
        char *text = raw ? realloc(raw, size + 1) : NULL;  /* as a C string */
        if (!text) {
            free(raw);
            continue;
        }
        text[size] = '\0';
        char *start = strstr(text, open), *end = start ? strstr(start, close) : NULL;
        if (!end) {
            free(text);
            continue;
        }
        int n = 0, depth = 0;
        bool in_comment = false;
        for (char *c = start + strlen(open); c < end; c++) {
            if (in_comment) {
                if (c[0] == '*' && c[1] == '/')
                    in_comment = false, c++;
            } else if (c[0] == '/' && c[1] == '*') {
                in_comment = true, c++;
            } else if (*c == '(' || *c == '[') {
                depth++;
            } else if (*c == ')' || *c == ']') {
                depth--;
            } else if (depth == 0 && (*c == ';' || *c == ',')) {
                n++;
            }
        }
        free(text);
        return n;
    }
    return -1;
}

int main(void)
{
    static const char *const names[] = {
        "sleapc_field_layout",       "sleapc_tensor",        "sleapc_predictor_opts",
        "sleapc_skeleton",           "sleapc_video_info",    "sleapc_frame",
        "sleapc_stream_timing",      "sleapc_progress",      "sleapc_run_opts",
        "sleapc_stage_info",         "sleapc_tracking_opts", "sleapc_filter_opts",
        "sleapc_runner_opts",        "sleapc_render_opts",   "sleapc_eval_opts",
        "sleapc_eval_tracking_opts", "sleapc_results"};
    for (size_t s = 0; s < sizeof names / sizeof names[0]; s++) {
        size_t size = 0;
        int n = 0;
        const sleapc_field_layout *f = NULL;
        CHECK_OK(sleapc_struct_layout(names[s], &size, &n, &f));
        int declared = header_fields(names[s]);
        CHECK_MSG(n == declared, "%s: %d fields described, %d declared in the header", names[s], n,
                  declared);
        size_t end = 0;
        for (int i = 0; i < n; i++) {
            CHECK_MSG(f[i].offset >= end && f[i].offset - end < 8, "%s.%s at %zu after %zu",
                      names[s], f[i].name, f[i].offset, end);
            end = f[i].offset + f[i].size;
        }
        CHECK_MSG(end <= size && size - end < 8, "%s: fields end at %zu of %zu", names[s], end,
                  size);
    }
    size_t size = 0;
    int n = 0;
    const sleapc_field_layout *f = NULL;
    CHECK_OK(sleapc_struct_layout("sleapc_predictor_opts", &size, &n, &f));
    CHECK(size == sizeof(sleapc_predictor_opts));
    /* anchor_part, the field the Python mirror once lacked, is described
     * where the compiler puts it */
    int k = 0;
    while (k < n && strcmp(f[k].name, "anchor_part") != 0)
        k++;
    CHECK(k < n && f[k].offset == offsetof(sleapc_predictor_opts, anchor_part));
    CHECK(sleapc_struct_layout("sleapc_nothing", &size, &n, &f) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "sleapc_nothing") != NULL);
    CHECK(sleapc_struct_layout(NULL, &size, &n, &f) == SLEAPC_ERR_INVALID_ARG);
    return test_finish();
}
