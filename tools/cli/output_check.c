/* The output path, checked before any work: a typo in -o must not cost a
 * whole run, and an output must never replace one of the command's inputs
 * or a special file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The folder part of path ("." when it has none); malloc'd. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (dir) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    return dir;
}

/* Create and remove a file beside out: the folder exists and takes files
 * (permissions, read-only mounts, a full inode table all show here). */
static int probe_folder(const char *out)
{
    char *dir = folder_of(out);
    if (!dir)
        return cli_error("out of memory");
    struct stat sb;
    int rc = 0;
    if (stat(dir, &sb) != 0)
        rc = cli_error("-o %s: folder %s: %s", out, dir, strerror(errno));
    else if (!S_ISDIR(sb.st_mode))
        rc = cli_error("-o %s: %s is not a folder", out, dir);
    free(dir);
    if (rc)
        return rc;
    size_t n = strlen(out) + 16;
    char *probe = malloc(n);
    if (!probe)
        return cli_error("out of memory");
    snprintf(probe, n, "%s.tmp.XXXXXX", out);
    int fd = mkstemp(probe);
    if (fd < 0) {
        rc = cli_error("-o %s: cannot write there: %s", out, strerror(errno));
    } else {
        close(fd);
        unlink(probe);
    }
    free(probe);
    return rc;
}

int cli_check_output(const char *out, const char *const *inputs, int n_inputs)
{
    if (!out[0])
        return cli_error("-o: an empty path");
    struct stat so, si;
    if (stat(out, &so) == 0) {
        for (int i = 0; i < n_inputs; i++)
            if (inputs[i] && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev &&
                si.st_ino == so.st_ino)
                return cli_error("-o %s is the input %s: refusing to replace an input", out,
                                 inputs[i]);
        if (S_ISDIR(so.st_mode))
            return cli_error("-o %s: is a folder", out);
        if (!S_ISREG(so.st_mode))
            return cli_error("-o %s: not a regular file (a device, FIFO or socket is never "
                             "replaced)",
                             out);
    } else if (errno != ENOENT) {
        /* A symbolic link to nothing, a path through a file, permissions. */
        struct stat sl;
        if (lstat(out, &sl) == 0 && S_ISLNK(sl.st_mode))
            return cli_error("-o %s: a symbolic link that leads to no file", out);
        return cli_error("-o %s: %s", out, strerror(errno));
    } else {
        struct stat sl;
        if (lstat(out, &sl) == 0 && S_ISLNK(sl.st_mode))
            return cli_error("-o %s: a symbolic link that leads to no file", out);
    }
    return probe_folder(out);
}
