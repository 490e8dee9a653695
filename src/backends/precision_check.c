#include "backends/precision_check.h"

#include <stdio.h>

#include "backends/bf16_policy.h"
#include "core/error.h"

static void drop(sleapc_backend *be, sleapc_tensor_map *out)
{
    sleapc__tensor_map_clear(out);
    sleapc__backend_destroy(be);
}

/* The same backend at the same precision with the nodes `keep` in float32,
 * run on x; its outputs in *out. */
static sleapc_status retry(const sleapc_precision_run *r, unsigned keep, const sleapc_tensor *x,
                           sleapc_backend **be, sleapc_tensor_map *out)
{
    sleapc_backend_opts bo = {.n_threads = r->n_threads, .precision = *r->precision,
                              .bf16_keep = keep, .conv = r->conv};
    sleapc_status st = sleapc__backend_create(sleapc__backend_name(*r->be), r->g, &bo, be);
    if (!st)
        st = sleapc__backend_forward(*be, x, out);
    return st;
}

/* fp16 beyond its budgets: the same backend on the same device in float32
 * runs from this batch on; the reference's outputs serve this batch when it
 * cannot be made. Takes ref and its outputs. */
static sleapc_status fp16_fall_back(const sleapc_precision_run *r, const sleapc_tensor *x,
                                    sleapc_backend *ref, sleapc_tensor_map *ref_out)
{
    char name[32], device[32];
    snprintf(name, sizeof name, "%s", sleapc__backend_name(*r->be));
    snprintf(device, sizeof device, "%s", sleapc__backend_device(*r->be));
    drop(*r->be, r->out);
    *r->be = NULL;
    *r->precision = SLEAPC_PRECISION_FP32;
    sleapc_backend_opts bo = {.n_threads = r->n_threads, .precision = SLEAPC_PRECISION_FP32,
                              .device = device, .conv = r->conv};
    sleapc_backend *be = NULL;
    sleapc_status st = sleapc__backend_create(name, r->g, &bo, &be);
    if (!st) {
        st = sleapc__backend_forward(be, x, r->out);
        if (st)
            drop(be, r->out);
    }
    if (st) { /* the CPU's float32 then */
        *r->be = ref;
        *r->out = *ref_out;
        return SLEAPC_OK;
    }
    *r->be = be;
    drop(ref, ref_out);
    return SLEAPC_OK;
}

sleapc_status sleapc__precision_check(const sleapc_precision_run *r, const sleapc_tensor *x,
                                      const sleapc_precision_judge *j)
{
    sleapc_backend_opts bo = {.n_threads = 0, .precision = SLEAPC_PRECISION_FP32,
                              .conv = SLEAPC_CONV_DIRECT};
    sleapc_backend *ref = NULL;
    sleapc_tensor_map want = {0};
    sleapc_status st = sleapc__backend_create("native", r->g, &bo, &ref);
    if (!st)
        st = sleapc__backend_forward(ref, x, &want);
    if (st) {
        drop(ref, &want);
        return sleapc__wrap(st, "float32 check");
    }
    if (j->judge(j->user, 0, r->out, &want)) {
        drop(ref, &want);
        return SLEAPC_OK;
    }
    if (*r->precision == SLEAPC_PRECISION_FP16) {
        j->falls_back(j->user);
        return fp16_fall_back(r, x, ref, &want);
    }
    unsigned keep = sleapc__bf16_keep_default(), wider = keep | SLEAPC_BF16_KEEP_DECODER;
    if (wider != keep) {
        sleapc_backend *be2 = NULL;
        sleapc_tensor_map out2 = {0};
        st = retry(r, wider, x, &be2, &out2);
        if (!st && j->judge(j->user, 1, &out2, &want)) {
            drop(*r->be, r->out);
            *r->be = be2;
            *r->out = out2;
            drop(ref, &want);
            return SLEAPC_OK;
        }
        drop(be2, &out2);
        if (st) {
            drop(ref, &want);
            return sleapc__wrap(st, "check with its decoder in float32");
        }
    }
    /* Beyond a budget the model runs in float32 from this batch on: the
     * reference and its outputs replace the reduced ones. */
    j->falls_back(j->user);
    drop(*r->be, r->out);
    *r->be = ref;
    *r->out = want;
    *r->precision = SLEAPC_PRECISION_FP32;
    return SLEAPC_OK;
}
