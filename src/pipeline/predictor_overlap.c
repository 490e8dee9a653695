/* The predictor's overlap (predictor_impl.h): batch k + 1 is preprocessed
 * and submitted after batch k is collected (so that what needs the device,
 * the bottom-up PAF scores, ran first) and before k's post-processing, so
 * the device runs k + 1 while the host finds k's instances. One batch is
 * in flight at a time; the backend's two plans take turns, so k's outputs
 * stay readable while k + 1 runs. */
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "core/error.h"
#include "pipeline/predictor_impl.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

bool sleapc__predictor_can_overlap(sleapc_predictor *p)
{
    return sleapc__layer_can_overlap(p->layer);
}

bool sleapc__predictor_can_begin(sleapc_predictor *p, int64_t n, int64_t h, int64_t w, int64_t c)
{
    if (n < 1 || n > p->opts.batch_size || p->n_begun > 1)
        return false;
    /* One plan size at a time: a new size replans, which would free the
     * outputs the host still reads. */
    if (p->n_begun == 1 && (p->begun_n[0] != n || p->begun_h != h || p->begun_w != w ||
                            p->begun_c != c))
        return false;
    return sleapc__layer_can_begin(p->layer, c, h, w);
}

void sleapc__predictor_drop(sleapc_predictor *p)
{
    if (p->n_begun > 0)
        sleapc__layer_drop(p->layer);
    p->n_begun = 0;
    p->oldest_collected = false;
}

/* Timing and failure, as predictor_run keeps them. */
static sleapc_status account(sleapc_predictor *p, sleapc_status st, double t0, int64_t net0)
{
    p->stats.network_s += (double)(sleapc__backend_forward_ns() - net0) * 1e-9;
    p->stats.run_s += now_s() - t0;
    if (!st)
        return SLEAPC_OK;
    sleapc__predictor_drop(p);
    return sleapc__wrap(st, "predict (%s)", p->layer->ops->name);
}

sleapc_status sleapc__predictor_begin(sleapc_predictor *p, const uint8_t *frames, int64_t n,
                                      int64_t h, int64_t w, int64_t c)
{
    if (!sleapc__predictor_can_begin(p, n, h, w, c))
        return sleapc__fail(SLEAPC_ERR_STATE, "predict: a batch of %lld frames cannot be begun",
                            (long long)n);
    double t0 = now_s();
    int64_t net0 = sleapc__backend_forward_ns();
    sleapc_status st = SLEAPC_OK;
    if (p->n_begun == 1 && !p->oldest_collected) {
        st = sleapc__layer_collect(p->layer, p->begun_n[0]);
        p->oldest_collected = !st;
    }
    if (!st)
        st = sleapc__layer_begin(p->layer, frames, n, c, h, w);
    if (!st) {
        p->overlapped += p->n_begun;
        p->begun_n[p->n_begun++] = n;
        p->begun_h = h;
        p->begun_w = w;
        p->begun_c = c;
    }
    return account(p, st, t0, net0);
}

sleapc_status sleapc__predictor_finish(sleapc_predictor *p)
{
    if (p->n_begun == 0)
        return sleapc__fail(SLEAPC_ERR_STATE, "predict: no batch begun");
    double t0 = now_s();
    int64_t net0 = sleapc__backend_forward_ns();
    int64_t n = p->begun_n[0];
    sleapc_status st = SLEAPC_OK;
    if (!p->oldest_collected)
        st = sleapc__layer_collect(p->layer, n);
    /* Collected: the next begun batch (if any) is now the oldest, in flight. */
    p->begun_n[0] = p->begun_n[1];
    p->n_begun--;
    p->oldest_collected = false;
    p->results.n_frames = 0;
    p->results.n_insts = 0;
    p->results.n_boxes = 0;
    if (!st)
        st = sleapc__layer_finish(p->layer, n, &p->outputs);
    if (!st)
        st = sleapc__predictor_pack(p, &p->outputs);
    if (!st)
        p->stats.frames += n;
    return account(p, st, t0, net0);
}

int sleapc__predictor_n_begun(const sleapc_predictor *p)
{
    return p->n_begun;
}
