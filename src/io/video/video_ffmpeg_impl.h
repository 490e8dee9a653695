/* Private to the FFmpeg frame reader (video_ffmpeg*.c): the reader's state,
 * the frame converter and the helpers its files share. Only these files and
 * video_encode.c include libav* headers. */
#ifndef SLEAPC_IO_VIDEO_FFMPEG_IMPL_H
#define SLEAPC_IO_VIDEO_FFMPEG_IMPL_H

#include "io/video/ffmpeg_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/frame.h>

#include "io/video/frame_source.h"
#include "io/video/video_index.h"
#include "sleapc/sleapc.h"

/* Converts decoded frames to packed RGB24 (or GRAY8), rebuilt when the
 * frame's size or format changes (video_ffmpeg_pixels.c). */
typedef struct sleapc_ffmpeg_converter {
    struct SwsContext *sws;
    int src_w, src_h, src_fmt, dst_fmt; /* what sws was built for */
    int src_range;                      /* colour range last applied; -1: none yet */
    int src_space;                      /* colour matrix tag last applied */
    sleapc_decode_rule rule;            /* set by the owner before the first run */
    uint8_t *buf;                       /* packed output, sleapc__aligned_alloc */
    size_t buf_size;
} sleapc_ffmpeg_converter;

/* One open video file: opened and indexed by video_ffmpeg.c, positioned and
 * decoded by video_ffmpeg_seek.c. */
typedef struct sleapc_ffmpeg_video {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    int stream;
    sleapc_ffmpeg_converter conv;
    sleapc_video_index ix;
    int width, height;   /* of frame 0; every frame must match */
    int64_t last;        /* frame number of the decoder's last output; -1: none since the seek */
    int64_t ordinal;     /* frames output since the rewind (when !ix.by_pts) */
    int64_t n_unknown;   /* frames of the last decode_until whose pts is not in the index */
    int64_t skip_before; /* pts: packets shown before it skip non-reference frames */
    int64_t n_skipped;   /* packets decoded that way by the last decode_until */
    int64_t n_seeks;     /* seeks and rewinds so far */
    bool positioned;     /* demuxer and decoder continue from `last` */
    bool draining;       /* end of input reached; the decoder was told */
    bool eof;            /* the decoder has nothing more */
    bool have_rgb;       /* conv.buf holds frame `last` */
    bool pending;        /* v->frame holds frame `last`, decoded past the one asked for */
} sleapc_ffmpeg_video;

/* video_ffmpeg.c: open path's container and find its video stream. */
sleapc_status sleapc__ffmpeg_open_input(sleapc_ffmpeg_video *v, const char *path);

/* video_ffmpeg_seek.c: leave frame idx, as packed RGB24, in v->conv.buf. */
sleapc_status sleapc__ffmpeg_read_rgb(sleapc_ffmpeg_video *v, const char *path, int64_t idx);

/* video_ffmpeg_seek.c: decode frame 0 (which may drop undecodable leading
 * frames from the index) and leave it in v->conv.buf. */
sleapc_status sleapc__ffmpeg_read_first_frame(sleapc_ffmpeg_video *v, const char *path);

/* video_ffmpeg_pixels.c: the converter's output buffer and context. */
void sleapc__ffmpeg_converter_free(sleapc_ffmpeg_converter *c);

/* video_ffmpeg_pixels.c: convert f into c->buf as packed rows (width *
 * bytes-per-pixel, no gaps); `what` starts the message on failure. */
sleapc_status sleapc__ffmpeg_converter_run(sleapc_ffmpeg_converter *c, const AVFrame *f,
                                           int dst_fmt, const char *what);

#endif
