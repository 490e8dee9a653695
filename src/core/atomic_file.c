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

sleapc_status sleapc__atomic_open(const char *path, sleapc_atomic_file *af)
{
    memset(af, 0, sizeof *af);
    size_t n = strlen(path) + 16;
    af->tmp = sleapc__malloc(n);
    af->path = sleapc__strdup(path);
    if (!af->tmp || !af->path) {
        release(af);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write %s: out of memory", path);
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
        close(fd);
        unlink(af->tmp);
        release(af);
        return sleapc__fail(SLEAPC_ERR_IO, "write %s: %s", path, strerror(errno));
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
