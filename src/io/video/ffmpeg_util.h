/* Two FFmpeg helpers every libav* user here shares (video_ffmpeg*.c,
 * video_encode.c). */
#ifndef SLEAPC_IO_VIDEO_FFMPEG_UTIL_H
#define SLEAPC_IO_VIDEO_FFMPEG_UTIL_H

#include <stddef.h>

/* The library never prints: FFmpeg's logging is turned off once, by the first
 * caller (FFmpeg's level is process-wide). */
void sleapc__ffmpeg_silence(void);

/* FFmpeg's text for err, written into buf (n bytes), which is returned. */
const char *sleapc__ffmpeg_reason(int err, char *buf, size_t n);

#endif
