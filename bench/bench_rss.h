/* The process's resident set size, read by the memory benchmarks
 * (bench_writer_rss, bench_soak). */
#ifndef SLEAPC_BENCH_RSS_H
#define SLEAPC_BENCH_RSS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resident set size in KiB, from /proc/self/status; -1 when unknown. */
static inline long bench_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

#endif
