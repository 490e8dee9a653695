/* What -i names, as a list of inputs: a file; a folder of videos (each one
 * an input; a folder of images stays one input, its frames); a .txt file
 * listing inputs one per line (relative to the list's folder, '#' starts a
 * comment). --shard K/N then keeps every N-th input from the K-th. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "predict_inputs.h"

static bool has_ext_ci(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    if (n <= k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (tolower((unsigned char)path[n - k + i]) != ext[i])
            return false;
    return true;
}

static bool is_video_name(const char *name)
{
    static const char *const exts[] = {".mp4", ".avi", ".mov", ".mkv", ".m4v", ".mpg", ".mpeg",
                                       ".webm", ".wmv", ".flv", ".h264", ".ts"};
    if (name[0] == '.')
        return false;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (has_ext_ci(name, exts[i]))
            return true;
    return false;
}

static int push(cli_input_list *l, const char *a, const char *b)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **bigger = realloc(l->paths, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return cli_error("out of memory");
        l->paths = bigger;
        l->cap = cap;
    }
    size_t n = strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
    char *s = malloc(n);
    if (!s)
        return cli_error("out of memory");
    if (b)
        snprintf(s, n, "%s/%s", a, b);
    else
        snprintf(s, n, "%s", a);
    l->paths[l->n++] = s;
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder: its videos, sorted by name; none: the folder itself (images). */
static int add_folder(cli_input_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error("%s: cannot read the folder: %s", dir, strerror(errno));
    int first = l->n, rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)))
        if (is_video_name(e->d_name))
            rc = push(l, dir, e->d_name);
    closedir(d);
    if (rc)
        return rc;
    if (l->n == first)
        return push(l, dir, NULL);
    qsort(l->paths + first, (size_t)(l->n - first), sizeof l->paths[0], compare_names);
    return 0;
}

static int add_list_file(cli_input_list *l, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cli_error("%s: cannot open the list: %s", path, strerror(errno));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    char line[4096];
    int rc = 0, n = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line, *end = line + strlen(line);
        while (isspace((unsigned char)*s))
            s++;
        while (end > s && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (!*s)
            continue;
        rc = s[0] == '/' || !slash ? push(l, s, NULL) : push(l, dir, s);
        n++;
    }
    fclose(f);
    if (!rc && n == 0)
        return cli_error("%s: the list names no inputs", path);
    return rc;
}

int cli_inputs_expand(const char *const *args, int n_args, cli_input_list *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n_args; i++) {
        struct stat st;
        int rc;
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = add_folder(out, args[i]);
        else if (has_ext_ci(args[i], ".txt") || has_ext_ci(args[i], ".list"))
            rc = add_list_file(out, args[i]);
        else
            rc = push(out, args[i], NULL);
        if (rc) {
            cli_inputs_free(out);
            return rc;
        }
    }
    return 0;
}

void cli_inputs_free(cli_input_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    memset(l, 0, sizeof *l);
}

int cli_parse_shard(const char *spec, int *k, int *n)
{
    long a, b;
    char buf[64];
    const char *slash = strchr(spec, '/');
    if (!slash || (size_t)(slash - spec) >= sizeof buf)
        goto bad;
    memcpy(buf, spec, (size_t)(slash - spec));
    buf[slash - spec] = '\0';
    if (!cli_parse_int(buf, 0, 1000000, &a) || !cli_parse_int(slash + 1, 1, 1000000, &b) || a >= b)
        goto bad;
    *k = (int)a;
    *n = (int)b;
    return 0;
bad:
    return cli_error("--shard: expected K/N with 0 <= K < N (e.g. 0/4), got \"%s\"", spec);
}

void cli_inputs_shard(cli_input_list *l, int k, int n)
{
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (i % n == k)
            l->paths[kept++] = l->paths[i];
        else
            free(l->paths[i]);
    }
    l->n = kept;
}

void cli_frames_shard(int64_t *frames, int64_t *n_frames, int k, int n)
{
    /* Contiguous ranges keep decoding sequential: shard k gets
     * [k*len/n, (k+1)*len/n) of the frames. */
    int64_t len = *n_frames;
    int64_t lo = len * k / n, hi = len * (k + 1) / n;
    memmove(frames, frames + lo, (size_t)(hi - lo) * sizeof *frames);
    *n_frames = hi - lo;
}
