/* Live video through FFmpeg: sources read once, front to back, as the frames
 * come (standard input, a named pipe, a network stream, a camera). There is
 * no index and no seeking; the frame count is unknown until the end. Frames
 * are decoded and converted exactly as video_ffmpeg.c does for files, so the
 * same bytes give the same frames either way. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#ifdef SLEAPC_HAVE_AVDEVICE
#include <libavdevice/avdevice.h>
#endif

#include "core/alloc.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/settings.h"
#include "io/video/frame_source.h"
#include "io/video/video_ffmpeg_impl.h"

/* How long a network source may take to open or to deliver its next frame
 * before it counts as gone (SLEAPC_LIVE_TIMEOUT_S overrides it, in seconds).
 * Pipes and cameras wait as long as they must. */
#define LIVE_TIMEOUT_S 10.0

typedef struct live_video {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    int stream;
    sleapc_ffmpeg_converter conv;
    int width, height;
    bool network;
    bool draining, eof;
    bool have_first;  /* conv.buf holds frame 0, not yet handed out */
    double deadline;  /* monotonic seconds; 0: none */
    double timeout_s;
    volatile sig_atomic_t *stop;  /* src->stop, taken at each read */
    /* Standard input and named pipes are read through our own I/O, which
     * waits in short polls so that a stop request ends any wait. */
    int fd;          /* -1: FFmpeg opens the source itself */
    bool own_fd;
    AVIOContext *avio;
} live_video;

#define POLL_MS 100
#define AVIO_BUFFER 65536

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int past_deadline(const live_video *v)
{
    return v->deadline > 0 && now_s() > v->deadline;
}

static bool stop_requested(const live_video *v)
{
    return (v->stop && *v->stop) || sleapc__interrupted();
}

/* FFmpeg polls this while it waits on a network: non-zero gives up. */
static int interrupted(void *opaque)
{
    const live_video *v = opaque;
    return past_deadline(v) || stop_requested(v);
}

/* AVIO read of a pipe: wait for bytes POLL_MS at a time, so that a stop
 * request ends a wait for a writer or for the next bytes. */
static int fd_read(void *opaque, uint8_t *buf, int size)
{
    live_video *v = opaque;
    for (;;) {
        if (stop_requested(v))
            return AVERROR_EXIT;
        struct pollfd p = {.fd = v->fd, .events = POLLIN};
        int r = poll(&p, 1, POLL_MS);
        if (r < 0 && errno != EINTR)
            return AVERROR(errno);
        if (r <= 0)
            continue;
        ssize_t n = read(v->fd, buf, (size_t)size);
        if (n > 0)
            return (int)n;
        if (n == 0)
            return AVERROR_EOF;
        if (errno != EINTR && errno != EAGAIN)
            return AVERROR(errno);
    }
}

/* Standard input or a named pipe, read through fd_read. A named pipe is
 * opened without waiting for its writer (poll waits for one). */
static sleapc_status open_pipe(live_video *v, const char *path)
{
    if (strcmp(path, "-") == 0) {
        v->fd = 0;
    } else {
        v->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (v->fd < 0)
            return sleapc__fail(SLEAPC_ERR_IO, "open video: %s: %s", path, strerror(errno));
        v->own_fd = true;
    }
    uint8_t *buf = av_malloc(AVIO_BUFFER);
    v->avio = buf ? avio_alloc_context(buf, AVIO_BUFFER, 0, v, fd_read, NULL, NULL) : NULL;
    if (!v->avio) {
        av_free(buf);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    }
    v->fmt->pb = v->avio;
    v->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    return SLEAPC_OK;
}

static double timeout_setting(void)
{
    double t = sleapc__settings_live_timeout_s();
    return t > 0.0 ? t : LIVE_TIMEOUT_S;
}

static void arm(live_video *v)
{
    v->deadline = v->network ? now_s() + v->timeout_s : 0;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_url(const char *path)
{
    const char *colon = strstr(path, "://");
    if (!colon || colon == path)
        return false;
    for (const char *c = path; c < colon; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '+' || *c == '-' || *c == '.'))
            return false;
    return true;
}

static bool is_camera(const char *path)
{
    struct stat sb;
    return starts_with(path, "/dev/video") ||
           (stat(path, &sb) == 0 && S_ISCHR(sb.st_mode));
}

bool sleapc__frame_source_is_live(const char *path)
{
    if (!path)
        return false;
    if (strcmp(path, "-") == 0 || is_url(path) || is_camera(path))
        return true;
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

/* The URL FFmpeg opens, the protocols it may use, and the demuxer (a camera). */
static sleapc_status live_target(live_video *v, const char *path, char **url,
                                 const char **whitelist, const AVInputFormat **format)
{
    const char *prefix = "";
    *format = NULL;
    if (strcmp(path, "-") == 0) {
        path = "pipe:0";
        *whitelist = "pipe";
    } else if (is_url(path)) {
        /* Network protocols only: a stream's playlist may not reach files. */
        *whitelist = "http,https,tls,tcp,udp,rtp,rtsp,rtsps,rtmp,rtmps,rtmpt,srt,crypto,"
                     "httpproxy,mmsh,mmst";
        v->network = true;
    } else if (is_camera(path)) {
#ifdef SLEAPC_HAVE_AVDEVICE
        avdevice_register_all();
        *format = av_find_input_format("video4linux2");
#endif
        if (!*format)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "open video: %s: cameras need FFmpeg's libavdevice, which this "
                                "build does not have (libavdevice-dev)", path);
        *whitelist = "file";
    } else {
        prefix = "file:";
        *whitelist = "file";
    }
    size_t n = strlen(prefix) + strlen(path) + 1;
    *url = sleapc__malloc(n);
    if (!*url)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    snprintf(*url, n, "%s%s", prefix, path);
    return SLEAPC_OK;
}

static sleapc_status open_input(live_video *v, const char *path)
{
    char why[128], *url = NULL;
    const char *whitelist = NULL;
    const AVInputFormat *format = NULL;
    sleapc_status st = live_target(v, path, &url, &whitelist, &format);
    if (st)
        return st;
    v->fmt = avformat_alloc_context();
    if (!v->fmt) {
        sleapc__free(url);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    }
    v->fmt->interrupt_callback.callback = interrupted;
    v->fmt->interrupt_callback.opaque = v;
    bool is_pipe = strcmp(path, "-") == 0 || (!v->network && !format);
    if (is_pipe && (st = open_pipe(v, path))) {
        sleapc__free(url);
        return st;
    }
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "protocol_whitelist", whitelist, 0);
    arm(v);
    int ret = avformat_open_input(&v->fmt, url, format, &opts);
    av_dict_free(&opts);
    sleapc__free(url);
    if (ret < 0 && stop_requested(v))
        return sleapc__fail(SLEAPC_ERR_INTERRUPTED, "open video: %s: stopped while waiting",
                            path);
    if (ret < 0) {
        bool timed_out = past_deadline(v);
        return sleapc__fail(timed_out || ret == AVERROR(ENOENT) || ret == AVERROR(EACCES) ||
                                    ret == AVERROR(EIO) || ret == AVERROR(ECONNREFUSED) ||
                                    ret == AVERROR_EXIT
                                ? SLEAPC_ERR_IO
                                : SLEAPC_ERR_FORMAT,
                            "open video: %s: cannot open (%s)", path,
                            timed_out ? "no answer in time"
                                      : sleapc__ffmpeg_reason(ret, why, sizeof why));
    }
    ret = avformat_find_stream_info(v->fmt, NULL);
    if (ret < 0 && stop_requested(v))
        return sleapc__fail(SLEAPC_ERR_INTERRUPTED, "open video: %s: stopped while waiting",
                            path);
    if (ret < 0)
        return sleapc__fail(past_deadline(v) ? SLEAPC_ERR_IO : SLEAPC_ERR_FORMAT,
                            "open video: %s: %s (%s)", path,
                            past_deadline(v) ? "no video arrived in time" : "unreadable streams",
                            sleapc__ffmpeg_reason(ret, why, sizeof why));
    return sleapc__ffmpeg_video_stream(v->fmt, path, &v->stream);
}

/* Next decoded frame into v->frame; *got false at the end of the stream. */
static sleapc_status decode_next(live_video *v, const char *path, bool *got)
{
    *got = false;
    arm(v);
    for (;;) {
        int ret = avcodec_receive_frame(v->dec, v->frame);
        if (ret == 0) {
            *got = true;
            return SLEAPC_OK;
        }
        if (ret == AVERROR_EOF || v->draining) {
            v->eof = true;
            return SLEAPC_OK;
        }
        ret = av_read_frame(v->fmt, v->pkt);
        if (ret < 0) {
            /* A stream that went quiet ends like one that closed: the frames
             * predicted so far are kept. */
            if (past_deadline(v))
                sleapc__log(SLEAPC_LOG_WARN, "%s: no frame for %g s; taking it as the end",
                            path, v->timeout_s);
            /* End of input (or a damaged tail, as with files): drain. */
            avcodec_send_packet(v->dec, NULL);
            v->draining = true;
            continue;
        }
        /* Packets marked for discarding still go in: they may be references,
         * and the decoder itself drops their frames. */
        if (v->pkt->stream_index == v->stream)
            (void)avcodec_send_packet(v->dec, v->pkt);
        av_packet_unref(v->pkt);
    }
}

static sleapc_status convert(live_video *v, const char *path)
{
    char what[64 + 4096];
    snprintf(what, sizeof what, "read video: %s", path);
    if (v->width == 0) {
        v->width = v->frame->width;
        v->height = v->frame->height;
    } else if (v->frame->width != v->width || v->frame->height != v->height) {
        av_frame_unref(v->frame);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: size changed from %dx%d to %dx%d", what,
                            v->width, v->height, v->frame->width, v->frame->height);
    }
    sleapc_status st = sleapc__ffmpeg_converter_run(&v->conv, v->frame, AV_PIX_FMT_RGB24, what);
    av_frame_unref(v->frame);
    return st;
}

static sleapc_status live_next(sleapc_frame_source *src, uint8_t *dst, bool *end)
{
    live_video *v = src->impl;
    *end = false;
    v->stop = src->stop;
    if (!v->have_first) {
        bool got = false;
        sleapc_status st = v->eof ? SLEAPC_OK : decode_next(v, src->path, &got);
        if (st)
            return st;
        if (!got) {
            *end = true;
            return SLEAPC_OK;
        }
        if ((st = convert(v, src->path)))
            return st;
    }
    v->have_first = false;
    sleapc__frame_rgb_to_channels(v->conv.buf, (size_t)v->width * (size_t)v->height,
                                  src->channels, dst);
    return SLEAPC_OK;
}

static sleapc_status live_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst)
{
    (void)dst;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                        "read video: %s: a live source is read in order, frame %lld cannot be "
                        "picked", src->path, (long long)idx);
}

static void live_close(sleapc_frame_source *src)
{
    live_video *v = src->impl;
    if (!v)
        return;
    sleapc__ffmpeg_converter_free(&v->conv);
    av_frame_free(&v->frame);
    av_packet_free(&v->pkt);
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    if (v->avio)
        av_freep(&v->avio->buffer);
    avio_context_free(&v->avio);
    if (v->own_fd)
        close(v->fd);
    sleapc__free(v);
    src->impl = NULL;
}

static const struct sleapc_frame_source_ops live_ops = {
    .kind = "live",
    .read = live_read,
    .next = live_next,
    .close = live_close,
};

sleapc_status sleapc__video_live_open(sleapc_frame_source *src)
{
    sleapc__ffmpeg_silence();
    live_video *v = sleapc__calloc(1, sizeof *v);
    if (!v)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", src->path);
    v->timeout_s = timeout_setting();
    v->fd = -1;
    v->conv.rule = src->decode;
    src->ops = &live_ops;
    src->impl = v;
    src->live = true;
    sleapc_status st = open_input(v, src->path);
    /* The decoder as the file reader sets it up, so frames match its. */
    if (!st)
        st = sleapc__ffmpeg_open_decoder(v->fmt, v->stream, src->path, &v->dec, &v->pkt,
                                         &v->frame);
    /* Frame 0 decides the size and, by sleap-io's rule, the channel count;
     * it is kept for the first read. */
    bool got = false;
    if (!st)
        st = decode_next(v, src->path, &got);
    if (!st && !got)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: no video frames", src->path);
    if (!st)
        st = convert(v, src->path);
    if (st)
        return st;
    v->have_first = true;
    src->n_frames = 0;
    src->height = v->height;
    src->width = v->width;
    src->channels =
        sleapc__frame_rgb_is_gray(v->conv.buf, (size_t)v->width * (size_t)v->height) ? 1 : 3;
    return SLEAPC_OK;
}
