/* The images embedded in a labels package, decoded: shared by everything that
 * reads a labels file's frames (prediction input, rendering). */
#ifndef SLEAPC_IO_SLP_IMAGES_H
#define SLEAPC_IO_SLP_IMAGES_H

#include "io/slp/slp_read.h"
#include "io/video/frame_source.h"

/* Size of embedded video `video`, from its first stored image (decoded with
 * dec): height, width, channels (1 for grayscale images, else 3) and the
 * frame count (the video's, or one past the last stored frame if that is
 * more). who prefixes the messages (e.g. "render: ", or ""). */
sleapc_status sleapc__slp_embedded_shape(sleapc_slp *r, int video, sleapc_image_decoder *dec,
                                         const char *who, int64_t *height, int64_t *width,
                                         int64_t *channels, int64_t *n_frames);

/* Stored frame idx of embedded video `video`, decoded into img (RGB, valid
 * until dec decodes again); an image whose size is not height x width is
 * SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__slp_embedded_decode(sleapc_slp *r, int video, int64_t idx,
                                          sleapc_image_decoder *dec, const char *who,
                                          int64_t height, int64_t width, sleapc_decoded_image *img);

#endif
