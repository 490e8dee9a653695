/* What this CPU is, in one line: the key under which measurements that
 * depend on the CPU (the "auto" backend's choice) are kept. */
#ifndef SLEAPC_CORE_CPU_ID_H
#define SLEAPC_CORE_CPU_ID_H

#include <stddef.h>

/* "x86 <brand string> <feature words in hex>", or the same from what the
 * OS says of another architecture; never fails (at worst "unknown"). */
void sleapc__cpu_id(char *out, size_t cap);

#endif
