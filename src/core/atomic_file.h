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

/* Create the temporary file. SLEAPC_ERR_IO names path on failure. */
sleapc_status sleapc__atomic_open(const char *path, sleapc_atomic_file *af);

/* Flush, sync and rename into place; on any failure the temporary file is
 * removed and the target is untouched. Always releases af. */
sleapc_status sleapc__atomic_commit(sleapc_atomic_file *af);

/* Close and remove the temporary file. Accepts a zeroed af. */
void sleapc__atomic_abort(sleapc_atomic_file *af);

#endif
