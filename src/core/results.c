#include "core/results.h"

#include <string.h>

#include "core/alloc.h"

void sleapc__predictions_free(sleapc_predictions *pr)
{
    if (!pr)
        return;
    sleapc__free(pr->skeleton_name);
    for (int i = 0; pr->node_names && i < pr->n_nodes; i++)
        sleapc__free(pr->node_names[i]);
    sleapc__free(pr->node_names);
    sleapc__free(pr->edges);
    sleapc__free(pr->symmetries);
    for (int i = 0; pr->track_names && i < pr->n_tracks; i++)
        sleapc__free(pr->track_names[i]);
    sleapc__free(pr->track_names);
    for (int i = 0; pr->videos && i < pr->n_videos; i++)
        sleapc__free(pr->videos[i].filename);
    sleapc__free(pr->videos);
    sleapc__free(pr->frames);
    sleapc__free(pr->insts);
    sleapc__free(pr->points);
    sleapc__free(pr->point_scores);
    sleapc__free(pr->provenance);
    memset(pr, 0, sizeof *pr);
}
