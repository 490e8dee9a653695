/* Private to the native backend (native_backend.c runs, native_plan.c plans):
 * its state, and the plan of buffers for one input shape. */
#ifndef SLEAPC_BACKENDS_NATIVE_IMPL_H
#define SLEAPC_BACKENDS_NATIVE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/bf16_policy.h"
#include "backends/native/native_backend.h"
#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"
#include "core/threadpool.h"
#include "model/graph.h"
#include "model/graph_plan.h"

typedef struct native_state {
    const sleapc_graph *g; /* borrowed: the model outlives the backend */
    sleapc_threadpool *tp;
    native_conv **convs;         /* per node, CONV2D only */
    native_convt **convts;       /* per node, CONV_TRANSPOSE2D only */
    native_wattn **wattns;       /* per node, WINDOW_ATTENTION only */
    native_conv_method conv_how; /* 3x3 convs: direct or Winograd, chosen per plan */
    int wino_tile;               /* sleapc_backend_opts.winograd_tile */

    /* The plan, for input shape `planned`. */
    int64_t planned[4];
    sleapc_graph_plan plan; /* shapes, homes (-1: virtual concat), offsets */
    float *arena;           /* every activation, at plan.offset */
    void *scratch;
    size_t scratch_bytes;
    /* Batch items across the threads (native_backend.c, "items"): each
     * thread runs its own items through every node with serial kernels and
     * its own slice of the scratch, items_scratch bytes apart. items: this
     * backend may (float32, several threads); items_on: this plan does, its
     * arena one copy per thread, copy_floats apart, of the plan for
     * items_per items (the planner reuses a value's room once it is read,
     * which threads at different nodes would overwrite for each other); its
     * outputs then gathered whole into outs. */
    bool items, items_on;
    int64_t items_per, copy_floats;
    size_t items_scratch;
    float **outs;

    sleapc_native_node_fn node_hook; /* profiling; NULL: off */
    void *node_hook_ctx;

    /* --precision bf16-emulated (n == 0 otherwise): oneDNN's bf16 path in
     * float32 arithmetic, rounding weights and values where it rounds them
     * (bf16_policy.h). Every concat and resize then has its own buffer, so
     * each value can be rounded where it is written. */
    sleapc_bf16_plan bf16;
    /* --precision bf16 (AVX512-BF16): the convs that round what they read as
     * they stage it, and the values only they read, which therefore need
     * no rounding pass (rounding twice is rounding once). */
    bool *hw16;
    bool *lazy;
    const native_ukernels *hw_uk; /* the bf16 set, or NULL */
    /* --precision bf16 without AMX, 3x3 convs not pinned to the direct
     * method: they run the float32 kernels (Winograd where the plan chooses
     * it) on bf16 operands, weights rounded at create and values rounded
     * where written. The products of bf16 values are exact in float32 and
     * the sums float32, as with VDPBF16PS, whose dot products run at about
     * half the FMA's rate per product on some CPUs (Intel) and lose
     * Winograd's share on all (bench/README.md). */
    bool bf16_f32;
    /* bf16 on the float32 kernels with conv auto: each 3x3 conv's twin on
     * AVX512-BF16's direct kernels (NULL where none), one more candidate of
     * the plan's per-layer choice: where VDPBF16PS runs at twice the FMA's
     * rate (AMD Zen 4 and 5) it beats the float32 direct method on the
     * layers Winograd does not speed up. use16[i]: the plan chose it;
     * pick16: always where there is one (sleapc_backend_opts.pick_bf16_direct). */
    native_conv **convs16;
    bool *use16;
    bool pick16;
    float *stage;                 /* rounded copy of a float32 value a bf16 conv reads */
    int64_t stage_numel;
} native_state;

/* The conv node i runs: the plan's choice between its two forms. */
static inline native_conv *native_active_conv(const native_state *ns, int i)
{
    return ns->use16 && ns->use16[i] ? ns->convs16[i] : ns->convs[i];
}

static inline int64_t native_node_numel(const int64_t *s)
{
    return s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1];
}

/* Plans input shape (B,C,H,W): the arena (shared planner, with virtual
 * concats and identity resizes), scratch, the bf16 staging; frees the old
 * plan first. */
sleapc_status sleapc__native_plan(native_state *ns, const int64_t shape[4]);
/* Frees the plan; ns->planned becomes zero. */
void sleapc__native_plan_free(native_state *ns);

/* A conv reads at most this many buffers: a virtual concat's parts. */
#define MAX_SOURCES (SLEAPC_NODE_MAX_INPUTS * NATIVE_CONV_MAX_PARTS)

#endif
