/* An instance's centroid from its points (sleap-nn 0.3.5
 * data/instance_centroids.py generate_centroids): the crop centre a
 * centered-instance model was trained on, which its ground-truth crops
 * must repeat. */
#ifndef SLEAPC_LAYERS_OPS_INSTANCE_CENTROIDS_H
#define SLEAPC_LAYERS_OPS_INSTANCE_CENTROIDS_H

#include <stdint.h>

#include "core/error.h"

typedef enum sleapc_centroid_method {
    SLEAPC_CENTROID_CENTER_OF_MASS, /* NaN-ignoring mean per axis */
    SLEAPC_CENTROID_BBOX_CENTER,    /* midpoint of the visible points' box */
    SLEAPC_CENTROID_ANCHOR          /* one node; its fallback when not visible */
} sleapc_centroid_method;

typedef struct sleapc_centroid_rule {
    sleapc_centroid_method method;
    sleapc_centroid_method fallback; /* anchor: center_of_mass or bbox_center */
    int anchor;                      /* anchor: the node index */
} sleapc_centroid_rule;

/* resolve_centroid_method: anchor (a node index, -1 for none; an anchor
 * implies the anchor method), method and fallback as the config names them
 * (NULL: null). A value sleapc cannot compute (geometric_median) or a
 * contradiction is refused, naming the key; where names the config. */
sleapc_status sleapc__centroid_rule_resolve(int anchor, const char *method, const char *fallback,
                                            const char *where, sleapc_centroid_rule *out);

/* The centroid of one instance of n_nodes (x, y) float32 points (NaN:
 * missing) into out[2]: NaN when no point is visible. */
void sleapc__instance_centroid(const sleapc_centroid_rule *r, const float *xy, int64_t n_nodes,
                               float out[2]);

#endif
