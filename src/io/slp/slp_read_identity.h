/* The /identity catalog of a .slp (SLP format 2.5): the identities a
 * multi-class model with class_output: identity gives its instances, which
 * sleap-nn 0.3.5 (and sleapc) also write as the instances' tracks. */
#ifndef SLEAPC_IO_SLP_READ_IDENTITY_H
#define SLEAPC_IO_SLP_READ_IDENTITY_H

#include <stdbool.h>

#include "io/h5/h5_file.h"

/* *kept: f has an identity catalog whose every name is one of the n_tracks
 * track_names, so writing the predictions again (identities named after
 * the instances' tracks) gives the same identities. A catalog that names
 * something else is not kept, with a warning naming path; none at all:
 * false, silently. A catalog that cannot be read is SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__slp_identities_kept(sleapc_h5 *f, const char *path,
                                          char *const *track_names, int n_tracks, bool *kept);

#endif
