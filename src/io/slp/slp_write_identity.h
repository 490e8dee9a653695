/* The re-ID identity subsystem of a .slp (sleap-io 0.9.5, SLP format 2.5),
 * for multi-class models whose head says class_output: identity. */
#ifndef SLEAPC_IO_SLP_WRITE_IDENTITY_H
#define SLEAPC_IO_SLP_WRITE_IDENTITY_H

#include <stdbool.h>

#include "core/results.h"
#include "io/h5/h5_file.h"

/* format_id sleap-io writes once a file holds identity data. */
#define SLEAPC_SLP_FORMAT_ID_IDENTITY 2.5

/* When head->identities is set: /identity/name, one class name per identity
 * in the order the instances first use them (as sleap-nn registers its
 * sio.Identity objects), then /identity/links, one (owner_type 0 =
 * instance, owner_id = the instance's row in /instances, identity_idx,
 * identity_score) row per instance with a class; the score is the class
 * probability, the instance's tracking_score (sleap-nn stores it as both).
 * Nothing is written when no instance has a class; *written says whether
 * the group was. Reads src from its start. */
sleapc_status sleapc__slp_write_identities(sleapc_h5 *f, const sleapc_predictions *head,
                                           sleapc_results_source *src, bool *written);

#endif
