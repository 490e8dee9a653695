/* The frames of one input (a video, an image folder, a labels file) and the
 * prediction run over them. */
#ifndef SLEAPC_PIPELINE_INPUT_IMPL_H
#define SLEAPC_PIPELINE_INPUT_IMPL_H

#include "io/video/frame_source.h"
#include "sleapc/input.h"

/* The bodies of the public input functions (include/sleapc/input.h documents
 * them); pointers are never NULL here, the public functions check. */
/* Video frames are decoded by rule (frame_source.h). */
sleapc_status sleapc__input_open(const char *path, int video_index, sleapc_decode_rule rule,
                                 sleapc_input **out);
void sleapc__input_close(sleapc_input *in);
int64_t sleapc__input_n_frames(const sleapc_input *in);
int64_t sleapc__input_n_default_frames(const sleapc_input *in);
const int64_t *sleapc__input_default_frames(const sleapc_input *in);
sleapc_video_info sleapc__input_video_info(const sleapc_input *in);
/* Frame idx of a file input into dst (channels, height, width) uint8, the
 * predictor's layout; an error names the input and the frame. */
sleapc_status sleapc__input_read(sleapc_input *in, int64_t idx, uint8_t *dst);
/* A live source (pipe, stream, camera): no frame count, frames in order. */
bool sleapc__input_is_live(const sleapc_input *in);
sleapc_status sleapc__predict_input(sleapc_predictor *p, sleapc_input *in, const int64_t *frames,
                                    int64_t n_frames, sleapc_writer *w, const sleapc_run_opts *opts);

#endif
