/* How much more memory this process can take, so that a plan too large for
 * the machine is refused with a message before it runs, instead of ending
 * in an allocation failure some library does not check, or the OOM killer. */
#ifndef SLEAPC_CORE_MEM_BUDGET_H
#define SLEAPC_CORE_MEM_BUDGET_H

#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_mem_budget {
    int64_t bytes;      /* INT64_MAX when nothing limits it */
    const char *limit;  /* what sets it, in words ("" when nothing does) */
} sleapc_mem_budget;

/* The least of: the memory the kernel says is available (MemAvailable, else
 * physical RAM), what the address-space limit (RLIMIT_AS) leaves above the
 * process's current size, and $SLEAPC_MEMORY_LIMIT (bytes, or with a K, M,
 * G or T suffix) above the current resident size. */
sleapc_mem_budget sleapc__mem_budget(void);

/* SLEAPC_OK when need_bytes fits the budget; else SLEAPC_ERR_NOMEM with a
 * message saying what needs how much (`what`: "the network's input (2, 1,
 * 6144, 6144)") and what allows how much. */
sleapc_status sleapc__mem_check(int64_t need_bytes, const char *what);

#endif
