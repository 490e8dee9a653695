/* Cutting a kernel run into output-channel blocks and thread-pool tasks. */
#include "backends/native/native_ukernel.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

void sleapc__native_split_plan(int64_t b, int64_t n_units, int n_blocks, int n_threads,
                               int per_thread, native_split *out)
{
    if (b < 1)
        b = 1;
    if (n_units < 1)
        n_units = 1;
    if (n_blocks < 1)
        n_blocks = 1;
    int64_t want = n_threads <= 1 ? 1 : (int64_t)per_thread * n_threads;

    int64_t per_b = ceil_div(want, b);
    int64_t n_ut = n_units < per_b ? n_units : per_b;
    out->units_per_task = ceil_div(n_units, n_ut);
    out->n_unit_tasks = ceil_div(n_units, out->units_per_task);

    /* Too few rows (small maps): split the output channels as well. */
    int64_t have = b * out->n_unit_tasks;
    int64_t n_groups = have >= want ? 1 : ceil_div(want, have);
    if (n_groups > n_blocks)
        n_groups = n_blocks;
    out->blocks_per_group = (int)ceil_div(n_blocks, n_groups);
    out->n_groups = (int)ceil_div(n_blocks, out->blocks_per_group);
    out->n_tasks = have * out->n_groups;
}

void sleapc__native_blocks_plan(int c_out, int cb, native_blocks *out)
{
    out->n = (c_out + cb - 1) / cb;
    out->size = c_out / out->n;
    out->n_big = c_out - out->n * out->size;
}
