/* ExportedTopDownMultiClassLayer (sleap-nn layers/exported.py) over the
 * multi_class_topdown_combined graph: per frame, the valid instances' class
 * vectors go through a softmax, scipy's assignment gives each a class, and
 * the instances are moved into slot = class.
 * Quirk kept: the graph's class_logits already are softmax probabilities, so
 * this is a second softmax (inference.md §7.8); it flattens the values but
 * keeps their order, and the assignment is what sleap-nn computes.
 * Differences: sleap-nn's adapter gives neither tracks nor tracking scores
 * (its Outputs carry no class names); here each instance gets the track of
 * its class slot and, as tracking score, its probability after that softmax. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/exported.h"
#include "layers/ops/identity.h"

typedef struct tdmc_layer {
    sleapc_layer base;
    sleapc_exported_stage stage;
    int64_t n_nodes, n_classes;
    /* Per-frame scratch, grown to the slot count. */
    float *probs;       /* (I, C) softmax of the valid rows */
    int64_t *rows;      /* (I) instance of each row */
    int64_t *classes;   /* (I) */
    float *class_probs; /* (I) */
    int64_t cap;
    sleapc_identity_ws ws; /* assignment scratch, kept across frames */
    bool warned;        /* about detections without keypoints */
} tdmc_layer;

static sleapc_status grow(tdmc_layer *t, int64_t n)
{
    if (n <= t->cap)
        return SLEAPC_OK;
    sleapc__free(t->probs);
    sleapc__free(t->rows);
    sleapc__free(t->classes);
    sleapc__free(t->class_probs);
    t->probs = sleapc__malloc((size_t)(n * t->n_classes) * sizeof *t->probs);
    t->rows = sleapc__malloc((size_t)n * sizeof *t->rows);
    t->classes = sleapc__malloc((size_t)n * sizeof *t->classes);
    t->class_probs = sleapc__malloc((size_t)n * sizeof *t->class_probs);
    t->cap = t->probs && t->rows && t->classes && t->class_probs ? n : 0;
    return t->cap ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "exported top-down: out of memory");
}

/* torch.softmax over one row, in float32 (max subtracted first). */
static void softmax_row(const float *x, int64_t n, float *y)
{
    float m = x[0], sum = 0.0f;
    for (int64_t k = 1; k < n; k++)
        m = x[k] > m ? x[k] : m;
    for (int64_t k = 0; k < n; k++) {
        y[k] = expf(x[k] - m);
        sum += y[k];
    }
    for (int64_t k = 0; k < n; k++)
        y[k] /= sum;
}

static sleapc_status tdmc_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                              int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    tdmc_layer *t = l->impl;
    const int64_t N = t->n_nodes, C = t->n_classes;
    const sleapc_exported_stage *s = &t->stage;
    const sleapc_tensor *cen, *cvals, *peaks, *vals, *logits, *valid;
    sleapc_status st = sleapc__exported_stage_run(&t->stage, frames, b, c, h, w);
    if (!st)
        st = sleapc__exported_stage_output(s, "centroids", SLEAPC_DTYPE_F32, 3,
                                           (int64_t[]){b, -1, 2}, &cen);
    const int64_t I = st ? 0 : cen->shape[1];
    if (!st)
        st = sleapc__exported_stage_output(s, "centroid_vals", SLEAPC_DTYPE_F32, 2,
                                           (int64_t[]){b, I}, &cvals);
    if (!st)
        st = sleapc__exported_stage_output(s, "peaks", SLEAPC_DTYPE_F32, 4,
                                           (int64_t[]){b, I, N, 2}, &peaks);
    if (!st)
        st = sleapc__exported_stage_output(s, "peak_vals", SLEAPC_DTYPE_F32, 3,
                                           (int64_t[]){b, I, N}, &vals);
    if (!st)
        st = sleapc__exported_stage_output(s, "class_logits", SLEAPC_DTYPE_F32, 3,
                                           (int64_t[]){b, I, C}, &logits);
    if (!st)
        st = sleapc__exported_stage_output(s, "instance_valid", SLEAPC_DTYPE_U8, 2,
                                           (int64_t[]){b, I}, &valid);
    if (!st)
        st = grow(t, I > 0 ? I : 1);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, C, N, C);
    if (st)
        return st;
    out->has_centroids = true;
    out->has_classes = true;
    const uint8_t *v = valid->data;
    for (int64_t f = 0; f < b && !st; f++) {
        out->eff_scale[f] = 1.0f;
        int64_t n = 0;
        for (int64_t i = 0; i < I; i++)
            if (v[f * I + i]) {
                softmax_row((const float *)logits->data + (f * I + i) * C, C, t->probs + n * C);
                t->rows[n++] = i;
            }
        st = sleapc__identity_classes_from_vectors(t->probs, n, C, &t->ws, t->classes,
                                                   t->class_probs);
        for (int64_t r = 0; r < n && !st; r++) {
            const int64_t k = t->classes[r], src = f * I + t->rows[r], dst = f * C + k;
            if (k < 0 || k >= C)
                continue;
            memcpy(out->keypoints + dst * N * 2, (const float *)peaks->data + src * N * 2,
                   (size_t)N * 2 * sizeof(float));
            memcpy(out->peak_values + dst * N, (const float *)vals->data + src * N,
                   (size_t)N * sizeof(float));
            out->centroids[2 * dst] = ((const float *)cen->data)[2 * src];
            out->centroids[2 * dst + 1] = ((const float *)cen->data)[2 * src + 1];
            out->centroid_values[dst] = ((const float *)cvals->data)[src];
            out->class_inds[dst] = (int32_t)k;
            out->tracking_scores[dst] = t->class_probs[r];
            const float *kp = out->keypoints + dst * N * 2;
            bool none = true;
            for (int64_t q = 0; q < 2 * N && none; q++)
                none = isnan(kp[q]);
            if (none && !t->warned) {
                /* Upstream's combined multi-class wrapper gives NaN peaks for
                 * every crop (onnxruntime and torch alike on the reference
                 * export); say so rather than write empty frames silently. */
                sleapc__log(SLEAPC_LOG_WARN,
                            "%s: the exported graph found instances but returned no keypoints "
                            "for them; they are left out (re-export the models separately, or "
                            "run the checkpoints)",
                            t->stage.model->dir);
                t->warned = true;
            }
        }
    }
    return st;
}

static void tdmc_destroy(sleapc_layer *l)
{
    tdmc_layer *t = l->impl;
    sleapc__exported_stage_free(&t->stage);
    sleapc__free(t->probs);
    sleapc__free(t->rows);
    sleapc__free(t->classes);
    sleapc__free(t->class_probs);
    sleapc__identity_ws_free(&t->ws);
    sleapc__free(t);
}

static int tdmc_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const tdmc_layer *t = l->impl;
    out[0] = sleapc__exported_stage_info(&t->stage);
    return 1;
}

static const struct sleapc_layer_ops tdmc_ops = {
    .name = "ExportedTopDownMultiClassLayer", .run = tdmc_run, .destroy = tdmc_destroy,
    .stages = tdmc_stages};

sleapc_status sleapc__exported_topdown_multiclass_layer_create(const sleapc_model *m,
                                                               const sleapc_predictor_opts *o,
                                                               sleapc_layer **out)
{
    tdmc_layer *t = sleapc__calloc(1, sizeof *t);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    t->base.ops = &tdmc_ops;
    t->base.impl = t;
    t->n_nodes = sleapc__model_n_nodes(m);
    t->n_classes = m->cfg.n_classes;
    static const char *const outputs[] = {"centroids", "centroid_vals", "peaks", "peak_vals",
                                          "class_logits", "instance_valid", NULL};
    sleapc_status st = SLEAPC_OK;
    if (t->n_classes < 1)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: multi-class export lists no classes", m->dir);
    if (!st)
        st = sleapc__exported_stage_init(&t->stage, m, o, outputs);
    if (st) {
        tdmc_destroy(&t->base);
        return st;
    }
    *out = &t->base;
    return SLEAPC_OK;
}
