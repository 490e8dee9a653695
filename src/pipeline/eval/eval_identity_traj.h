/* Trajectory keys for eval-tracking: (video key, track name), the video ""
 * under global identities; numbered in order of first appearance, as
 * sleap-nn's dicts number them. */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_TRAJ_H
#define SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_TRAJ_H

#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

typedef struct sleapc_id_traj {
    int64_t n, cap;
    const char **video, **name; /* borrowed from the labels */
    int *track;                 /* the labels' track index it was first seen with */
} sleapc_id_traj;

/* The trajectory's number, added when new; -1 when out of memory. */
static inline int64_t sleapc__id_traj_get(sleapc_id_traj *t, const char *video, const char *name,
                                          int track)
{
    for (int64_t k = 0; k < t->n; k++)
        if (!strcmp(t->name[k], name) && !strcmp(t->video[k], video))
            return k;
    if (t->n == t->cap) {
        const int64_t c = t->cap ? 2 * t->cap : 16;
        const char **v = sleapc__realloc(t->video, sizeof(char *) * (size_t)c);
        if (v)
            t->video = v;
        const char **m = sleapc__realloc(t->name, sizeof(char *) * (size_t)c);
        if (m)
            t->name = m;
        int *k = sleapc__realloc(t->track, sizeof(int) * (size_t)c);
        if (k)
            t->track = k;
        if (!v || !m || !k)
            return -1;
        t->cap = c;
    }
    t->video[t->n] = video;
    t->name[t->n] = name;
    t->track[t->n] = track;
    return t->n++;
}

static inline void sleapc__id_traj_free(sleapc_id_traj *t)
{
    sleapc__free(t->video);
    sleapc__free(t->name);
    sleapc__free(t->track);
    memset(t, 0, sizeof *t);
}

#endif
