/* FFmpeg helpers the libav* users here share (video_ffmpeg*.c, video_live.c,
 * video_encode.c). */
#ifndef SLEAPC_IO_VIDEO_FFMPEG_UTIL_H
#define SLEAPC_IO_VIDEO_FFMPEG_UTIL_H

#include <stddef.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "sleapc/sleapc.h"

/* The library never prints: FFmpeg's logging is turned off once, by the first
 * caller (FFmpeg's level is process-wide). */
void sleapc__ffmpeg_silence(void);

/* FFmpeg's text for err, written into buf (n bytes), which is returned. */
const char *sleapc__ffmpeg_reason(int err, char *buf, size_t n);

/* The best video stream of an opened container into *stream; the demuxer is
 * told to skip every other stream. SLEAPC_ERR_FORMAT naming path. */
sleapc_status sleapc__ffmpeg_video_stream(AVFormatContext *fmt, const char *path, int *stream);

/* The decoder of fmt's stream, opened with one thread (each packet decoded
 * inside its avcodec_send_packet, which the file reader's per-packet
 * skip_frame relies on), and a packet and frame to use with it. What was
 * allocated is in the out arguments even on failure (the caller frees).
 * SLEAPC_ERR_UNSUPPORTED (no decoder), _FORMAT, _NOMEM, naming path. */
sleapc_status sleapc__ffmpeg_open_decoder(AVFormatContext *fmt, int stream, const char *path,
                                          AVCodecContext **dec, AVPacket **pkt, AVFrame **frame);

#endif
