/* Pairings at infinite cost (sleap-nn 0.3.5 #745, tracking/tracker.py
 * Tracker.assign_tracks): a detection whose score with a track is NaN (no
 * candidate of that track passed min_match_points, or OKS of an all-NaN
 * detection) has no real match there. The Hungarian matcher still pairs it
 * (its non-finite cells are filled with a large cost), and 0.3.3 kept the
 * pairing with score -inf; 0.3.5 drops it so the detection starts a fresh
 * track, but only when it can: enough visible points and, under max_tracks,
 * a free track once the unpaired detections have taken theirs. A detection
 * that could not start one keeps the forced pairing, so none vanishes. */
#include <math.h>
#include <stdbool.h>

#include "pipeline/tracking/tracker_impl.h"

static bool can_spawn(const sleapc_tracker *t, int row)
{
    return t->cur.valid[row] > t->o.min_new_track_points;
}

int sleapc__tracker_drop_infeasible(sleapc_tracker *t, int n_cols, int n_pairs, int64_t slots)
{
    if (t->o.keep_infeasible)
        return n_pairs;
    bool any = false;
    for (int k = 0; k < n_pairs && !any; k++)
        any = !isfinite(t->cost[(int64_t)t->rows[k] * n_cols + t->cols[k]]);
    if (!any)
        return n_pairs;
    if (slots >= 0) {
        /* Unpaired detections start their tracks from the same room. */
        for (int r = 0; r < t->cur.n; r++) {
            bool paired = false;
            for (int k = 0; k < n_pairs && !paired; k++)
                paired = t->rows[k] == r;
            if (!paired && can_spawn(t, r))
                slots = slots > 0 ? slots - 1 : 0;
        }
    }
    int64_t spawnable = 0;
    int m = 0;
    for (int k = 0; k < n_pairs; k++) {
        const int r = t->rows[k], c = t->cols[k];
        if (!isfinite(t->cost[(int64_t)r * n_cols + c]) && can_spawn(t, r) &&
            (slots < 0 || spawnable < slots)) {
            spawnable++;
            continue;
        }
        t->rows[m] = r;
        t->cols[m++] = c;
    }
    return m;
}
