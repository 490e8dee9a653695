/* getauxval and the POSIX file calls. */
#define _DEFAULT_SOURCE
#include "core/cpu_id.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__linux__)
#include <sys/auxv.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
/* The brand string (cpuid 0x80000002-4), the feature words of leaves 1 and 7
 * (those that tell the kernels apart: AVX2, AVX-512, VNNI, BF16, AMX) and
 * the state the OS saves (XCR0): the same model with AVX-512 switched off by
 * the OS gets another key. */
void sleapc__cpu_id(char *out, size_t cap)
{
    unsigned brand[12] = {0};
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u)
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002u + i, &brand[4 * i], &brand[4 * i + 1], &brand[4 * i + 2],
                        &brand[4 * i + 3]);
    char name[49];
    memcpy(name, brand, 48);
    name[48] = '\0';
    char *p = name;
    while (*p == ' ')
        p++;
    unsigned f1c = 0, f1d = 0, f7b = 0, f7c = 0, f7d = 0, f71a = 0, xcr0 = 0;
    if (__get_cpuid(1, &a, &b, &f1c, &f1d) && (f1c & (1u << 27))) {
        unsigned hi;
        __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
    }
    __get_cpuid_count(7, 0, &a, &f7b, &f7c, &f7d);
    __get_cpuid_count(7, 1, &f71a, &b, &c, &d);
    snprintf(out, cap, "x86 %s %08x.%08x.%08x.%08x.%08x.%08x.%08x", *p ? p : "unknown", f1c, f1d,
             f7b, f7c, f7d, f71a, xcr0);
}

bool sleapc__cpu_has_amx_bf16(void)
{
    unsigned a, b, c, d, xcr0 = 0, hi;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
        return false;
    __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
    if (__get_cpuid_max(0, NULL) < 7)
        return false;
    __get_cpuid_count(7, 0, &a, &b, &c, &d);
    bool tile = d & (1u << 24), bf16 = d & (1u << 22);
    return tile && bf16 && (xcr0 & (3u << 17)) == (3u << 17);
}
#else
/* The first "model name", "CPU part" or "Hardware" line the kernel gives,
 * and the hardware capability words. */
void sleapc__cpu_id(char *out, size_t cap)
{
    char model[128] = "unknown", line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || !(strncmp(line, "model name", 10) == 0 ||
                        strncmp(line, "CPU part", 8) == 0 || strncmp(line, "Hardware", 8) == 0))
            continue;
        snprintf(model, sizeof model, "%s", colon + 1 + (colon[1] == ' '));
        model[strcspn(model, "\n")] = '\0';
        break;
    }
    if (f)
        fclose(f);
    unsigned long hw = 0, hw2 = 0;
#if defined(__linux__)
    hw = getauxval(AT_HWCAP);
#ifdef AT_HWCAP2
    hw2 = getauxval(AT_HWCAP2);
#endif
#endif
    snprintf(out, cap, "cpu %s %lx.%lx", model, hw, hw2);
}

bool sleapc__cpu_has_amx_bf16(void)
{
    return false;
}
#endif
