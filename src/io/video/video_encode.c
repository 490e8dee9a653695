/* Encoding with FFmpeg's libraries: PNG images and video files.
 *
 * Atomic writes: libavformat opens its output by name, so the data goes to a
 * temporary file made with mkstemp beside the target (same file system), is
 * synced, and is renamed over the target only when the trailer is written.
 *
 * Colour: lossy video is yuv420p with BT.601 coefficients and limited range,
 * tagged so, which is what the reader (video_ffmpeg.c) assumes for the way
 * back; lossless video stores RGB itself, so read-back is exact. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "io/video/ffmpeg_util.h"
#include "io/video/video_encode.h"

/* Largest side accepted; keeps every size product far from overflow and
 * inside what the encoders take. */
#define MAX_SIDE_PX 32768

static bool shape_ok(int64_t height, int64_t width, int64_t channels)
{
    return height >= 1 && width >= 1 && height <= MAX_SIDE_PX && width <= MAX_SIDE_PX &&
           (channels == 1 || channels == 3);
}

/* ---- PNG ---- */

/* Encode pixels into one PNG packet (owned by the caller). */
static sleapc_status png_encode(const char *path, const uint8_t *pixels, int height, int width,
                                int channels, AVPacket **out)
{
    char why[128];
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (!codec)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "write image: %s: FFmpeg has no PNG encoder",
                            path);
    AVCodecContext *enc = avcodec_alloc_context3(codec);
    AVFrame *frame = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    sleapc_status st = SLEAPC_OK;
    int ret = 0;
    if (!enc || !frame || !pkt) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "write image: %s: out of memory", path);
        goto done;
    }
    enc->width = width;
    enc->height = height;
    enc->pix_fmt = channels == 1 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24;
    /* Video encoders refuse to open without a time base, even for stills. */
    enc->time_base = (AVRational){1, 1};
    ret = avcodec_open2(enc, codec, NULL);
    if (ret < 0) {
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                          "write image: %s: cannot open the PNG encoder (%s)", path,
                          sleapc__ffmpeg_reason(ret, why, sizeof why));
        goto done;
    }
    frame->format = enc->pix_fmt;
    frame->width = width;
    frame->height = height;
    if (av_frame_get_buffer(frame, 0) < 0) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "write image: %s: out of memory", path);
        goto done;
    }
    size_t row = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++)
        memcpy(frame->data[0] + (size_t)y * (size_t)frame->linesize[0], pixels + (size_t)y * row,
               row);
    ret = avcodec_send_frame(enc, frame);
    if (ret >= 0)
        ret = avcodec_send_frame(enc, NULL);
    if (ret >= 0)
        ret = avcodec_receive_packet(enc, pkt);
    if (ret < 0) {
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "write image: %s: PNG encoding failed (%s)", path,
                          sleapc__ffmpeg_reason(ret, why, sizeof why));
        goto done;
    }
    *out = pkt;
    pkt = NULL;
done:
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&enc);
    return st;
}

sleapc_status sleapc__png_write(const char *path, const uint8_t *pixels, int64_t height,
                                int64_t width, int64_t channels)
{
    if (!path || !pixels)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write image: path and pixels are required");
    if (!shape_ok(height, width, channels))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write image: %s: %lldx%lldx%lld is not an image (1 or 3 channels, "
                            "sides 1..%d)",
                            path, (long long)height, (long long)width, (long long)channels,
                            MAX_SIDE_PX);
    sleapc__ffmpeg_silence();
    AVPacket *pkt = NULL;
    sleapc_status st = png_encode(path, pixels, (int)height, (int)width, (int)channels, &pkt);
    if (st)
        return st;
    sleapc_atomic_file af;
    st = sleapc__atomic_open(path, &af);
    if (!st) {
        if (fwrite(pkt->data, 1, (size_t)pkt->size, af.f) != (size_t)pkt->size) {
            st = sleapc__fail(SLEAPC_ERR_IO, "write image: %s: %s", path, strerror(errno));
            sleapc__atomic_abort(&af);
        } else {
            st = sleapc__atomic_commit(&af);
        }
    }
    av_packet_free(&pkt);
    return st;
}

/* ---- Video ---- */

struct sleapc_video_writer {
    char *path; /* owned: the target */
    char *tmp;  /* owned: the temporary file, NULL once gone */
    AVFormatContext *oc;
    AVCodecContext *enc;
    AVStream *stream;
    AVFrame *frame; /* the encoder's input, enc's pixel format */
    AVPacket *pkt;
    struct SwsContext *sws; /* packed RGB24 -> enc's pixel format */
    uint8_t *rgb;           /* staging: enc_w x enc_h RGB24 (padded, gray expanded) */
    int64_t height, width, channels;
    int enc_w, enc_h; /* coded size: even for yuv420p */
    int64_t n_written;
};

static void writer_free(sleapc_video_writer *w)
{
    if (w->oc) {
        if (w->oc->pb)
            avio_closep(&w->oc->pb);
        avformat_free_context(w->oc);
    }
    avcodec_free_context(&w->enc);
    av_frame_free(&w->frame);
    av_packet_free(&w->pkt);
    sws_freeContext(w->sws);
    sleapc__aligned_free(w->rgb);
    if (w->tmp)
        unlink(w->tmp);
    sleapc__free(w->tmp);
    sleapc__free(w->path);
    sleapc__free(w);
}

void sleapc__video_writer_discard(sleapc_video_writer *w)
{
    if (w)
        writer_free(w);
}

/* The encoder for the request: FFV1 for lossless, else libx264 when this
 * FFmpeg build has it (Debian's does), else the built-in MPEG-4 part 2. */
static const AVCodec *pick_encoder(bool lossless)
{
    if (lossless)
        return avcodec_find_encoder(AV_CODEC_ID_FFV1);
    const AVCodec *c = avcodec_find_encoder_by_name("libx264");
    return c ? c : avcodec_find_encoder(AV_CODEC_ID_MPEG4);
}

static sleapc_status open_encoder(sleapc_video_writer *w, const AVCodec *codec, AVRational rate,
                                  bool lossless)
{
    char why[128];
    AVCodecContext *enc = avcodec_alloc_context3(codec);
    if (!enc)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    w->enc = enc;
    enc->width = w->enc_w;
    enc->height = w->enc_h;
    enc->time_base = av_inv_q(rate);
    enc->framerate = rate;
    if (lossless) {
        /* FFV1's 8-bit RGB layout; exact both ways through swscale. */
        enc->pix_fmt = AV_PIX_FMT_BGR0;
    } else {
        enc->pix_fmt = AV_PIX_FMT_YUV420P;
        enc->colorspace = AVCOL_SPC_SMPTE170M;
        enc->color_range = AVCOL_RANGE_MPEG;
        if (codec->id == AV_CODEC_ID_H264) {
            /* Visually lossless at a modest size; "fast" keeps long renders quick. */
            av_opt_set(enc->priv_data, "crf", "18", 0);
            av_opt_set(enc->priv_data, "preset", "fast", 0);
        } else {
            enc->flags |= AV_CODEC_FLAG_QSCALE;
            enc->global_quality = FF_QP2LAMBDA * 3;
        }
    }
    if (w->oc->oformat->flags & AVFMT_GLOBALHEADER)
        enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int ret = avcodec_open2(enc, codec, NULL);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "write video: %s: cannot open the %s encoder for %dx%d (%s)", w->path,
                            codec->name, w->enc_w, w->enc_h, sleapc__ffmpeg_reason(ret, why, sizeof why));
    w->stream = avformat_new_stream(w->oc, NULL);
    if (!w->stream || avcodec_parameters_from_context(w->stream->codecpar, enc) < 0)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    w->stream->time_base = enc->time_base;
    w->stream->avg_frame_rate = rate;
    return SLEAPC_OK;
}

/* Packed RGB24 -> the encoder's format, BT.601 limited range for YUV. */
static sleapc_status open_converter(sleapc_video_writer *w)
{
    w->sws = sws_getContext(w->enc_w, w->enc_h, AV_PIX_FMT_RGB24, w->enc_w, w->enc_h,
                            w->enc->pix_fmt, SWS_BICUBIC | SWS_ACCURATE_RND, NULL, NULL, NULL);
    if (!w->sws)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "write video: %s: cannot convert RGB frames",
                            w->path);
    if (w->enc->pix_fmt == AV_PIX_FMT_YUV420P) {
        const int *coefs = sws_getCoefficients(SWS_CS_ITU601);
        (void)sws_setColorspaceDetails(w->sws, coefs, 1, coefs, 0, 0, 1 << 16, 1 << 16);
    }
    w->frame = av_frame_alloc();
    w->pkt = av_packet_alloc();
    if (!w->frame || !w->pkt)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    w->frame->format = w->enc->pix_fmt;
    w->frame->width = w->enc_w;
    w->frame->height = w->enc_h;
    if (av_frame_get_buffer(w->frame, 0) < 0)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    /* swscale's SIMD input loads may run a little past the last row. */
    w->rgb = sleapc__aligned_alloc((size_t)w->enc_w * (size_t)w->enc_h * 3 + 128);
    if (!w->rgb)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    return SLEAPC_OK;
}

/* mkstemp beside the target, then let libavformat write to it by name. */
static sleapc_status open_output_file(sleapc_video_writer *w)
{
    size_t n = strlen(w->path) + 16;
    w->tmp = sleapc__malloc(n);
    char *url = sleapc__malloc(n + 8);
    if (!w->tmp || !url) {
        sleapc__free(url);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    }
    snprintf(w->tmp, n, "%s.tmp.XXXXXX", w->path);
    int fd = mkstemp(w->tmp);
    if (fd < 0) {
        int err = errno;
        sleapc__free(w->tmp);
        w->tmp = NULL;
        sleapc__free(url);
        return sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path, strerror(err));
    }
    /* mkstemp creates 0600; a saved video gets the usual permissions. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    close(fd);
    /* "file:" so that a name with a colon is never read as a protocol. */
    snprintf(url, n + 8, "file:%s", w->tmp);
    char why[128];
    int ret = avio_open(&w->oc->pb, url, AVIO_FLAG_WRITE);
    sleapc__free(url);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path,
                            sleapc__ffmpeg_reason(ret, why, sizeof why));
    ret = avformat_write_header(w->oc, NULL);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_IO, "write video: %s: cannot write the header (%s)", w->path,
                            sleapc__ffmpeg_reason(ret, why, sizeof why));
    return SLEAPC_OK;
}

sleapc_status sleapc__video_writer_open(const char *path, int64_t height, int64_t width,
                                        int64_t channels, double fps, bool lossless,
                                        sleapc_video_writer **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write video: path and out are required");
    *out = NULL;
    if (!shape_ok(height, width, channels))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write video: %s: frames of %lldx%lldx%lld (need 1 or 3 channels, "
                            "sides 1..%d)",
                            path, (long long)height, (long long)width, (long long)channels,
                            MAX_SIDE_PX);
    if (!(fps > 0 && fps <= 1000))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write video: %s: frame rate %g is not in (0, 1000]", path, fps);
    sleapc__ffmpeg_silence();
    const AVOutputFormat *ofmt = av_guess_format(NULL, path, NULL);
    if (!ofmt || (ofmt->flags & AVFMT_NOFILE))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write video: %s: not a video container name (use .mp4, .mkv or .avi)",
                            path);
    const AVCodec *codec = pick_encoder(lossless);
    if (!codec)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "write video: %s: FFmpeg has no %s encoder",
                            path, lossless ? "FFV1" : "H.264 or MPEG-4");
    /* 0 is a definite no; a negative answer means the muxer cannot tell. */
    if (avformat_query_codec(ofmt, codec->id, FF_COMPLIANCE_NORMAL) == 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "write video: %s: a %s file cannot hold %s video%s", path, ofmt->name,
                            codec->name, lossless ? " (lossless needs .mkv or .avi)" : "");

    sleapc_video_writer *w = sleapc__calloc(1, sizeof *w);
    if (!w || !(w->path = sleapc__strdup(path))) {
        sleapc__free(w);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", path);
    }
    w->height = height;
    w->width = width;
    w->channels = channels;
    /* 4:2:0 chroma needs even sides; padding keeps every source pixel. */
    w->enc_w = (int)(lossless ? width : (width + 1) & ~(int64_t)1);
    w->enc_h = (int)(lossless ? height : (height + 1) & ~(int64_t)1);
    sleapc_status st = SLEAPC_OK;
    if (avformat_alloc_output_context2(&w->oc, ofmt, NULL, NULL) < 0 || !w->oc)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", path);
    AVRational rate = av_d2q(fps, 100000);
    if (!st)
        st = open_encoder(w, codec, rate, lossless);
    if (!st)
        st = open_converter(w);
    if (!st)
        st = open_output_file(w);
    if (st) {
        writer_free(w);
        return st;
    }
    *out = w;
    return SLEAPC_OK;
}

/* Hand every packet the encoder has ready to the muxer. At the end of the
 * stream (flushing) AVERROR_EOF is the normal finish. */
static sleapc_status drain(sleapc_video_writer *w)
{
    char why[128];
    for (;;) {
        int ret = avcodec_receive_packet(w->enc, w->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return SLEAPC_OK;
        if (ret < 0)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "write video: %s: encoding failed (%s)", w->path,
                                sleapc__ffmpeg_reason(ret, why, sizeof why));
        av_packet_rescale_ts(w->pkt, w->enc->time_base, w->stream->time_base);
        w->pkt->stream_index = w->stream->index;
        ret = av_interleaved_write_frame(w->oc, w->pkt);
        if (ret < 0)
            return sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path,
                                sleapc__ffmpeg_reason(ret, why, sizeof why));
    }
}

/* Copy a frame into the RGB staging buffer: gray expanded to RGB, and the
 * last column and row repeated into the padding. */
static void stage_frame(sleapc_video_writer *w, const uint8_t *src)
{
    size_t W = (size_t)w->width, EW = (size_t)w->enc_w;
    for (int64_t y = 0; y < w->enc_h; y++) {
        int64_t sy = y < w->height ? y : w->height - 1;
        const uint8_t *s = src + (size_t)sy * W * (size_t)w->channels;
        uint8_t *d = w->rgb + (size_t)y * EW * 3;
        if (w->channels == 3) {
            memcpy(d, s, W * 3);
        } else {
            for (size_t x = 0; x < W; x++)
                d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = s[x];
        }
        for (size_t x = W; x < EW; x++)
            memcpy(d + 3 * x, d + 3 * (W - 1), 3);
    }
}

sleapc_status sleapc__video_writer_write(sleapc_video_writer *w, const uint8_t *pixels)
{
    if (!w || !pixels)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write video: writer and pixels are required");
    char why[128];
    stage_frame(w, pixels);
    /* The encoder may still hold a reference to the previous frame's data. */
    if (av_frame_make_writable(w->frame) < 0)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write video: %s: out of memory", w->path);
    const uint8_t *src[4] = {w->rgb, NULL, NULL, NULL};
    int src_stride[4] = {w->enc_w * 3, 0, 0, 0};
    if (sws_scale(w->sws, src, src_stride, 0, w->enc_h, w->frame->data, w->frame->linesize) !=
        w->enc_h)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "write video: %s: pixel conversion failed", w->path);
    w->frame->pts = w->n_written;
    int ret = avcodec_send_frame(w->enc, w->frame);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "write video: %s: encoding failed (%s)", w->path,
                            sleapc__ffmpeg_reason(ret, why, sizeof why));
    w->n_written++;
    return drain(w);
}

/* fsync through a fresh descriptor: libavformat's own is closed by now. */
static bool sync_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    bool ok = fsync(fd) == 0;
    close(fd);
    return ok;
}

sleapc_status sleapc__video_writer_close(sleapc_video_writer *w)
{
    if (!w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write video: writer is required");
    char why[128];
    sleapc_status st = SLEAPC_OK;
    if (w->n_written == 0)
        st = sleapc__fail(SLEAPC_ERR_STATE, "write video: %s: no frames were written", w->path);
    int ret = 0;
    if (!st && (ret = avcodec_send_frame(w->enc, NULL)) < 0)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "write video: %s: encoding failed (%s)", w->path,
                          sleapc__ffmpeg_reason(ret, why, sizeof why));
    if (!st)
        st = drain(w);
    if (!st && (ret = av_write_trailer(w->oc)) < 0)
        st = sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path,
                          sleapc__ffmpeg_reason(ret, why, sizeof why));
    if (!st && (ret = avio_closep(&w->oc->pb)) < 0)
        st = sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path,
                          sleapc__ffmpeg_reason(ret, why, sizeof why));
    if (!st && !sync_file(w->tmp))
        st = sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path, strerror(errno));
    if (!st && rename(w->tmp, w->path) != 0)
        st = sleapc__fail(SLEAPC_ERR_IO, "write video: %s: %s", w->path, strerror(errno));
    if (!st) {
        /* Renamed: nothing left to remove. */
        sleapc__free(w->tmp);
        w->tmp = NULL;
    }
    writer_free(w);
    return st;
}

/* ---- Frame rate of an existing video ---- */

static double rate_value(AVRational r)
{
    if (r.num <= 0 || r.den <= 0)
        return 0;
    double v = av_q2d(r);
    return v > 0 && v <= 1000 ? v : 0;
}

double sleapc__video_probe_fps(const char *path)
{
    if (!path)
        return 0;
    sleapc__ffmpeg_silence();
    size_t n = strlen(path) + 6;
    char *url = sleapc__malloc(n);
    if (!url)
        return 0;
    snprintf(url, n, "file:%s", path);
    AVFormatContext *fmt = NULL;
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "protocol_whitelist", "file", 0);
    int ret = avformat_open_input(&fmt, url, NULL, &opts);
    av_dict_free(&opts);
    sleapc__free(url);
    if (ret < 0)
        return 0;
    double fps = 0;
    int s = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (s >= 0)
        fps = rate_value(fmt->streams[s]->avg_frame_rate);
    /* Containers that keep no rate in the header need a look at packets. */
    if (s >= 0 && fps == 0 && avformat_find_stream_info(fmt, NULL) >= 0) {
        fps = rate_value(fmt->streams[s]->avg_frame_rate);
        if (fps == 0)
            fps = rate_value(fmt->streams[s]->r_frame_rate);
    }
    avformat_close_input(&fmt);
    return fps;
}
