/* mkdir, stat, link. */
#define _POSIX_C_SOURCE 200809L
#include "backends/auto_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/settings.h"

#define MAGIC "sleapc auto backend cache 1"
/* A key is a few hundred bytes (cpu_id, library versions); more is not ours. */
#define LINE_CAP 2048

bool sleapc__auto_cache_dir(char *out, size_t cap)
{
    return sleapc__settings_cache_dir(out, cap);
}

bool sleapc__auto_cache_path(const char *key, char *out, size_t cap)
{
    char dir[4096];
    if (!sleapc__auto_cache_dir(dir, sizeof dir))
        return false;
    uint64_t h = sleapc__hash64(0, key, strlen(key));
    int n = snprintf(out, cap, "%s/auto-%016" PRIx64 ".txt", dir, h);
    return n > 0 && (size_t)n < cap;
}

static bool plain_name(const char *s)
{
    if (!*s || strlen(s) >= SLEAPC_AUTO_NAME_CAP)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

bool sleapc__auto_entry_get(const sleapc_auto_entry *e, const char *name, double *ms)
{
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->name[i], name) == 0) {
            *ms = e->ms[i];
            return true;
        }
    return false;
}

void sleapc__auto_entry_set(sleapc_auto_entry *e, const char *name, double ms)
{
    int i = 0;
    while (i < e->n && strcmp(e->name[i], name) != 0)
        i++;
    if (i == SLEAPC_AUTO_CACHE_MAX)
        return;
    if (i == e->n) {
        snprintf(e->name[i], sizeof e->name[i], "%s", name);
        e->n++;
    }
    e->ms[i] = ms;
}

/* One line without its newline; false at the end, or for a line too long. */
static bool read_line(FILE *f, char *buf, size_t cap)
{
    if (!fgets(buf, (int)cap, f))
        return false;
    size_t n = strlen(buf);
    if (n == 0 || buf[n - 1] != '\n')
        return false;
    buf[n - 1] = '\0';
    return true;
}

/* The file's lines: MAGIC, "key K", "chosen NAME", "time NAME MS"..., "end". */
static bool parse(FILE *f, const char *key, sleapc_auto_entry *e)
{
    char *line = malloc(LINE_CAP);
    bool ok = line && read_line(f, line, LINE_CAP) && strcmp(line, MAGIC) == 0 &&
              read_line(f, line, LINE_CAP) && strncmp(line, "key ", 4) == 0 &&
              strcmp(line + 4, key) == 0 && read_line(f, line, LINE_CAP) &&
              strncmp(line, "chosen ", 7) == 0 && plain_name(line + 7);
    if (ok)
        snprintf(e->chosen, sizeof e->chosen, "%s", line + 7);
    bool end = false;
    while (ok && !end && read_line(f, line, LINE_CAP)) {
        char name[SLEAPC_AUTO_NAME_CAP + 1], rest[8];
        double ms;
        if (strcmp(line, "end") == 0)
            end = true;
        else if (e->n < SLEAPC_AUTO_CACHE_MAX && strlen(line) < 80 &&
                 sscanf(line, "time %32s %lf%7s", name, &ms, rest) == 2 && plain_name(name) &&
                 !isnan(ms) && ms < 1e9)
            sleapc__auto_entry_set(e, name, ms);
        else
            ok = false;
    }
    double chosen_ms;
    ok = ok && end && sleapc__auto_entry_get(e, e->chosen, &chosen_ms) && chosen_ms >= 0;
    free(line);
    return ok;
}

bool sleapc__auto_cache_load(const char *key, sleapc_auto_entry *e)
{
    memset(e, 0, sizeof *e);
    char path[4200];
    if (!sleapc__auto_cache_path(key, path, sizeof path))
        return false;
    struct stat st;
    /* Only a regular file of a sensible size: never block on a FIFO. */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 64 * 1024)
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = parse(f, key, e);
    fclose(f);
    if (!ok)
        memset(e, 0, sizeof *e);
    return ok;
}

/* mkdir -p, the folders it makes private to the user (XDG's 0700). */
static sleapc_status make_dirs(const char *dir)
{
    char p[4096];
    int n = snprintf(p, sizeof p, "%s", dir);
    if (n <= 0 || (size_t)n >= sizeof p)
        return sleapc__fail(SLEAPC_ERR_IO, "cache folder %s: name too long", dir);
    for (char *s = p + 1;; s++) {
        bool last = *s == '\0';
        if (*s == '/' || last) {
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return sleapc__fail(SLEAPC_ERR_IO, "cache folder %s: %s", p, strerror(errno));
            if (last)
                break;
            *s = '/';
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sleapc__fail(SLEAPC_ERR_IO, "cache folder %s: not a folder", dir);
    return SLEAPC_OK;
}

/* The entry's file written whole to a temporary file beside path. */
static sleapc_status write_tmp(const char *key, const sleapc_auto_entry *e, char *path,
                               size_t cap, sleapc_atomic_file *af)
{
    char dir[4096];
    if (!sleapc__auto_cache_dir(dir, sizeof dir) || !sleapc__auto_cache_path(key, path, cap))
        return sleapc__fail(SLEAPC_ERR_IO, "no cache folder (SLEAPC_NO_CACHE, or no HOME)");
    if (strlen(key) + 5 >= LINE_CAP || strchr(key, '\n') || !plain_name(e->chosen))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "cache entry: bad key or name");
    sleapc_status st = make_dirs(dir);
    if (st)
        return st;
    st = sleapc__atomic_open(path, af);
    if (st)
        return st;
    fprintf(af->f, "%s\nkey %s\nchosen %s\n", MAGIC, key, e->chosen);
    for (int i = 0; i < e->n; i++)
        fprintf(af->f, "time %s %.3f\n", e->name[i], e->ms[i]);
    fprintf(af->f, "end\n");
    if (fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0) {
        sleapc__atomic_abort(af);
        return sleapc__fail(SLEAPC_ERR_IO, "cache file %s: %s", path, strerror(errno));
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__auto_cache_store(const char *key, const sleapc_auto_entry *e)
{
    char path[4200];
    sleapc_atomic_file af;
    sleapc_status st = write_tmp(key, e, path, sizeof path, &af);
    return st ? st : sleapc__atomic_commit(&af);
}

bool sleapc__auto_cache_store_first(const char *key, const sleapc_auto_entry *e,
                                    sleapc_auto_entry *kept)
{
    char path[4200];
    sleapc_atomic_file af;
    if (write_tmp(key, e, path, sizeof path, &af) != SLEAPC_OK) {
        sleapc__clear_error();
        return sleapc__auto_cache_load(key, kept);
    }
    /* link() fails when path exists: a file another run kept first stays. */
    bool linked = link(af.tmp, path) == 0;
    sleapc__atomic_abort(&af);
    if (sleapc__auto_cache_load(key, kept))
        return true;
    if (linked || sleapc__auto_cache_store(key, e) != SLEAPC_OK) {
        sleapc__clear_error();
        return false;
    }
    return sleapc__auto_cache_load(key, kept);
}
