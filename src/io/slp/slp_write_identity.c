/* /identity as sleap-io 0.9.5 write_identities and write_identity_links
 * make it for the labels sleap-nn 0.3.5 builds from a multi-class model
 * with class_output: identity (inference/outputs.py to_instances). */
#include "io/slp/slp_write_identity.h"

#include <stddef.h>

#include "core/alloc.h"
#include "core/error.h"

/* sleap-io OWNER_INSTANCE */
#define OWNER_INSTANCE 0

typedef struct link_rec {
    uint8_t owner_type;
    int64_t owner_id;
    int32_t identity_idx;
    float identity_score;
} link_rec;

/* The packed numpy dtype [u1, i8, i4, f4] of _write_identity_link_rows. */
static const sleapc_h5_field link_fields[] = {
    {"owner_type", SLEAPC_H5_U8, offsetof(link_rec, owner_type), SLEAPC_H5_TYPE_DEFAULT, false},
    {"owner_id", SLEAPC_H5_I64, offsetof(link_rec, owner_id), SLEAPC_H5_TYPE_DEFAULT, false},
    {"identity_idx", SLEAPC_H5_I32, offsetof(link_rec, identity_idx), SLEAPC_H5_TYPE_DEFAULT,
     false},
    {"identity_score", SLEAPC_H5_F32, offsetof(link_rec, identity_score), SLEAPC_H5_TYPE_DEFAULT,
     false},
};

/* One pass over src: the links, and catalog[k] = the class of identity k. */
static sleapc_status collect(const sleapc_predictions *head, sleapc_results_source *src,
                             link_rec *links, int64_t *n_links, int *catalog, int *n_catalog)
{
    int *slot = sleapc__malloc(((size_t)head->n_tracks + 1) * sizeof *slot);
    if (!slot)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < head->n_tracks; i++)
        slot[i] = -1;
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    int64_t row = 0;
    while (!st && b->n_frames > 0) {
        for (int64_t k = 0; k < b->n_frames; k++) {
            const sleapc_pred_frame *fr = &b->frames[k];
            for (int64_t i = 0; i < fr->n; i++, row++) {
                const sleapc_pred_instance *in = &b->insts[fr->first + i];
                if (in->track < 0 || in->track >= head->n_tracks)
                    continue;
                if (row >= src->n_insts) {
                    sleapc__free(slot);
                    return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                        "write .slp: more instances than counted");
                }
                if (slot[in->track] < 0) {
                    slot[in->track] = *n_catalog;
                    catalog[(*n_catalog)++] = in->track;
                }
                links[(*n_links)++] = (link_rec){OWNER_INSTANCE, row, slot[in->track],
                                                 in->tracking_score};
            }
        }
        st = src->next(src->ctx, &b);
    }
    sleapc__free(slot);
    return st;
}

sleapc_status sleapc__slp_write_identities(sleapc_h5 *f, const sleapc_predictions *head,
                                           sleapc_results_source *src, bool *written)
{
    *written = false;
    if (!head->identities || head->n_tracks <= 0 || src->n_insts <= 0)
        return SLEAPC_OK;
    link_rec *links = sleapc__calloc((size_t)src->n_insts, sizeof *links);
    int *catalog = sleapc__calloc((size_t)head->n_tracks, sizeof *catalog);
    const char **names = sleapc__calloc((size_t)head->n_tracks, sizeof *names);
    int64_t n_links = 0;
    int n_catalog = 0;
    sleapc_status st = links && catalog && names
                           ? collect(head, src, links, &n_links, catalog, &n_catalog)
                           : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for %lld instances",
                                          (long long)src->n_insts);
    if (!st && n_catalog > 0) {
        for (int k = 0; k < n_catalog; k++)
            names[k] = head->track_names[catalog[k]];
        /* h5py create_dataset(maxshape=(None,)): chunked as h5py guesses. */
        const sleapc_h5_write_opts o = {.chunked = true, .unlimited = true};
        st = sleapc__h5_create_group(f, "identity");
        if (!st)
            st = sleapc__h5_write_vlen_strings(f, "identity/name", n_catalog, names, &o);
        if (!st)
            st = sleapc__h5_write_compound(f, "identity/links", link_fields,
                                           (int)(sizeof link_fields / sizeof *link_fields),
                                           sizeof *links, links, n_links, &o);
        *written = !st;
    }
    sleapc__free(names);
    sleapc__free(catalog);
    sleapc__free(links);
    return st;
}
