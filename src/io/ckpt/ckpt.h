/* sleap-nn checkpoints (best.ckpt): a PyTorch zip archive whose data.pkl is a
 * pickle (protocol 2) of a Lightning checkpoint dict. */
#ifndef SLEAPC_IO_CKPT_H
#define SLEAPC_IO_CKPT_H

#include "model/weights.h"

/* Read every tensor of result["state_dict"] into out (names as in the state
 * dict, e.g. "model.backbone..."), converted to float32, in pickle order.
 * Other top-level keys (optimizer state, callbacks, config, ...) are decoded
 * with opaque stand-ins and ignored. Any surprise (unknown opcode, truncated
 * archive, unsupported dtype, storage too small for shape/stride/offset) is
 * SLEAPC_ERR_FORMAT with a message naming path and the problem; a missing or
 * unreadable file is SLEAPC_ERR_IO. On failure out is left empty. */
sleapc_status sleapc__ckpt_read(const char *path, sleapc_weights *out);

#endif
