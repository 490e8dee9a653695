/* head_configs.bbox_centernet / bbox_ssd (sleap-nn 0.3.5
 * config/model_config.py BBoxCenterNetConfig, SSDHeadConfig; model.py
 * get_head). Only what inference reads is kept; the training knobs (sigma,
 * loss weights, IoU matching) are left unread. */
#include "io/config/config_yaml_bbox.h"

#include <stdint.h>
#include <string.h>

#include "core/alloc.h"

/* A box category list is a handful of names; the cap bounds a hostile file. */
#define CATEGORIES_MAX 1024

static sleapc_status nomem(const sleapc_yaml_tree *t)
{
    return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_NOMEM, "out of memory");
}

/* parent.rel as an int >= min (absent or null: *out unchanged); pow2: a
 * power of two too. */
static sleapc_status read_int(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                              int min, bool pow2, int *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (!st)
        st = sleapc__yaml_int(t, &r, NULL, *out, out);
    if (st || sleapc__yaml_is_null(&r))
        return st;
    if (*out < min)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be at least %d, got %d", min,
                                 *out);
    if (pow2 && (*out & (*out - 1)) != 0)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "must be a power of two, got %d",
                                 *out);
    return SLEAPC_OK;
}

/* parent.rel as a list of positive numbers into v (room for
 * SLEAPC_BBOX_LIST_MAX); absent or null keep *n and v. want > 0: exactly
 * that many. */
static sleapc_status read_numbers(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                  const char *rel, int want, double *v, int *n)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (st || sleapc__yaml_is_null(&r))
        return st;
    int len = sleapc__yaml_seq_len(&r);
    if (!sleapc__yaml_is_seq(&r) || len < 1)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "expected a list of numbers");
    if (len > SLEAPC_BBOX_LIST_MAX)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_UNSUPPORTED, "%d entries (at most %d)", len,
                                 SLEAPC_BBOX_LIST_MAX);
    if (want > 0 && len != want)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "%d entries, expected %d", len, want);
    for (int i = 0; i < len; i++) {
        sleapc_yaml_ref item = sleapc__yaml_seq_item(t, &r, i);
        st = sleapc__yaml_double(t, &item, NULL, 0.0, &v[i]);
        if (st)
            return st;
        if (!(v[i] > 0.0))
            return sleapc__yaml_fail(t, &item, SLEAPC_ERR_FORMAT, "must be positive, got %g",
                                     v[i]);
    }
    *n = len;
    return SLEAPC_OK;
}

/* parent.categories; null -> ["object"] (model_config.py DEFAULT_BBOX_CATEGORY). */
static sleapc_status read_categories(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                     sleapc_bbox_config *b)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, "categories", &r);
    if (st)
        return st;
    int n = sleapc__yaml_is_null(&r) ? 1 : sleapc__yaml_seq_len(&r);
    if (!sleapc__yaml_is_null(&r) && (!sleapc__yaml_is_seq(&r) || n < 1 || n > CATEGORIES_MAX))
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "expected a list of 1 to %d names",
                                 CATEGORIES_MAX);
    b->categories = sleapc__calloc((size_t)n, sizeof *b->categories);
    if (!b->categories)
        return nomem(t);
    b->n_categories = n;
    for (int i = 0; i < n; i++) {
        const char *name = "object";
        if (!sleapc__yaml_is_null(&r)) {
            sleapc_yaml_ref item = sleapc__yaml_seq_item(t, &r, i);
            st = sleapc__yaml_str(t, &item, NULL, &name);
            if (!st && !name)
                st = sleapc__yaml_fail(t, &item, SLEAPC_ERR_FORMAT, "expected a name");
            if (st)
                return st;
        }
        b->categories[i] = sleapc__strdup(name);
        if (!b->categories[i])
            return nomem(t);
    }
    return SLEAPC_OK;
}

/* center, size and offset are all required; the three strides must agree
 * (BBoxCenterHeadConfig: "Must equal the size and offset strides"). */
static sleapc_status read_centernet(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                    sleapc_bbox_config *b)
{
    static const char *const leaves[3] = {"center", "size", "offset"};
    sleapc_yaml_ref leaf[3];
    int stride[3] = {4, 4, 4};
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; !st && i < 3; i++) {
        st = sleapc__yaml_require(t, head, leaves[i], &leaf[i]);
        if (!st)
            st = read_int(t, &leaf[i], "output_stride", 1, true, &stride[i]);
    }
    if (!st)
        st = read_categories(t, &leaf[0], b);
    for (int i = 1; !st && i < 3; i++) {
        if (stride[i] != stride[0]) {
            sleapc_yaml_ref r;
            sleapc__yaml_get(t, &leaf[i], "output_stride", &r);
            return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT,
                                     "%d differs from center.output_stride %d", stride[i],
                                     stride[0]);
        }
    }
    b->stride = stride[0];
    return st;
}

static sleapc_status read_ssd(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                              sleapc_bbox_config *b)
{
    sleapc_yaml_ref ssd, sizes;
    int n_var = 4;
    b->stride = 8;
    sleapc_status st = sleapc__yaml_require(t, head, "ssd", &ssd);
    if (!st)
        st = read_categories(t, &ssd, b);
    if (!st)
        st = read_int(t, &ssd, "output_stride", 1, true, &b->stride);
    if (!st)
        st = read_int(t, &ssd, "num_levels", 1, false, &b->ssd_levels);
    if (!st && b->ssd_levels > SLEAPC_BBOX_LIST_MAX)
        return sleapc__yaml_fail(t, &ssd, SLEAPC_ERR_UNSUPPORTED, "num_levels %d (at most %d)",
                                 b->ssd_levels, SLEAPC_BBOX_LIST_MAX);
    /* Null until training sizes them from the boxes; the anchors (and so the
     * decoding) are undefined without them. */
    if (!st)
        st = sleapc__yaml_get(t, &ssd, "anchor_sizes", &sizes);
    if (!st && sleapc__yaml_is_null(&sizes))
        return sleapc__yaml_fail(t, &sizes, SLEAPC_ERR_FORMAT,
                                 "null: the anchor sizes are set at training, and inference "
                                 "needs them (one per level)");
    if (!st)
        st = read_numbers(t, &ssd, "anchor_sizes", b->ssd_levels, b->anchor_sizes,
                          &b->n_anchor_sizes);
    if (!st)
        st = read_numbers(t, &ssd, "anchor_scales", 0, b->anchor_scales, &b->n_anchor_scales);
    if (!st)
        st = read_numbers(t, &ssd, "aspect_ratios", 0, b->aspect_ratios, &b->n_aspect_ratios);
    if (!st)
        st = read_numbers(t, &ssd, "box_variances", 4, b->box_variances, &n_var);
    if (!st)
        st = read_int(t, &ssd, "head_channels", 1, false, &b->head_channels);
    if (!st)
        st = read_int(t, &ssd, "head_convs", 0, false, &b->head_convs);
    if (!st && (int64_t)b->stride << (b->ssd_levels - 1) > 1024)
        return sleapc__yaml_fail(t, &ssd, SLEAPC_ERR_FORMAT,
                                 "output_stride %d with num_levels %d: the deepest level's "
                                 "stride is over 1024",
                                 b->stride, b->ssd_levels);
    return st;
}

sleapc_status sleapc__config_read_bbox(sleapc_yaml_tree *t, const sleapc_yaml_ref *head,
                                       sleapc_model_config *cfg)
{
    sleapc__bbox_config_defaults(&cfg->bbox);
    if (!sleapc__yaml_is_map(head))
        return sleapc__yaml_fail(t, head, SLEAPC_ERR_FORMAT, "expected a mapping");
    if (cfg->model_type == SLEAPC_MODEL_TYPE_BBOX_CENTERNET)
        return read_centernet(t, head, &cfg->bbox);
    return read_ssd(t, head, &cfg->bbox);
}
