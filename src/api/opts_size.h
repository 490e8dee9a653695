/* Option structs across library versions: every struct a caller fills
 * starts with uint32_t struct_size (include/sleapc/sleapc.h). */
#ifndef SLEAPC_API_OPTS_SIZE_H
#define SLEAPC_API_OPTS_SIZE_H

#include <stddef.h>

#include "sleapc/sleapc.h"

/* The caller's options src as this library's struct, into dst (full_size
 * bytes): fields past src's struct_size (a caller built against older,
 * smaller headers) take the defaults. src NULL: the defaults. A struct_size
 * of 0, or larger than full_size (newer headers than this library), is
 * refused naming the struct and its default function, e.g. what
 * "sleapc_eval_opts". */
sleapc_status sleapc__opts_read(void *dst, size_t full_size, const void *defaults,
                                const void *src, const char *what);

/* As sleapc__opts_read for struct type T with defaults d (an lvalue). */
#define SLEAPC__OPTS_READ(dst, d, src, T) \
    sleapc__opts_read((dst), sizeof(T), &(d), (src), #T)

#endif
