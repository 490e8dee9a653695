/* See slp_read_identity.h. The links are not read: the writer remakes them
 * from the tracks, which hold the same classes. */
#include "io/slp/slp_read_identity.h"

#include <string.h>

#include "core/error.h"

sleapc_status sleapc__slp_identities_kept(sleapc_h5 *f, const char *path,
                                          char *const *track_names, int n_tracks, bool *kept)
{
    *kept = false;
    if (!sleapc__h5_is_group(f, "identity") || !sleapc__h5_is_dataset(f, "identity/name"))
        return SLEAPC_OK;
    char **names = NULL;
    int64_t n = 0;
    sleapc_status st = sleapc__h5_read_strings(f, "identity/name", &names, &n);
    if (st)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: /identity/name cannot be read", path);
    bool all = n > 0;
    for (int64_t i = 0; all && i < n; i++) {
        bool found = false;
        for (int t = 0; !found && t < n_tracks; t++)
            found = names[i] && track_names[t] && strcmp(names[i], track_names[t]) == 0;
        all = found;
    }
    if (n > 0 && !all)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: its identities are not the instances' tracks; sleapc keeps the "
                    "tracks and leaves the identities out",
                    path);
    *kept = all;
    sleapc__h5_free_strings(names, n);
    return SLEAPC_OK;
}
