#include "core/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

static void release(sleapc_atomic_file *af)
{
    sleapc__free(af->tmp);
    sleapc__free(af->path);
    memset(af, 0, sizeof *af);
}

/* The file a chain of symbolic links ends at (a relative link is resolved
 * from its own folder); NULL when a link is dangling, loops, or memory is
 * short. Owned by the caller. */
static char *follow_links(const char *path)
{
    char *cur = sleapc__strdup(path);
    for (int hop = 0; cur && hop < 40; hop++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0) {
            sleapc__free(cur);
            return NULL;
        }
        if (!S_ISLNK(sb.st_mode))
            return cur;
        char link[4096];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n <= 0) {
            sleapc__free(cur);
            return NULL;
        }
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dir_len = link[0] != '/' && slash ? (size_t)(slash - cur) + 1 : 0;
        char *next = sleapc__malloc(dir_len + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dir_len);
            memcpy(next + dir_len, link, (size_t)n + 1);
        }
        sleapc__free(cur);
        cur = next;
    }
    sleapc__free(cur);
    return NULL;
}

/* Where the data goes: path itself, or for a symbolic link the file it
 * points to (written through: the link stays a link). A folder, device,
 * FIFO or socket is never replaced by a regular file. *target is owned. */
static sleapc_status resolve_target(const char *path, char **target)
{
    *target = NULL;
    struct stat sb;
    sleapc_status st = SLEAPC_OK;
    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT)
            return sleapc__fail(SLEAPC_ERR_IO, "write %s: %s", path, strerror(errno));
        *target = sleapc__strdup(path);
    } else if (S_ISLNK(sb.st_mode)) {
        *target = follow_links(path);
        if (!*target)
            return sleapc__fail(SLEAPC_ERR_IO, "write %s: a symbolic link that leads to no file",
                                path);
        st = sleapc__atomic_check_target(path, *target);
    } else {
        st = sleapc__atomic_check_target(path, path);
        *target = st ? NULL : sleapc__strdup(path);
    }
    if (st) {
        sleapc__free(*target);
        *target = NULL;
        return st;
    }
    if (!*target)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write %s: out of memory", path);
    return SLEAPC_OK;
}

sleapc_status sleapc__atomic_check_target(const char *path, const char *target)
{
    struct stat sb;
    if (stat(target, &sb) != 0)
        return errno == ENOENT ? SLEAPC_OK
                               : sleapc__fail(SLEAPC_ERR_IO, "write %s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return sleapc__fail(SLEAPC_ERR_IO, "write %s: is a folder", path);
    if (!S_ISREG(sb.st_mode))
        return sleapc__fail(SLEAPC_ERR_IO,
                            "write %s: not a regular file (a device, FIFO or "
                            "socket is never replaced)",
                            path);
    return SLEAPC_OK;
}

sleapc_status sleapc__atomic_open(const char *path, sleapc_atomic_file *af)
{
    memset(af, 0, sizeof *af);
    sleapc_status rst = resolve_target(path, &af->path);
    if (rst)
        return rst;
    path = af->path;
    size_t n = strlen(path) + 16;
    af->tmp = sleapc__malloc(n);
    if (!af->tmp) {
        /* The message first: path is af->path, which release frees. */
        sleapc_status st = sleapc__fail(SLEAPC_ERR_NOMEM, "write %s: out of memory", path);
        release(af);
        return st;
    }
    /* Beside the target, so the rename stays within one file system. */
    snprintf(af->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        sleapc_status st = sleapc__fail(SLEAPC_ERR_IO, "write %s: %s", path, strerror(errno));
        release(af);
        return st;
    }
    /* mkstemp creates 0600; a saved file gets the usual permissions. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        sleapc_status st = sleapc__fail(SLEAPC_ERR_IO, "write %s: %s", path, strerror(errno));
        close(fd);
        unlink(af->tmp);
        release(af);
        return st;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__atomic_commit(sleapc_atomic_file *af)
{
    sleapc_status st = SLEAPC_OK;
    bool ok = fflush(af->f) == 0 && !ferror(af->f);
    /* fsync before rename: after a crash the name points at whole data. */
    ok = ok && fsync(fileno(af->f)) == 0;
    int err = errno;
    if (fclose(af->f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    af->f = NULL;
    if (ok && rename(af->tmp, af->path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        st = sleapc__fail(SLEAPC_ERR_IO, "write %s: %s", af->path, strerror(err));
        unlink(af->tmp);
    }
    release(af);
    return st;
}

void sleapc__atomic_abort(sleapc_atomic_file *af)
{
    if (!af)
        return;
    if (af->f)
        fclose(af->f);
    if (af->tmp)
        unlink(af->tmp);
    release(af);
}
