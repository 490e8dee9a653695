/* Files written atomically: data goes to a temporary file beside the target,
 * which replaces the target by rename only once it is complete, so an
 * interrupted run never leaves a half-written file behind. */
#ifndef SLEAPC_CORE_ATOMIC_FILE_H
#define SLEAPC_CORE_ATOMIC_FILE_H

#include <stdio.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_atomic_file {
    FILE *f;      /* write here */
    char *tmp;    /* owned: the temporary file's name */
    char *path;   /* owned: the target */
} sleapc_atomic_file;

/* Create the temporary file. SLEAPC_ERR_IO names path on failure. An
 * existing path that is a symbolic link is written through (the file it
 * points to is replaced, the link stays); a folder, device, FIFO or socket
 * is refused, never replaced. */
sleapc_status sleapc__atomic_open(const char *path, sleapc_atomic_file *af);

/* SLEAPC_OK when target (what path names, after links) may be replaced by
 * a regular file: absent or a regular file. Messages name path. */
sleapc_status sleapc__atomic_check_target(const char *path, const char *target);

/* Flush, sync and rename into place; on any failure the temporary file is
 * removed and the target is untouched. Always releases af. */
sleapc_status sleapc__atomic_commit(sleapc_atomic_file *af);

/* Close and remove the temporary file. Accepts a zeroed af. */
void sleapc__atomic_abort(sleapc_atomic_file *af);

#endif
