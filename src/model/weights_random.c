/* Random weights by asking the builder: build the network with the weights
 * so far; it fails on the first missing tensor with a message naming it and
 * its expected shape; add that tensor and build again. The builder stays the
 * only place that knows the network's tensors. */
#include "model/weights_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/build.h"

#define MAX_TENSORS 4096

/* xorshift64*: a small generator whose output does not depend on the C
 * library. Returns a float in [-1, 1). */
static float next_unit(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    uint64_t r = x * 0x2545F4914F6CDD1Dull;
    return (float)(r >> 40) / 8388608.0f - 1.0f;
}

/* From the builder's message `... missing tensor "NAME" (config expects
 * [d0,d1,...])` (build_unet.c, bind): the name and shape. */
static bool parse_request(const char *msg, char *name, size_t name_cap, int *ndim,
                          int64_t *shape)
{
    const char *p = strstr(msg, "missing tensor \"");
    if (!p)
        return false;
    p += strlen("missing tensor \"");
    const char *q = strchr(p, '"');
    if (!q || (size_t)(q - p) >= name_cap || q == p)
        return false;
    memcpy(name, p, (size_t)(q - p));
    name[q - p] = '\0';
    p = strstr(q, "(config expects [");
    if (!p)
        return false;
    p += strlen("(config expects [");
    *ndim = 0;
    while (*p && *p != ']') {
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 1 || v > (1LL << 24) || *ndim >= SLEAPC_WEIGHT_MAX_DIMS)
            return false;
        shape[(*ndim)++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    return *p == ']';
}

static sleapc_status add_random(sleapc_weights *w, const char *name, int ndim,
                                const int64_t *shape, uint64_t *state)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (n > (INT64_C(1) << 32) / shape[i])
            return sleapc__fail(SLEAPC_ERR_FORMAT, "random weights: tensor \"%s\" is too large",
                                name);
        n *= shape[i];
    }
    float *data = sleapc__aligned_alloc((size_t)n * sizeof *data);
    if (!data)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "random weights: tensor \"%s\": out of memory", name);
    float scale = ndim >= 2 ? sqrtf(6.0f / (float)(n / shape[0])) : 0.05f;
    for (int64_t i = 0; i < n; i++)
        data[i] = scale * next_unit(state);
    return sleapc__weights_add(w, name, ndim, shape, data);
}

sleapc_status sleapc__weights_random_for_config(const sleapc_model_config *cfg, uint64_t seed,
                                                sleapc_weights *out)
{
    uint64_t state = seed ? seed : 0x9E3779B97F4A7C15ull;
    sleapc_graph g;
    char msg[512], name[256];
    sleapc_status st = SLEAPC_OK;
    for (int k = 0; k <= MAX_TENSORS; k++) {
        st = sleapc__build_unet(cfg, out, "random weights", false, false, &g);
        if (st == SLEAPC_OK) {
            sleapc__graph_clear(&g);
            return SLEAPC_OK;
        }
        snprintf(msg, sizeof msg, "%s", sleapc__last_error());
        int ndim = 0;
        int64_t shape[SLEAPC_WEIGHT_MAX_DIMS];
        if (st != SLEAPC_ERR_FORMAT || !parse_request(msg, name, sizeof name, &ndim, shape))
            break;  /* the builder refuses the config itself: keep its message */
        st = add_random(out, name, ndim, shape, &state);
        if (st)
            break;
    }
    if (st == SLEAPC_OK)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "random weights: more than %d tensors", MAX_TENSORS);
    sleapc__weights_clear(out);
    return st;
}
