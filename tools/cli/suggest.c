/* "Did you mean --x?": the known name nearest to a misspelled one. */
#include <string.h>

#include "cli.h"

static char fold(char c)
{
    return c == '-' ? '_' : c;
}

/* Levenshtein distance with '-' and '_' equal; names are short. */
static int edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 63 || nb > 63)
        return 1 << 20;
    int row[64];
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
            int best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

const char *cli_nearest_name(const char *name, const char *const *names, int n)
{
    const char *best = NULL;
    int best_d = 1 << 20;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(name, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    /* A few typos, or a third of the word for long names. */
    int limit = (int)strlen(name) / 3;
    if (limit < 2)
        limit = 2;
    return best_d <= limit ? best : NULL;
}

int cli_unknown_option(const char *cmd, const char *arg, const char *const *names, int n)
{
    char word[128];
    const char *start = arg + (arg[0] == '-' ? (arg[1] == '-' ? 2 : 1) : 0);
    size_t len = strcspn(start, "=");
    if (len >= sizeof word)
        len = sizeof word - 1;
    memcpy(word, start, len);
    word[len] = '\0';
    const char *near = cli_nearest_name(word, names, n);
    if (near)
        return cli_error("%s: unknown option \"%s\"; did you mean --%s?", cmd, arg, near);
    return cli_error("%s: unknown option \"%s\" (see sleapc %s --help)", cmd, arg, cmd);
}
