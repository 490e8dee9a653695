/* --frames: "0-99,150,200-210" -> a list of frame indices, checked against
 * the number of frames the input has. */
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
    const char *p = spec;
    while (*p) {
        char *end;
        long long a = strtoll(p, &end, 10), b;
        if (end == p || a < 0)
            goto bad;
        p = end;
        if (*p == '-') {
            b = strtoll(p + 1, &end, 10);
            if (end == p + 1 || b < a)
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
            return cli_error("--frames: frame %lld is beyond the end (the input has %lld frames)", b,
                             (long long)n_frames);
        }
        for (long long k = a; k <= b; k++) {
            if (n == cap) {
                int64_t *bigger = realloc(list, 2 * cap * sizeof *list);
                if (!bigger) {
                    free(list);
                    return cli_error("out of memory");
                }
                list = bigger;
                cap *= 2;
            }
            list[n++] = k;
        }
    }
    if (n == 0)
        goto bad;
    *out = list;
    *n_out = (int64_t)n;
    return 0;
bad:
    free(list);
    return cli_error("--frames: expected a list like 0-99,150, got \"%s\"", spec);
}
