/* A synthetic sample that needs no external data: a small single-instance
 * model folder in sleap-nn's own format and a clip of a moving animal with
 * known keypoints. The model's weights are constructed, not trained: its
 * confidence map for node k is the clip's colour channel k, and each body
 * part is drawn as a Gaussian spot in its own channel, so the maps peak on
 * the drawn parts. Used by `sleapc demo` as an end-to-end check. */
#ifndef SLEAPC_SAMPLE_H
#define SLEAPC_SAMPLE_H

#include "sleapc/sleapc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sleapc_sample_opts {
    int n_frames;    /* 60 */
    int height;      /* 192 */
    int width;       /* 256 */
    unsigned seed;   /* 1 */
} sleapc_sample_opts;

SLEAPC_API sleapc_sample_opts sleapc_sample_opts_default(void);

/* Write into folder dir (created if needed):
 *   dir/model/training_config.yaml, dir/model/best.ckpt  the model (3 nodes)
 *   dir/clip.npy    (n_frames, height, width, 3) uint8 frames
 *   dir/truth.npy   (n_frames, 3, 2) float32 true (x, y) of each node
 * Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG or SLEAPC_ERR_IO. */
SLEAPC_API sleapc_status sleapc_sample_write(const char *dir, const sleapc_sample_opts *opts);

#ifdef __cplusplus
}
#endif

#endif
