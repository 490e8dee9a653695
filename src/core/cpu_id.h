/* What this CPU is, in one line: the key under which measurements that
 * depend on the CPU (the "auto" backend's choice) are kept. */
#ifndef SLEAPC_CORE_CPU_ID_H
#define SLEAPC_CORE_CPU_ID_H

#include <stdbool.h>
#include <stddef.h>

/* "x86 <brand string> <feature words in hex>", or the same from what the
 * OS says of another architecture; never fails (at worst "unknown"). */
void sleapc__cpu_id(char *out, size_t cap);

/* Whether cpuid reports AMX-TILE and AMX-BF16 and the OS saves the tile
 * state (XCR0 bits 17 and 18). Linux also wants each process to ask for the
 * tile data before its first use (native_amx_tiles.c does). */
bool sleapc__cpu_has_amx_bf16(void);

#endif
