/* sleap-nn checkpoints (best.ckpt): a PyTorch zip archive whose data.pkl is a
 * pickle (protocol 2) of a Lightning checkpoint dict. */
#ifndef SLEAPC_IO_CKPT_H
#define SLEAPC_IO_CKPT_H

#include "core/weights.h"

/* Read every tensor of result["state_dict"] into out (names as in the state
 * dict, e.g. "model.backbone..."), converted to float32, in pickle order.
 * Other top-level keys (optimizer state, callbacks, config, ...) are decoded
 * with opaque stand-ins and ignored. Any surprise (unknown opcode, truncated
 * archive, unsupported dtype, storage too small for shape/stride/offset) is
 * SLEAPC_ERR_FORMAT with a message naming path and the problem; a missing or
 * unreadable file is SLEAPC_ERR_IO. out must be empty on entry
 * (SLEAPC_ERR_INVALID_ARG otherwise); on failure it is left empty. */
sleapc_status sleapc__ckpt_read(const char *path, sleapc_weights *out);

/* The same from a checkpoint already in memory: buf[0..size) is borrowed for
 * the call only; label names it in messages (e.g. the path it came from). */
sleapc_status sleapc__ckpt_read_buffer(const uint8_t *buf, size_t size, const char *label,
                                       sleapc_weights *out);

/* Write w as a checkpoint that torch.load accepts, laid out like the files
 * sleap-nn writes: a stored zip with folder "best/", 64-byte aligned
 * payloads, data.pkl in pickle protocol 2 holding {"epoch": 0,
 * "global_step": 0, "pytorch-lightning_version": ..., "state_dict":
 * OrderedDict(name -> float32 tensor, in w's order)}. With
 * with_training_state the dict also carries what a full Lightning checkpoint
 * adds (optimizer_states with Adam moments and 0-d int64 step tensors,
 * lr_schedulers, callbacks, loops, hyper_parameters); sleapc__ckpt_read
 * ignores those. w is not kept. The file is written to a temporary name in
 * the same folder and renamed over path, so path is either the old file or
 * the complete new one. Returns SLEAPC_ERR_INVALID_ARG for a bad w (NULL
 * name or data, ndim outside 0..SLEAPC_WEIGHT_MAX_DIMS, negative dims),
 * SLEAPC_ERR_IO when the file cannot be written, SLEAPC_ERR_UNSUPPORTED when
 * the archive would need zip64 entries (4 GiB or more), or SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__ckpt_write(const char *path, const sleapc_weights *w,
                                 bool with_training_state);

#endif
