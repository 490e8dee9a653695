/* Shared by the Vulkan tests: the vulkan backend's factory with the Khronos
 * validation layer turned on (any message fails the run), or NULL where the
 * backend is not built or finds no Vulkan device (the test then skips); and
 * the one-node graph whose output is its input, which tests of the device's
 * pre- and post-processing run. */
#ifndef SLEAPC_TESTS_VULKAN_TEST_DEVICE_H
#define SLEAPC_TESTS_VULKAN_TEST_DEVICE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "model/graph.h"
#include "test_util.h"

static inline const struct sleapc_backend_factory *vulkan_test_factory(void)
{
    const struct sleapc_backend_factory *f = NULL;
    for (int i = 0; i < sleapc__backend_count(); i++)
        if (strcmp(sleapc__backend_factory(i)->name, "vulkan") == 0)
            f = sleapc__backend_factory(i);
    if (!f || f->score() <= 0) {
        printf("skipped: the vulkan backend is not built or finds no Vulkan device\n");
        return NULL;
    }
    test_setenv("SLEAPC_VULKAN_VALIDATION", "1");
    return f;
}

/* g: its input (in_channels channels) and nothing else, as output `output`. */
static inline void vulkan_test_identity_graph(sleapc_graph *g, int in_channels, const char *output)
{
    memset(g, 0, sizeof *g);
    g->in_channels = in_channels;
    g->max_stride = 1;
    sleapc_node n = {.op = SLEAPC_OP_INPUT};
    strcpy(n.name, "input");
    int idx = -1;
    CHECK_OK(sleapc__graph_add(g, &n, &idx));
    CHECK_OK(sleapc__graph_add_output(g, output, idx, 1));
}

#endif
