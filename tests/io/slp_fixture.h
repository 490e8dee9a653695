/* Building sleapc_predictions by hand for the writer tests. Header-only;
 * functions are static inline so each test uses what it needs. */
#ifndef SLEAPC_TESTS_IO_SLP_FIXTURE_H
#define SLEAPC_TESTS_IO_SLP_FIXTURE_H

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/results.h"
#include "io/csv/predictions_csv.h"
#include "io/slp/slp_write.h"

/* An empty prediction set with the given skeleton, tracks and one video;
 * room for max_frames frames and max_insts instances. Free with
 * fixture_free. */
static inline void fixture_init(sleapc_predictions *pr, const char *skeleton, int n_nodes,
                                const char *const *nodes, int n_edges, const int (*edges)[2],
                                int n_tracks, const char *const *tracks, const char *video,
                                int64_t max_frames, int64_t max_insts)
{
    memset(pr, 0, sizeof *pr);
    pr->skeleton_name = sleapc__strdup(skeleton);
    pr->n_nodes = n_nodes;
    pr->node_names = sleapc__calloc((size_t)n_nodes, sizeof(char *));
    for (int i = 0; i < n_nodes; i++)
        pr->node_names[i] = sleapc__strdup(nodes[i]);
    pr->n_edges = n_edges;
    pr->edges = sleapc__calloc((size_t)n_edges + 1, sizeof *pr->edges);
    for (int i = 0; i < n_edges; i++) {
        pr->edges[i][0] = edges[i][0];
        pr->edges[i][1] = edges[i][1];
    }
    pr->symmetries = sleapc__calloc(4, sizeof *pr->symmetries);
    pr->n_tracks = n_tracks;
    pr->track_names = sleapc__calloc((size_t)n_tracks + 1, sizeof(char *));
    for (int i = 0; i < n_tracks; i++)
        pr->track_names[i] = sleapc__strdup(tracks[i]);
    pr->n_videos = 1;
    pr->videos = sleapc__calloc(1, sizeof *pr->videos);
    pr->videos[0].filename = sleapc__strdup(video);
    pr->frames_cap = max_frames;
    pr->frames = sleapc__calloc((size_t)max_frames + 1, sizeof *pr->frames);
    pr->insts_cap = max_insts;
    pr->insts = sleapc__calloc((size_t)max_insts + 1, sizeof *pr->insts);
    pr->points = sleapc__calloc((size_t)(max_insts * n_nodes * 2) + 1, sizeof(float));
    pr->point_scores = sleapc__calloc((size_t)(max_insts * n_nodes) + 1, sizeof(float));
}

static inline void fixture_add_frame(sleapc_predictions *pr, int video, int64_t frame_idx)
{
    sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
    f->video = video;
    f->frame_idx = frame_idx;
    f->first = pr->n_insts;
    f->n = 0;
}

/* Add an instance to the last frame; xy holds n_nodes (x, y) pairs. */
static inline void fixture_add_instance(sleapc_predictions *pr, const float *xy,
                                        const float *scores, float score, int track,
                                        float tracking_score)
{
    int64_t k = pr->n_insts++;
    pr->frames[pr->n_frames - 1].n++;
    sleapc_pred_instance *in = &pr->insts[k];
    in->score = score;
    in->track = track;
    in->tracking_score = tracking_score;
    in->class_index = -1;
    memcpy(pr->points + k * pr->n_nodes * 2, xy, (size_t)pr->n_nodes * 2 * sizeof(float));
    memcpy(pr->point_scores + k * pr->n_nodes, scores, (size_t)pr->n_nodes * sizeof(float));
}

static inline void fixture_free(sleapc_predictions *pr)
{
    /* provenance is freed here whether or not predictions_free knows it. */
    sleapc__free(pr->provenance);
    pr->provenance = NULL;
    sleapc__predictions_free(pr);
}

#endif
