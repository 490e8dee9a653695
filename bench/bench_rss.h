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

/* Peak resident set size in KiB since the start or the last
 * bench_rss_peak_reset, from /proc/self/status (VmHWM); -1 when unknown. */
static inline long bench_rss_peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

/* Sets the peak back to the current RSS (Linux: "5" to clear_refs). */
static inline void bench_rss_peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

#endif
