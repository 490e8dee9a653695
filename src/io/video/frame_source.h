/* Frame sources: one reader interface over video files (decoded with FFmpeg),
 * single images and folders of images, and .npy arrays. Every source yields
 * frames as packed HWC uint8 with a channel count fixed at open (1 or 3). */
#ifndef SLEAPC_IO_VIDEO_FRAME_SOURCE_H
#define SLEAPC_IO_VIDEO_FRAME_SOURCE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_frame_source sleapc_frame_source;

/* How decoded YUV video frames become RGB: the two decoders whose frames
 * sleap-nn releases were checked on (sleapc_compat picks one). */
typedef enum sleapc_decode_rule {
    /* sleap-io 0.9.5 (its opencv, pyav-on-gray and FFMPEG plugins) and
     * `ffmpeg -pix_fmt rgb24`: the colour matrix the stream is tagged with,
     * swscale's default bicubic flags. */
    SLEAPC_DECODE_FFMPEG_DEFAULT = 0,
    /* The sleap-nn 0.3.3 reference frames: BT.601 whatever the tag,
     * bicubic + accurate rounding. */
    SLEAPC_DECODE_BT601_ACCURATE = 1
} sleapc_decode_rule;

/* What each kind of source provides. Call the wrappers below, never these. */
struct sleapc_frame_source_ops {
    const char *kind; /* required: "video", "images" or "npy" */
    /* Required. Write frame idx into dst (height*width*channels bytes, HWC).
     * idx is already checked against n_frames. Sets the message on failure. */
    sleapc_status (*read)(sleapc_frame_source *src, int64_t idx, uint8_t *dst);
    /* Live kinds only: the next frame into dst, or *end at the end. */
    sleapc_status (*next)(sleapc_frame_source *src, uint8_t *dst, bool *end);
    /* Required. Free impl and everything it owns; src itself and path are
     * freed by the wrapper. Must accept a half-built impl. */
    void (*close)(sleapc_frame_source *src);
};

struct sleapc_frame_source {
    const struct sleapc_frame_source_ops *ops;
    char *path;        /* owned copy of the path the source was opened with */
    int64_t n_frames;  /* >= 1 once open; 0 for a live source (unknown) */
    int64_t height;    /* pixels, >= 1 */
    int64_t width;     /* pixels, >= 1 */
    int64_t channels;  /* 1 or 3 */
    int64_t n_seeks;   /* times a kind repositioned its input (test hook: reading
                        * frame k+1 after frame k must not seek) */
    void *impl;        /* the kind's own state */
    bool live;         /* read once in order with sleapc__frame_source_next */
    volatile sig_atomic_t *stop; /* live: non-zero makes a waiting read end the
                                    source (the caller's stop request); may be NULL */
    sleapc_decode_rule decode;   /* set before the kind opens; video kinds follow it */
};

/* The decoding of the sleap-nn release c reproduces (sleapc_compat). */
sleapc_decode_rule sleapc__decode_rule_of(sleapc_compat c);

/* Open path: a folder (its images), a .npy file, an image file (PNG, JPEG,
 * TIFF, BMP) or anything FFmpeg can demux as video. The kind is chosen by
 * content where it is recognisable and by extension otherwise. On failure
 * *out is NULL and the status is SLEAPC_ERR_IO (missing or unreadable),
 * SLEAPC_ERR_FORMAT (not a readable video/image/array) or SLEAPC_ERR_NOMEM,
 * with a message naming path. */
sleapc_status sleapc__frame_source_open(const char *path, sleapc_frame_source **out);
/* The same, video frames converted by rule (the open above: the default). */
sleapc_status sleapc__frame_source_open_rule(const char *path, sleapc_decode_rule rule,
                                             sleapc_frame_source **out);

/* True when path names a live source: "-" (standard input), a URL
 * (scheme://...), a camera (/dev/video*, a character device) or a named
 * pipe. Such paths are opened with sleapc__frame_source_open_live only;
 * sleapc__frame_source_open refuses them, so no reader of a file hangs. */
bool sleapc__frame_source_is_live(const char *path);

/* Open a live source (see above): FFmpeg reads it once, front to back;
 * n_frames is 0 and frames come from sleapc__frame_source_next. Frame 0 is
 * decoded at open. A network source that does not answer within 10 s fails
 * with SLEAPC_ERR_IO; one that stops delivering frames for 10 s later ends
 * there (with a warning to the log hook). Errors name path. */
sleapc_status sleapc__frame_source_open_live(const char *path, sleapc_frame_source **out);
sleapc_status sleapc__frame_source_open_live_rule(const char *path, sleapc_decode_rule rule,
                                                  sleapc_frame_source **out);

/* The next frame of a live source into dst; *end (and SLEAPC_OK) when the
 * source has no more. */
sleapc_status sleapc__frame_source_next(sleapc_frame_source *src, uint8_t *dst, bool *end);

/* Read frame idx (0-based) into dst (height*width*channels bytes).
 * SLEAPC_ERR_INVALID_ARG when idx is out of range. */
sleapc_status sleapc__frame_source_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst);

/* Close and free. Accepts NULL. */
void sleapc__frame_source_close(sleapc_frame_source *src);

/* Bytes in one frame of src. */
size_t sleapc__frame_source_frame_bytes(const sleapc_frame_source *src);

/* Kind-specific constructors, called by sleapc__frame_source_open with
 * src->path set and every other field zero. They fill ops, the shape and
 * impl; on failure they may leave impl half-built (ops set) for close. */
sleapc_status sleapc__video_ffmpeg_open(sleapc_frame_source *src);
sleapc_status sleapc__image_source_open(sleapc_frame_source *src, bool is_dir);
sleapc_status sleapc__npy_source_open(sleapc_frame_source *src);
sleapc_status sleapc__video_live_open(sleapc_frame_source *src);

/* --- Still-image decoding (FFmpeg's PNG, JPEG, TIFF and BMP decoders). --- */

typedef struct sleapc_image_decoder sleapc_image_decoder;

/* What a decode produced. rgb is packed RGB24, height*width*3 bytes, owned by
 * the decoder and valid until its next decode or destroy. A grayscale image
 * (gray, gray+alpha or 1-bit) is replicated into all three channels and
 * has gray_format set; alpha is dropped. */
typedef struct sleapc_decoded_image {
    const uint8_t *rgb;
    int64_t height;
    int64_t width;
    bool gray_format;
} sleapc_decoded_image;

sleapc_status sleapc__image_decoder_create(sleapc_image_decoder **out);
void sleapc__image_decoder_destroy(sleapc_image_decoder *d);

/* Decode one encoded image (the format is recognised from its first bytes).
 * name labels messages ("read image: <name>: ..."). Not kept. Returns
 * SLEAPC_ERR_FORMAT for anything that is not a decodable image. Reuses the
 * decoder's pixel buffer, so repeated decodes of one size allocate nothing. */
sleapc_status sleapc__image_decoder_decode(sleapc_image_decoder *d, const uint8_t *bytes,
                                           size_t n, const char *name,
                                           sleapc_decoded_image *out);

/* True when bytes start like a PNG, JPEG, TIFF or BMP file. */
bool sleapc__image_sniff(const uint8_t *bytes, size_t n);

/* Whether a file name has an image extension (.png, .jpg, .jpeg, .tif,
 * .tiff, .bmp, any case): what a folder of images holds. */
bool sleapc__image_file_name(const char *path);

/* --- Pixel helpers (frame_convert.c). --- */

/* sleap-io's grayscale rule (VideoBackend.detect_grayscale): a frame is
 * grayscale when its first and last channels are equal everywhere. */
bool sleapc__frame_rgb_is_gray(const uint8_t *rgb, size_t n_pixels);

/* Copy packed RGB24 pixels to dst with channels 3 (copy) or 1 (channel 0,
 * as sleap-io's VideoBackend.get_frame keeps img[..., [0]]). */
void sleapc__frame_rgb_to_channels(const uint8_t *rgb, size_t n_pixels, int64_t channels,
                                   uint8_t *dst);

#endif
