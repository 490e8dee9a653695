#include "layers/layer_outputs.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* Grow *p to at least bytes (contents are reset by the caller). */
static sleapc_status reserve(void **p, size_t *cap, size_t bytes)
{
    if (bytes <= *cap && *p)
        return SLEAPC_OK;
    sleapc__aligned_free(*p);
    *p = sleapc__aligned_alloc(bytes ? bytes : 64);
    *cap = *p ? bytes : 0;
    return *p ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "layer outputs: out of memory");
}

static void fill_nan(float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = NAN;
}

sleapc_status sleapc__layer_outputs_reset(sleapc_layer_outputs *o, int64_t b, int64_t i,
                                          int64_t n, int64_t c)
{
    if (b < 0 || i < 0 || n < 0 || c < 0 || b > (1 << 20) || i > (1 << 20) || n > (1 << 16) ||
        c > (1 << 16))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "layer outputs: bad sizes");
    int64_t bi = b * i;
    struct {
        void **p;
        int64_t count;
        size_t elem;
    } arrays[] = {
        {(void **)&o->keypoints, bi * n * 2, sizeof(float)},
        {(void **)&o->peak_values, bi * n, sizeof(float)},
        {(void **)&o->instance_scores, bi, sizeof(float)},
        {(void **)&o->centroids, bi * 2, sizeof(float)},
        {(void **)&o->centroid_values, bi, sizeof(float)},
        {(void **)&o->crop_keypoints, bi * n * 2, sizeof(float)},
        {(void **)&o->bboxes, bi * 8, sizeof(float)},
        {(void **)&o->tracking_scores, bi, sizeof(float)},
        {(void **)&o->class_inds, bi, sizeof(int32_t)},
        {(void **)&o->class_vectors, bi * c, sizeof(float)},
        {(void **)&o->eff_scale, b, sizeof(float)},
    };
    _Static_assert(sizeof arrays / sizeof arrays[0] == sizeof o->cap_bytes / sizeof o->cap_bytes[0],
                   "one capacity per array");
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        sleapc_status st = reserve(arrays[k].p, &o->cap_bytes[k],
                                   (size_t)arrays[k].count * arrays[k].elem);
        if (st)
            return st;
        if (arrays[k].elem == sizeof(float) && (void *)arrays[k].p != (void *)&o->class_inds)
            fill_nan(*(float **)arrays[k].p, arrays[k].count);
    }
    for (int64_t k = 0; k < bi; k++)
        o->class_inds[k] = -1;
    for (int64_t k = 0; k < b; k++)
        o->eff_scale[k] = 1.0f;
    o->n_frames = b;
    o->n_slots = i;
    o->n_nodes = n;
    o->n_classes = c;
    o->has_instance_scores = o->has_centroids = o->has_crops = false;
    o->has_classes = o->has_class_vectors = o->centroid_only = false;
    o->has_boxes = false;
    return SLEAPC_OK;
}

sleapc_status sleapc__layer_outputs_reset_boxes(sleapc_layer_outputs *o, int64_t b,
                                                int64_t slots)
{
    if (b < 0 || slots < 0 || b > (1 << 20) || slots > (1 << 20) || b * slots > (1 << 26))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "layer outputs: bad box sizes");
    sleapc_status st = reserve((void **)&o->boxes, &o->box_cap_bytes[0],
                               (size_t)(b * slots) * sizeof *o->boxes);
    if (!st)
        st = reserve((void **)&o->n_boxes, &o->box_cap_bytes[1], (size_t)b * sizeof *o->n_boxes);
    if (st)
        return st;
    for (int64_t k = 0; k < b; k++)
        o->n_boxes[k] = 0;
    o->box_slots = slots;
    o->has_boxes = true;
    return SLEAPC_OK;
}

int sleapc__layer_outputs_frame_boxes(const sleapc_layer_outputs *o, int64_t k,
                                      const sleapc_box **boxes)
{
    *boxes = NULL;
    if (!o->has_boxes || k < 0 || k >= o->n_frames)
        return 0;
    *boxes = o->boxes + k * o->box_slots;
    return o->n_boxes[k];
}

void sleapc__layer_outputs_free(sleapc_layer_outputs *o)
{
    if (!o)
        return;
    void *arrays[] = {o->keypoints, o->peak_values, o->instance_scores, o->centroids,
                      o->centroid_values, o->crop_keypoints, o->bboxes, o->tracking_scores,
                      o->class_inds, o->class_vectors, o->eff_scale};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        sleapc__aligned_free(arrays[k]);
    sleapc__aligned_free(o->boxes);
    sleapc__aligned_free(o->n_boxes);
    memset(o, 0, sizeof *o);
}
