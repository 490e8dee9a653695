/* --frames: "0-99,150,200-210" -> a list of frame indices, checked against
 * the number of frames the input has. "1,-200" is the range 1-200, as
 * sleap-nn reads it (the SLEAP GUI writes whole-video ranges that way). A
 * frame listed more than once (by repeats or overlapping ranges) is kept
 * once, where it first appears: the list means a set of frames, and
 * predicting one twice would only write two identical labeled frames for one
 * index (and let a careless list grow without bound). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_frames(const char *spec, int64_t n_frames, int64_t **out, int64_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t cap = 64, n = 0;
    int64_t *list = malloc(cap * sizeof *list);
    if (!list)
        return cli_error("out of memory");
    uint8_t *seen = n_frames > 0 ? calloc((size_t)(n_frames / 8 + 1), 1) : NULL;
    if (!seen) {
        free(list);
        return n_frames > 0 ? cli_error("out of memory")
                            : cli_error("--frames: the input has no frames");
    }
    const char *p = spec;
    while (*p) {
        char *end;
        long long a = strtoll(p, &end, 10), b;
        if (end == p || a < 0)
            goto bad;
        p = end;
        if (*p == '-' || (p[0] == ',' && p[1] == '-')) {
            p += *p == '-' ? 1 : 2;
            b = strtoll(p, &end, 10);
            if (end == p || b < a)
                goto bad;
            p = end;
        } else {
            b = a;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
        if (b >= n_frames) {
            free(list);
            free(seen);
            return cli_error("--frames: frame %lld is beyond the end (the input has %lld frames)",
                             b, (long long)n_frames);
        }
        for (long long k = a; k <= b; k++) {
            if (seen[k / 8] & (1u << (k % 8)))
                continue;
            seen[k / 8] |= (uint8_t)(1u << (k % 8));
            if (n == cap) {
                int64_t *bigger = realloc(list, 2 * cap * sizeof *list);
                if (!bigger) {
                    free(list);
                    free(seen);
                    return cli_error("out of memory");
                }
                list = bigger;
                cap *= 2;
            }
            list[n++] = k;
        }
    }
    free(seen);
    seen = NULL;
    if (n == 0)
        goto bad;
    *out = list;
    *n_out = (int64_t)n;
    return 0;
bad:
    free(list);
    free(seen);
    return cli_error("--frames: expected a list like 0-99,150, got \"%s\"", spec);
}
