/* The version a caller can check: the string, the number and the ABI level
 * of the linked library agree with the headers, and with the version CMake
 * builds and installs (the .so name and sleapc.pc carry it). */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

int main(void)
{
    CHECK(strcmp(sleapc_version(), SLEAPC_VERSION_STRING) == 0);
    CHECK(strcmp(SLEAPC_VERSION_STRING, SLEAPC_PROJECT_VERSION) == 0);
    unsigned major = 99, minor = 99, patch = 99;
    CHECK(sscanf(sleapc_version(), "%u.%u.%u", &major, &minor, &patch) == 3);
    CHECK(major == SLEAPC_VERSION_MAJOR && minor == SLEAPC_VERSION_MINOR &&
          patch == SLEAPC_VERSION_PATCH);
    CHECK(sleapc_version_number() == ((major << 16) | (minor << 8) | patch));
    CHECK(sleapc_version_number() == SLEAPC_VERSION_NUMBER);
    CHECK(sleapc_abi_version() == SLEAPC_ABI_VERSION);
    CHECK(SLEAPC_ABI_VERSION >= 1);
    return test_finish();
}
