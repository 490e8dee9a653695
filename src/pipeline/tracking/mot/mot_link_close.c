/* Closed-set identity linking (max_tracks): not yet. */
#include "core/error.h"
#include "pipeline/tracking/mot/mot_link.h"

sleapc_status sleapc__mot_link_close(mot_linker *L, int n_max, int *n_forced, int *n_untracked)
{
    (void)L;
    (void)n_max;
    *n_forced = *n_untracked = 0;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "max_tracks: closed-set linking not supported");
}
