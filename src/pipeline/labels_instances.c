#include "pipeline/labels_instances.h"

#include <math.h>

#include "core/alloc.h"
#include "core/error.h"

/* Visits each user instance (inst) of frame idx of video, in file order. */
#define FOR_USER(r, video, idx, inst)                                                    \
    for (int64_t f_ = 0; f_ < (r)->n_frames; f_++)                                       \
        if ((r)->frames[f_].video == (video) && (r)->frames[f_].frame_idx == (idx))      \
            for (int64_t i_ = 0; i_ < (r)->frames[f_].n_instances; i_++)                 \
                if (!(inst = &(r)->instances[(r)->frames[f_].first_instance + i_])       \
                         ->predicted)

bool sleapc__labels_has_user(const sleapc_slp *r, int video, int64_t idx)
{
    const sleapc_slp_instance *inst;
    FOR_USER(r, video, idx, inst)
    return true;
    return false;
}

sleapc_status sleapc__labels_user_points(const sleapc_slp *r, int video, const int64_t *idx,
                                         int64_t n, float **buf, size_t *cap, int64_t *slots,
                                         int64_t *n_nodes)
{
    const sleapc_slp_instance *inst;
    int64_t S = 0, N = 1;
    for (int64_t k = 0; k < n; k++) {
        int64_t count = 0;
        FOR_USER(r, video, idx[k], inst) {
            count++;
            N = inst->n_points > N ? inst->n_points : N;
        }
        S = count > S ? count : S;
    }
    size_t need = (size_t)(n * (S > 0 ? S : 1) * N * 2);
    if (need > *cap) {
        sleapc__free(*buf);
        *buf = sleapc__malloc(need * sizeof(float));
        *cap = *buf ? need : 0;
        if (!*buf)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "labels: out of memory");
    }
    for (size_t k = 0; k < need; k++)
        (*buf)[k] = NAN;
    for (int64_t k = 0; k < n; k++) {
        int64_t s = 0;
        FOR_USER(r, video, idx[k], inst) {
            float *dst = *buf + ((k * S + s) * N) * 2;
            for (int j = 0; j < inst->n_points; j++) {
                const sleapc_slp_point *pt = &r->points[inst->first_point + j];
                if (pt->visible) {
                    dst[2 * j] = (float)pt->x;
                    dst[2 * j + 1] = (float)pt->y;
                }
            }
            s++;
        }
    }
    *slots = S;
    *n_nodes = N;
    return SLEAPC_OK;
}
