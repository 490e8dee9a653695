#include "layers/centroid_given.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/layer.h"

static int node_index(const sleapc_model *m, const char *name)
{
    for (int k = 0; k < m->cfg.n_part_names; k++)
        if (!strcmp(m->cfg.part_names[k], name))
            return k;
    return -1;
}

/* sleap-nn's _resolve_centroid_method on the centered-instance head: an
 * explicit --anchor_part wins and keeps only the config's fallback. */
static sleapc_status resolve_rule(sleapc_centroid_given *g, const sleapc_model *ci,
                                  const sleapc_predictor_opts *o)
{
    const sleapc_model_config *cfg = &ci->cfg;
    const char *part = o->anchor_part ? o->anchor_part : cfg->anchor_part;
    int anchor = part ? node_index(ci, part) : -1;
    if (part && anchor < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: anchor_part '%s' is not a node of the "
                            "skeleton", ci->dir, part);
    return sleapc__centroid_rule_resolve(anchor, o->anchor_part ? NULL : cfg->centroid_method,
                                         cfg->centroid_fallback, ci->dir, &g->rule);
}

sleapc_status sleapc__centroid_given_init(sleapc_centroid_given *g, const sleapc_model *ci,
                                          const sleapc_predictor_opts *o)
{
    memset(g, 0, sizeof *g);
    g->convention = sleapc__convention_of(ci);
    /* _build_centroid_layer_gt_only: the model's size matcher and channels,
     * scale 1 (stage 2 applies the model's own input scale to the crops). */
    g->pp = sleapc__layer_preprocess_opts(ci, o, true);
    g->pp.scale = 1.0;
    g->max_instances = o->max_instances;
    return resolve_rule(g, ci, o);
}

void sleapc__centroid_given_free(sleapc_centroid_given *g)
{
    sleapc__free(g->xy);
    memset(g, 0, sizeof *g);
}

sleapc_status sleapc__centroid_given_set(sleapc_centroid_given *g, const float *points, int64_t b,
                                         int64_t slots, int64_t n_nodes)
{
    size_t need = (size_t)(b * slots * 2);
    if (need > g->cap) {
        sleapc__free(g->xy);
        g->xy = sleapc__malloc(need * sizeof(float));
        g->cap = g->xy ? need : 0;
        if (!g->xy)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "given centroids: out of memory");
    }
    for (int64_t k = 0; k < b * slots; k++)
        sleapc__instance_centroid(&g->rule, points + k * n_nodes * 2, n_nodes, g->xy + 2 * k);
    g->b = b;
    g->slots = slots;
    return SLEAPC_OK;
}

sleapc_status sleapc__centroid_given_plan(sleapc_centroid_given *g, int64_t c, int64_t h,
                                          int64_t w)
{
    if (g->have_plan && g->plan.src_c == c && g->plan.src_h == h && g->plan.src_w == w)
        return SLEAPC_OK;
    g->have_plan = false;
    sleapc_status st = g->convention->plan_make(&g->pp, c, h, w, &g->plan);
    g->have_plan = !st;
    return st;
}

sleapc_status sleapc__centroid_given_run(sleapc_centroid_given *g, int64_t b, int64_t c,
                                         int64_t h, int64_t w, int64_t n_nodes,
                                         int64_t n_classes, sleapc_layer_outputs *out)
{
    if (g->b != b)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "top-down on given centroids: the batch of %lld frames came without "
                            "its instances", (long long)b);
    g->b = 0;
    sleapc_status st = sleapc__centroid_given_plan(g, c, h, w);
    /* _predict_from_gt: max_instances pads or truncates the given slots. */
    int64_t slots = g->max_instances > 0 ? g->max_instances : (g->slots > 0 ? g->slots : 1);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, slots, n_nodes, n_classes);
    if (st)
        return st;
    out->has_centroids = true;
    int64_t kept = g->slots < slots ? g->slots : slots;
    for (int64_t s = 0; s < b; s++) {
        for (int64_t i = 0; i < kept; i++) {
            const float *xy = g->xy + (s * g->slots + i) * 2;
            if (isnan(xy[0]) || isnan(xy[1]))
                continue;
            memcpy(out->centroids + (s * slots + i) * 2, xy, 2 * sizeof(float));
            out->centroid_values[s * slots + i] = 1.0f;
        }
        out->eff_scale[s] = (float)g->plan.eff_scale;
    }
    return SLEAPC_OK;
}
