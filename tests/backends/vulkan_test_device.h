/* Shared by the Vulkan tests: the vulkan backend's factory with the Khronos
 * validation layer turned on (any message fails the run), or NULL where the
 * backend is not built or finds no Vulkan device (the test then skips). */
#ifndef SLEAPC_TESTS_VULKAN_TEST_DEVICE_H
#define SLEAPC_TESTS_VULKAN_TEST_DEVICE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

static const struct sleapc_backend_factory *vulkan_test_factory(void)
{
    const struct sleapc_backend_factory *f = NULL;
    for (int i = 0; i < sleapc__backend_count(); i++)
        if (strcmp(sleapc__backend_factory(i)->name, "vulkan") == 0)
            f = sleapc__backend_factory(i);
    if (!f || f->score() <= 0) {
        printf("skipped: the vulkan backend is not built or finds no Vulkan device\n");
        return NULL;
    }
    setenv("SLEAPC_VULKAN_VALIDATION", "1", 1);
    return f;
}

#endif
