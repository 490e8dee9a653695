/* Whether a string ends with a suffix: file extensions (".slp", ".png") and
 * name endings ("Head", "Storage"), tested in one place. */
#ifndef SLEAPC_CORE_SUFFIX_H
#define SLEAPC_CORE_SUFFIX_H

#include <stdbool.h>

/* s ends with suffix, case-sensitively. */
bool sleapc__ends_with(const char *s, const char *suffix);

/* s ends with suffix, ASCII case ignored (image files named ".PNG"). */
bool sleapc__ends_with_nocase(const char *s, const char *suffix);

#endif
