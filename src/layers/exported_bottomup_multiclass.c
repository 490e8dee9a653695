/* ExportedBottomUpMultiClassLayer (sleap-nn layers/exported.py): the graph
 * found the top-k peaks per node and sampled the class maps at each; per
 * (frame, node) the host matches the valid peaks (peak_mask, and values above
 * the runtime gate) to classes with scipy's assignment on -probability,
 * keeping a match only when it is the peak's best class (group_class_peaks),
 * and puts each kept peak in slot = class.
 * Not copied: sleap-nn's adapter divides the points by input_scale although
 * the graph already did (BottomUpMultiClassONNXWrapper divides before
 * returning), which puts every point at twice its place for a 0.5-scale
 * model; the points here stay as the graph gives them.
 * Scores: as in sleap-nn, the instance score is the NaN-ignoring sum of the
 * node values; sleap-nn gives no tracks here, sleapc gives the class slot's
 * track with the mean class probability over nodes, as its checkpoint path
 * does. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/exported.h"
#include "layers/ops/hungarian.h"

typedef struct ebmc_layer {
    sleapc_layer base;
    sleapc_exported_stage stage;
    int64_t n_nodes, n_classes;
    double gate;
    /* One (frame, node) assignment, reused: k rows at most. */
    int64_t cap;
    double *cost;
    int64_t *slot, *row, *col;
    float *probs;  /* (B, C, N) matched class probability, NaN = none */
    size_t probs_cap;
    sleapc_hungarian_ws hws;
} ebmc_layer;

static sleapc_status grow(ebmc_layer *e, int64_t k, int64_t b)
{
    if (k > e->cap) {
        sleapc__free(e->cost);
        sleapc__free(e->slot);
        sleapc__free(e->row);
        sleapc__free(e->col);
        e->cost = sleapc__malloc((size_t)(k * e->n_classes) * sizeof *e->cost);
        e->slot = sleapc__malloc((size_t)k * sizeof *e->slot);
        e->row = sleapc__malloc((size_t)k * sizeof *e->row);
        e->col = sleapc__malloc((size_t)k * sizeof *e->col);
        e->cap = e->cost && e->slot && e->row && e->col ? k : 0;
        if (!e->cap)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "exported bottom-up: out of memory");
    }
    size_t need = (size_t)(b * e->n_classes * e->n_nodes) * sizeof(float);
    if (need > e->probs_cap) {
        sleapc__free(e->probs);
        e->probs = sleapc__malloc(need);
        e->probs_cap = e->probs ? need : 0;
        if (!e->probs)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "exported bottom-up: out of memory");
    }
    return SLEAPC_OK;
}

/* group_class_peaks for one frame and node: slots [0, k) of that node. */
static sleapc_status assign_node(ebmc_layer *e, int64_t f, int64_t n, int64_t k, const float *pk,
                                 const float *pv, const uint8_t *pm, const float *cp,
                                 sleapc_layer_outputs *out)
{
    const int64_t C = e->n_classes, N = e->n_nodes;
    const float gate = (float)e->gate;
    int64_t rows = 0;
    for (int64_t j = 0; j < k; j++) {
        if (!pm[j] || !(pv[j] > gate))
            continue;
        for (int64_t q = 0; q < C; q++)
            e->cost[rows * C + q] = (double)(-cp[j * C + q]);
        e->slot[rows++] = j;
    }
    if (rows == 0)
        return SLEAPC_OK;
    sleapc_status st = sleapc__hungarian_solve_ws(e->cost, rows, C, &e->hws, e->row, e->col);
    if (st)
        return sleapc__wrap(st, "exported bottom-up: frame %lld, node %lld", (long long)f,
                            (long long)n);
    const int64_t pairs = rows < C ? rows : C;
    for (int64_t i = 0; i < pairs; i++) {
        const int64_t j = e->slot[e->row[i]], q = e->col[i];
        const float *p = cp + j * C;
        float best = p[0];
        for (int64_t r = 1; r < C; r++)
            best = p[r] > best ? p[r] : best;
        if (p[q] != best)
            continue; /* matched, but not to the peak's best class */
        const int64_t at = (f * C + q) * N + n;
        out->keypoints[2 * at] = pk[2 * j];
        out->keypoints[2 * at + 1] = pk[2 * j + 1];
        out->peak_values[at] = pv[j];
        e->probs[at] = p[q];
    }
    return SLEAPC_OK;
}

static sleapc_status ebmc_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                              int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    ebmc_layer *e = l->impl;
    const sleapc_exported_stage *s = &e->stage;
    const int64_t N = e->n_nodes, C = e->n_classes;
    const sleapc_tensor *peaks, *vals, *mask, *cls;
    int64_t k = 0;
    sleapc_status st = sleapc__exported_stage_peaks(&e->stage, frames, b, c, h, w, N, &peaks,
                                                    &vals, &mask, &k);
    if (!st)
        st = sleapc__exported_stage_output(s, "class_probs", SLEAPC_DTYPE_F32, 4,
                                           (int64_t[]){b, N, k, C}, &cls);
    if (!st)
        st = grow(e, k > 0 ? k : 1, b);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, C, N, C);
    if (st)
        return st;
    for (int64_t i = 0; i < b * C * N; i++)
        e->probs[i] = NAN;
    for (int64_t f = 0; f < b && !st; f++)
        for (int64_t n = 0; n < N && !st; n++) {
            const int64_t at = f * N + n;
            st = assign_node(e, f, n, k, (const float *)peaks->data + at * k * 2,
                             (const float *)vals->data + at * k,
                             (const uint8_t *)mask->data + at * k,
                             (const float *)cls->data + at * k * C, out);
        }
    if (st)
        return st;
    out->has_classes = true;
    for (int64_t f = 0; f < b; f++) {
        out->eff_scale[f] = 1.0f;
        for (int64_t q = 0; q < C; q++) {
            const float *p = e->probs + (f * C + q) * N;
            float sum = 0.0f;
            int64_t n_found = 0;
            for (int64_t n = 0; n < N; n++)
                if (!isnan(p[n])) {
                    sum += p[n];
                    n_found++;
                }
            out->class_inds[f * C + q] = (int32_t)q;
            out->tracking_scores[f * C + q] = n_found ? sum / (float)n_found : NAN;
        }
    }
    return SLEAPC_OK;
}

static void ebmc_destroy(sleapc_layer *l)
{
    ebmc_layer *e = l->impl;
    sleapc__exported_stage_free(&e->stage);
    sleapc__free(e->cost);
    sleapc__free(e->slot);
    sleapc__free(e->row);
    sleapc__free(e->col);
    sleapc__free(e->probs);
    sleapc__hungarian_ws_free(&e->hws);
    sleapc__free(e);
}

static int ebmc_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const ebmc_layer *e = l->impl;
    out[0] = sleapc__exported_stage_info(&e->stage);
    return 1;
}

static const struct sleapc_layer_ops ebmc_ops = {
    .name = "ExportedBottomUpMultiClassLayer", .run = ebmc_run, .destroy = ebmc_destroy,
    .stages = ebmc_stages};

sleapc_status sleapc__exported_bottomup_multiclass_layer_create(const sleapc_model *m,
                                                                const sleapc_predictor_opts *o,
                                                                sleapc_layer **out)
{
    ebmc_layer *e = sleapc__calloc(1, sizeof *e);
    if (!e)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    e->base.ops = &ebmc_ops;
    e->base.impl = e;
    e->n_nodes = sleapc__model_n_nodes(m);
    e->n_classes = m->cfg.n_classes;
    e->gate = sleapc__exported_peak_gate(m);
    static const char *const outputs[] = {"peaks", "peak_vals", "peak_mask", "class_probs", NULL};
    sleapc_status st = SLEAPC_OK;
    if (e->n_classes < 1)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: multi-class export lists no classes", m->dir);
    if (!st)
        st = sleapc__exported_stage_init(&e->stage, m, o, outputs);
    if (st) {
        ebmc_destroy(&e->base);
        return st;
    }
    *out = &e->base;
    return SLEAPC_OK;
}
