#include "core/mem_budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/error.h"
#include "core/settings.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* MemAvailable from /proc/meminfo (the kernel's estimate of what can be had
 * without swapping), else the physical pages free; -1 when neither reads. */
static int64_t available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        long long kb = -1;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
                break;
        fclose(f);
        if (kb >= 0)
            return (int64_t)kb * 1024;
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : -1;
}

/* This process's address-space size and resident size, in bytes (-1: unknown). */
static void process_sizes(int64_t *vm, int64_t *rss)
{
    *vm = *rss = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return;
    long long size = 0, resident = 0;
    long page = sysconf(_SC_PAGESIZE);
    if (fscanf(f, "%lld %lld", &size, &resident) == 2 && page > 0) {
        *vm = (int64_t)size * page;
        *rss = (int64_t)resident * page;
    }
    fclose(f);
}

static void consider(sleapc_mem_budget *b, int64_t bytes, const char *limit)
{
    if (bytes < 0)
        bytes = 0;
    if (bytes < b->bytes) {
        b->bytes = bytes;
        b->limit = limit;
    }
}

sleapc_mem_budget sleapc__mem_budget(void)
{
    sleapc_mem_budget b = {.bytes = INT64_MAX, .limit = ""};
    int64_t vm, rss;
    process_sizes(&vm, &rss);
    int64_t avail = available_bytes();
    if (avail >= 0)
        consider(&b, avail, "the memory this machine has available (MemAvailable)");
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && vm >= 0 &&
        rl.rlim_cur < (rlim_t)INT64_MAX)
        consider(&b, (int64_t)rl.rlim_cur - vm,
                 "the address-space limit (ulimit -v) above this process's current size");
    char env[256];
    if (sleapc__settings_memory_limit(env, sizeof env)) {
        int64_t cap = sleapc__settings_parse_bytes(env);
        if (cap < 0)
            sleapc__log(SLEAPC_LOG_WARN, "SLEAPC_MEMORY_LIMIT=\"%s\": expected bytes, e.g. 8G; "
                        "ignored", env);
        else
            consider(&b, cap - (rss > 0 ? rss : 0), "SLEAPC_MEMORY_LIMIT above what is in use");
    }
    return b;
}

sleapc_status sleapc__mem_check(int64_t need_bytes, const char *what)
{
    sleapc_mem_budget b = sleapc__mem_budget();
    if (need_bytes <= b.bytes)
        return SLEAPC_OK;
    return sleapc__fail(SLEAPC_ERR_NOMEM,
                        "%s needs about %.2f GiB of memory, and %s allows %.2f GiB; a smaller "
                        "batch size, input scale or frame size needs less",
                        what, (double)need_bytes / GIB, b.limit, (double)b.bytes / GIB);
}
