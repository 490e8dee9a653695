/* Room for a predictions file's header and body, filled by the readers. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/predictions/predictions_read_impl.h"

sleapc_status sleapc__pred_read_nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
}

/* Room for the header arrays; names are filled by the readers. */
sleapc_status sleapc__pred_read_alloc(sleapc_predictions *pr, int nodes, int edges, int syms,
                                      int tracks, int videos, int64_t frames, int64_t insts)
{
    pr->n_nodes = nodes;
    pr->n_edges = edges;
    pr->n_symmetries = syms;
    pr->n_tracks = tracks;
    pr->n_videos = videos;
    pr->node_names = sleapc__calloc((size_t)nodes + 1, sizeof(char *));
    pr->edges = sleapc__calloc((size_t)edges + 1, sizeof *pr->edges);
    pr->symmetries = sleapc__calloc((size_t)syms + 1, sizeof *pr->symmetries);
    pr->track_names = sleapc__calloc((size_t)tracks + 1, sizeof(char *));
    pr->videos = sleapc__calloc((size_t)videos + 1, sizeof *pr->videos);
    pr->frames = sleapc__calloc((size_t)frames + 1, sizeof *pr->frames);
    pr->insts = sleapc__calloc((size_t)insts + 1, sizeof *pr->insts);
    pr->points = sleapc__calloc(((size_t)insts + 1) * (size_t)(nodes + 1) * 2, sizeof(float));
    pr->point_scores = sleapc__calloc(((size_t)insts + 1) * (size_t)(nodes + 1), sizeof(float));
    pr->frames_cap = frames;
    pr->insts_cap = insts;
    if (!pr->node_names || !pr->edges || !pr->symmetries || !pr->track_names || !pr->videos ||
        !pr->frames || !pr->insts || !pr->points || !pr->point_scores)
        return sleapc__pred_read_nomem();
    return SLEAPC_OK;
}
