/* The sleap-nn release a run reproduces (sleapc_compat, sleapc.h): one
 * choice per run, resolved here so every module reads the same answer. */
#ifndef SLEAPC_CORE_COMPAT_H
#define SLEAPC_CORE_COMPAT_H

#include <stdbool.h>

#include "sleapc/sleapc.h"

/* DEFAULT as the release it stands for; unknown values stay as they are. */
sleapc_compat sleapc__compat_resolve(sleapc_compat c);
/* Whether c is a value sleapc knows (DEFAULT included). */
bool sleapc__compat_valid(sleapc_compat c);
/* Whether c (resolved) behaves as sleap-nn 0.3.3. */
bool sleapc__compat_is_0_3_3(sleapc_compat c);
/* "0.3.5", "0.3.3"; NULL for an unknown value. */
const char *sleapc__compat_name(sleapc_compat c);
sleapc_status sleapc__compat_parse(const char *s, sleapc_compat *out);

#endif
