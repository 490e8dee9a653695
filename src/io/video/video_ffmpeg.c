/* Video files and still images through FFmpeg's libraries: the only file that
 * includes libav* headers.
 *
 * Frame k is the k-th frame in presentation order, as the ffmpeg command line
 * outputs them. One demux pass at open (no decoding) counts the packets and
 * records their timestamps; sorted, they map each decoded frame's pts to its
 * frame number, so a read seeks to the keyframe at or before k and decodes
 * forward until the frame whose pts is k's. Sequential reads never seek.
 *
 * Pixels are converted as the reference frames were made, with
 *   ffmpeg -vf scale=in_color_matrix=bt601:flags=bicubic+accurate_rnd -pix_fmt rgb24
 * i.e. the settings libavfilter's vf_scale (FFmpeg 5.1) gives libswscale:
 * bicubic + accurate rounding, MPEG-2 chroma siting for yuv420p, BT.601
 * coefficients both ways and the source range the frame declares. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/video/frame_source.h"
#include "io/video/video_index.h"

/* The library never prints: FFmpeg's logging is turned off once, by the first
 * caller (FFmpeg's level is process-wide). */
static void silence_ffmpeg(void)
{
    static atomic_int done;
    int expected = 0;
    if (atomic_compare_exchange_strong(&done, &expected, 1))
        av_log_set_level(AV_LOG_QUIET);
}

static const char *av_reason(int err, char *buf, size_t n)
{
    if (av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "error %d", err);
    return buf;
}

/* ---- Conversion of a decoded frame to packed RGB24 (or GRAY8) ---- */

typedef struct rgb_converter {
    struct SwsContext *sws;
    int src_w, src_h, src_fmt, dst_fmt; /* what sws was built for */
    int src_range;                      /* colour range last applied; -1: none yet */
    uint8_t *buf;                       /* packed output, sleapc__aligned_alloc */
    size_t buf_size;
} rgb_converter;

static void converter_free(rgb_converter *c)
{
    sws_freeContext(c->sws);
    sleapc__aligned_free(c->buf);
    memset(c, 0, sizeof *c);
}

static sleapc_status converter_build(rgb_converter *c, const AVFrame *f, int dst_fmt,
                                     const char *what)
{
    sws_freeContext(c->sws);
    c->sws = NULL;
    if (!sws_isSupportedInput((enum AVPixelFormat)f->format))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: pixel format %s cannot be converted",
                            what, av_get_pix_fmt_name((enum AVPixelFormat)f->format));
    struct SwsContext *s = sws_alloc_context();
    if (!s)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "%s: out of memory", what);
    av_opt_set_int(s, "srcw", f->width, 0);
    av_opt_set_int(s, "srch", f->height, 0);
    av_opt_set_int(s, "src_format", f->format, 0);
    av_opt_set_int(s, "dstw", f->width, 0);
    av_opt_set_int(s, "dsth", f->height, 0);
    av_opt_set_int(s, "dst_format", dst_fmt, 0);
    av_opt_set_int(s, "sws_flags", SWS_BICUBIC | SWS_ACCURATE_RND, 0);
    /* vf_scale's "MPEG-2 chroma positions by convention" for yuv420p input. */
    if (f->format == AV_PIX_FMT_YUV420P)
        av_opt_set_int(s, "src_v_chr_pos", 128, 0);
    if (sws_init_context(s, NULL, NULL) < 0) {
        sws_freeContext(s);
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: cannot convert %dx%d %s frames", what,
                            f->width, f->height,
                            av_get_pix_fmt_name((enum AVPixelFormat)f->format));
    }
    c->sws = s;
    c->src_w = f->width;
    c->src_h = f->height;
    c->src_fmt = f->format;
    c->dst_fmt = dst_fmt;
    c->src_range = -1;
    return SLEAPC_OK;
}

/* vf_scale (in_color_matrix set) does this for every frame: BT.601 in and
 * out, the source range from the frame when it says one, the rest kept. */
static void converter_set_colorspace(rgb_converter *c, int range)
{
    int *inv = NULL, *table = NULL, src_full = 0, dst_full = 0, bright = 0, contrast = 0,
        sat = 0;
    sws_getColorspaceDetails(c->sws, &inv, &src_full, &table, &dst_full, &bright, &contrast,
                             &sat);
    if (range != AVCOL_RANGE_UNSPECIFIED)
        src_full = range == AVCOL_RANGE_JPEG;
    const int *coefs = sws_getCoefficients(SWS_CS_ITU601);
    /* Fails only for formats without YUV (nothing to set then). */
    (void)sws_setColorspaceDetails(c->sws, coefs, src_full, coefs, dst_full, bright, contrast,
                                   sat);
    c->src_range = range;
}

/* Convert f into c->buf as packed rows (width * bytes-per-pixel, no gaps). */
static sleapc_status converter_run(rgb_converter *c, const AVFrame *f, int dst_fmt,
                                   const char *what)
{
    if (f->width < 1 || f->height < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: decoded frame has no pixels", what);
    if (!c->sws || c->src_w != f->width || c->src_h != f->height || c->src_fmt != f->format ||
        c->dst_fmt != dst_fmt) {
        sleapc_status st = converter_build(c, f, dst_fmt, what);
        if (st)
            return st;
    }
    if (c->src_range != (int)f->color_range)
        converter_set_colorspace(c, (int)f->color_range);

    /* swscale's SIMD output may touch a little past a row: write to 64-byte
     * aligned rows with slack, then close the gaps. */
    size_t bpp = dst_fmt == AV_PIX_FMT_RGB24 ? 3 : 1;
    size_t row = (size_t)f->width * bpp;
    size_t stride = (row + 63) & ~(size_t)63;
    if (stride > INT_MAX || (size_t)f->height > (SIZE_MAX - 128) / stride)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: frame too large", what);
    size_t need = stride * (size_t)f->height + 128;
    if (need > c->buf_size) {
        sleapc__aligned_free(c->buf);
        c->buf_size = 0;
        c->buf = sleapc__aligned_alloc(need);
        if (!c->buf)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "%s: out of memory", what);
        c->buf_size = need;
    }
    uint8_t *dst[4] = {c->buf, NULL, NULL, NULL};
    int dst_stride[4] = {(int)stride, 0, 0, 0};
    int h = sws_scale(c->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst,
                      dst_stride);
    if (h != f->height)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: pixel conversion failed", what);
    for (int y = 1; y < f->height && stride != row; y++)
        memmove(c->buf + (size_t)y * row, c->buf + (size_t)y * stride, row);
    return SLEAPC_OK;
}

/* ---- Video files ---- */

typedef struct video {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    int stream;
    rgb_converter conv;
    sleapc_video_index ix;
    int width, height; /* of frame 0; every frame must match */
    int64_t last;      /* frame number of the decoder's last output; -1: none since the seek */
    int64_t ordinal;   /* frames output since the rewind (when !ix.by_pts) */
    int64_t n_unknown; /* frames of the last decode_until whose pts is not in the index */
    int64_t skip_before; /* pts: packets shown before it skip non-reference frames */
    int64_t n_skipped;   /* packets decoded that way by the last decode_until */
    int64_t n_seeks;     /* seeks and rewinds so far */
    bool positioned;   /* demuxer and decoder continue from `last` */
    bool draining;     /* end of input reached; the decoder was told */
    bool eof;          /* the decoder has nothing more */
    bool have_rgb;     /* conv.buf holds frame `last` */
    bool pending;      /* v->frame holds frame `last`, decoded past the one asked for */
} video;

static sleapc_status open_input(video *v, const char *path)
{
    char why[128];
    /* "file:" keeps FFmpeg from reading a path as a URL or a device, and the
     * whitelist keeps playlists from reaching out of the file system. */
    size_t n = strlen(path) + 6;
    char *url = sleapc__malloc(n);
    if (!url)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    snprintf(url, n, "file:%s", path);
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "protocol_whitelist", "file", 0);
    int ret = avformat_open_input(&v->fmt, url, NULL, &opts);
    av_dict_free(&opts);
    sleapc__free(url);
    if (ret < 0) {
        sleapc_status st = ret == AVERROR(ENOENT) || ret == AVERROR(EACCES) || ret == AVERROR(EIO)
                               ? SLEAPC_ERR_IO
                               : SLEAPC_ERR_FORMAT;
        return sleapc__fail(st, "open video: %s: not a video FFmpeg can read (%s)", path,
                            av_reason(ret, why, sizeof why));
    }
    ret = avformat_find_stream_info(v->fmt, NULL);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: unreadable streams (%s)", path,
                            av_reason(ret, why, sizeof why));
    ret = av_find_best_stream(v->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: no video stream", path);
    v->stream = ret;
    /* Audio and other streams are never needed: the demuxer skips them. */
    for (unsigned i = 0; i < v->fmt->nb_streams; i++)
        if ((int)i != v->stream)
            v->fmt->streams[i]->discard = AVDISCARD_ALL;
    return SLEAPC_OK;
}

static sleapc_status open_decoder(video *v, const char *path)
{
    const AVCodecParameters *par = v->fmt->streams[v->stream]->codecpar;
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    if (!codec)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "open video: %s: no decoder for codec %s",
                            path, avcodec_get_name(par->codec_id));
    v->dec = avcodec_alloc_context3(codec);
    v->pkt = av_packet_alloc();
    v->frame = av_frame_alloc();
    if (!v->dec || !v->pkt || !v->frame)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    if (avcodec_parameters_to_context(v->dec, par) < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: bad codec parameters", path);
    v->dec->pkt_timebase = v->fmt->streams[v->stream]->time_base;
    /* One thread: each packet is decoded inside its avcodec_send_packet,
     * which the per-packet skip_frame setting in decode_next relies on. */
    v->dec->thread_count = 1;
    char why[128];
    int ret = avcodec_open2(v->dec, codec, NULL);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: cannot open the %s decoder (%s)",
                            path, codec->name, av_reason(ret, why, sizeof why));
    return SLEAPC_OK;
}

/* The demux pass: every packet of the stream, none decoded. Packets the
 * demuxer marks for discarding (edit lists) yield no output frame. */
static sleapc_status build_index(video *v, const char *path)
{
    sleapc_status st = SLEAPC_OK;
    while (!st && av_read_frame(v->fmt, v->pkt) >= 0) {
        const AVPacket *p = v->pkt;
        if (p->stream_index == v->stream && !(p->flags & AV_PKT_FLAG_DISCARD)) {
            bool has_pts = p->pts != AV_NOPTS_VALUE;
            int64_t seek_ts = p->dts != AV_NOPTS_VALUE ? p->dts : p->pts;
            st = sleapc__video_index_add(&v->ix, has_pts, p->pts, seek_ts,
                                         (p->flags & AV_PKT_FLAG_KEY) != 0);
        }
        av_packet_unref(v->pkt);
    }
    if (st)
        return sleapc__wrap(st, "open video: %s", path);
    if (v->ix.n_frames == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: no video frames", path);
    sleapc__video_index_finish(&v->ix);
    v->positioned = false;
    return SLEAPC_OK;
}

static void reset_decoder(video *v)
{
    v->n_seeks++;
    avcodec_flush_buffers(v->dec);
    v->positioned = true;
    v->draining = false;
    v->eof = false;
    v->have_rgb = false;
    v->pending = false;
    v->last = -1;
    v->ordinal = 0;
}

/* Back to the very first packet by opening the file again: exact for every
 * demuxer, seekable or not. */
static sleapc_status rewind_input(video *v, const char *path)
{
    int stream = v->stream;
    v->positioned = false;
    avformat_close_input(&v->fmt);
    sleapc_status st = open_input(v, path);
    if (st)
        return st;
    if (v->stream != stream)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read video: %s: file changed while open", path);
    reset_decoder(v);
    return SLEAPC_OK;
}

/* Go to the keyframe at or before idx. Timestamp seeks land on the keyframe
 * whose decode timestamp is given (or an earlier one), which is enough: the
 * forward decode finds idx by its pts either way. */
static sleapc_status seek_near(video *v, const char *path, int64_t idx)
{
    int64_t k = v->ix.by_pts ? sleapc__video_index_key_for(&v->ix, idx) : -1;
    if (k < 0 || !v->fmt ||
        av_seek_frame(v->fmt, v->stream, v->ix.keys[k].seek_ts, AVSEEK_FLAG_BACKWARD) < 0)
        return rewind_input(v, path);
    reset_decoder(v);
    return SLEAPC_OK;
}

/* Next decoded frame into v->frame; *got false at the end of the stream.
 * Damaged data is skipped, as the ffmpeg command line skips it; a frame it
 * held is reported missing when asked for. */
static void decode_next(video *v, bool *got)
{
    *got = false;
    for (;;) {
        int ret = avcodec_receive_frame(v->dec, v->frame);
        if (ret == 0) {
            *got = true;
            return;
        }
        if (ret == AVERROR_EOF || v->draining) {
            v->eof = true;
            return;
        }
        /* A read error on a damaged file ends the input like end of file. */
        if (av_read_frame(v->fmt, v->pkt) < 0) {
            avcodec_send_packet(v->dec, NULL);
            v->draining = true;
            continue;
        }
        if (v->pkt->stream_index == v->stream) {
            /* Frames shown before the target are only needed as references:
             * non-reference ones are not decoded at all. The packet is
             * decoded within this send (one decoder thread), so the setting
             * applies to it alone. */
            const AVPacket *p = v->pkt;
            bool skip = v->skip_before != AV_NOPTS_VALUE && p->pts != AV_NOPTS_VALUE &&
                        p->pts < v->skip_before;
            v->dec->skip_frame = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
            v->n_skipped += skip;
            (void)avcodec_send_packet(v->dec, v->pkt);
        }
        av_packet_unref(v->pkt);
    }
}

static int64_t frame_number(video *v)
{
    if (!v->ix.by_pts)
        return v->ordinal++;
    int64_t ts = v->frame->pts != AV_NOPTS_VALUE ? v->frame->pts
                                                 : v->frame->best_effort_timestamp;
    return ts == AV_NOPTS_VALUE ? -1 : sleapc__video_index_frame_of(&v->ix, ts);
}

/* Decode forward until frame idx is in v->frame (*found), or it was passed or
 * the stream ended without it. *first: the first frame number seen (-1 if
 * none), which tells an overshooting seek from a frame missing in the file.
 * skip: let frames shown before idx skip non-reference pictures. */
static void decode_until(video *v, int64_t idx, bool skip, bool *found, int64_t *first)
{
    *found = false;
    *first = -1;
    v->n_unknown = 0;
    v->n_skipped = 0;
    v->pending = false;
    v->skip_before = skip && v->ix.by_pts ? v->ix.pts[idx] : AV_NOPTS_VALUE;
    for (;;) {
        bool got = false;
        decode_next(v, &got);
        if (!got)
            break;
        int64_t f = frame_number(v);
        if (f < 0) {
            v->n_unknown++;
            continue;
        }
        if (*first < 0)
            *first = f;
        v->last = f;
        if (f >= idx) {
            *found = f == idx;
            v->pending = f > idx;
            break;
        }
    }
    v->skip_before = AV_NOPTS_VALUE;
}

static sleapc_status convert_current(video *v, const char *path, int64_t idx)
{
    char what[64 + 4096];
    snprintf(what, sizeof what, "read video: %s: frame %lld", path, (long long)idx);
    if (v->width == 0) {
        v->width = v->frame->width;
        v->height = v->frame->height;
    } else if (v->frame->width != v->width || v->frame->height != v->height) {
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: size changed from %dx%d to %dx%d", what,
                            v->width, v->height, v->frame->width, v->frame->height);
    }
    sleapc_status st = converter_run(&v->conv, v->frame, AV_PIX_FMT_RGB24, what);
    av_frame_unref(v->frame);
    v->pending = false;
    if (st)
        return st;
    v->have_rgb = true;
    return SLEAPC_OK;
}

/* Leave frame idx, as packed RGB24, in v->conv.buf. */
static sleapc_status read_rgb(video *v, const char *path, int64_t idx)
{
    if (v->have_rgb && v->last == idx)
        return SLEAPC_OK;
    v->have_rgb = false;
    /* The frame after a missing one was already decoded while looking. */
    if (v->pending && v->last == idx)
        return convert_current(v, path, idx);
    bool forward = v->positioned && !v->eof && idx > v->last;
    if (forward && v->ix.by_pts) {
        /* A keyframe after the current position: seeking there is cheaper. */
        int64_t k = sleapc__video_index_key_for(&v->ix, idx);
        forward = k < 0 || v->ix.keys[k].frame <= v->last + 1;
    }
    bool found = false;
    int64_t first = -1;
    bool fresh = !forward; /* the last try started at a seek */
    sleapc_status st = forward ? SLEAPC_OK : seek_near(v, path, idx);
    if (!st)
        decode_until(v, idx, true, &found, &first);
    /* Skipping must never lose the frame asked for; should a container's
     * packet timestamps not be its frames', decode everything. */
    if (!st && !found && v->n_skipped > 0) {
        fresh = true;
        st = seek_near(v, path, idx);
        if (!st)
            decode_until(v, idx, false, &found, &first);
    }
    /* A seek that landed past idx (an imprecise demuxer, or an open GOP whose
     * leading frames were dropped): decode from the start instead. A frame
     * that is simply absent (damaged or truncated file) is not retried. */
    if (!st && !found && fresh && first > idx) {
        st = rewind_input(v, path);
        if (!st)
            decode_until(v, idx, false, &found, &first);
    }
    /* Only frames with timestamps the index lacks (a decoder that does not
     * pass them through): count frames in decode order from now on. */
    if (!st && !found && v->ix.by_pts && first < 0 && v->n_unknown > 0) {
        v->ix.by_pts = false;
        st = rewind_input(v, path);
        if (!st)
            decode_until(v, idx, false, &found, &first);
    }
    if (st)
        return st;
    if (!found)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read video: %s: frame %lld could not be decoded",
                            path, (long long)idx);
    return convert_current(v, path, idx);
}

/* Frame 0 is the first frame the decoder outputs from the start of the file.
 * A stream cut inside a group of pictures begins with frames that cannot be
 * decoded; the ffmpeg command line outputs none of them, so they are not
 * frames here either. */
static sleapc_status read_first_frame(video *v, const char *path)
{
    sleapc_status st = seek_near(v, path, 0);
    if (st)
        return st;
    bool found = false;
    int64_t first = -1;
    decode_until(v, 0, false, &found, &first);
    if (!found && first > 0 && v->ix.by_pts && first < v->ix.n_frames) {
        sleapc__video_index_drop_before(&v->ix, first);
        v->last = 0;
        found = true;
    }
    if (!found)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: no frame can be decoded", path);
    return convert_current(v, path, 0);
}

static sleapc_status video_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst)
{
    video *v = src->impl;
    sleapc_status st = read_rgb(v, src->path, idx);
    src->n_seeks = v->n_seeks;
    if (st)
        return st;
    sleapc__frame_rgb_to_channels(v->conv.buf, (size_t)v->width * (size_t)v->height,
                                  src->channels, dst);
    return SLEAPC_OK;
}

static void video_close(sleapc_frame_source *src)
{
    video *v = src->impl;
    if (!v)
        return;
    converter_free(&v->conv);
    av_frame_free(&v->frame);
    av_packet_free(&v->pkt);
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    sleapc__video_index_free(&v->ix);
    sleapc__free(v);
    src->impl = NULL;
}

static const struct sleapc_frame_source_ops video_ops = {
    .kind = "video",
    .read = video_read,
    .close = video_close,
};

sleapc_status sleapc__video_ffmpeg_open(sleapc_frame_source *src)
{
    silence_ffmpeg();
    video *v = sleapc__calloc(1, sizeof *v);
    if (!v)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", src->path);
    v->last = -1;
    v->skip_before = AV_NOPTS_VALUE;
    src->ops = &video_ops;
    src->impl = v;
    sleapc_status st = open_input(v, src->path);
    if (!st)
        st = open_decoder(v, src->path);
    if (!st)
        st = build_index(v, src->path);
    /* Frame 0 decides the size and, by sleap-io's rule, the channel count. */
    if (!st)
        st = read_first_frame(v, src->path);
    if (st)
        return st;
    src->n_seeks = v->n_seeks;
    src->n_frames = v->ix.n_frames;
    src->height = v->height;
    src->width = v->width;
    src->channels =
        sleapc__frame_rgb_is_gray(v->conv.buf, (size_t)v->width * (size_t)v->height) ? 1 : 3;
    return SLEAPC_OK;
}

/* ---- Still images ---- */

struct sleapc_image_decoder {
    AVPacket *pkt;
    AVFrame *frame;
    rgb_converter conv;
    uint8_t *rgb; /* packed RGB24 result */
    size_t rgb_size;
};

static enum AVCodecID sniff_codec(const uint8_t *b, size_t n)
{
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
        return AV_CODEC_ID_PNG;
    if (n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF)
        return AV_CODEC_ID_MJPEG;
    if (n >= 4 && (memcmp(b, "II*\0", 4) == 0 || memcmp(b, "MM\0*", 4) == 0))
        return AV_CODEC_ID_TIFF;
    if (n >= 2 && b[0] == 'B' && b[1] == 'M')
        return AV_CODEC_ID_BMP;
    return AV_CODEC_ID_NONE;
}

bool sleapc__image_sniff(const uint8_t *bytes, size_t n)
{
    return bytes && sniff_codec(bytes, n) != AV_CODEC_ID_NONE;
}

sleapc_status sleapc__image_decoder_create(sleapc_image_decoder **out)
{
    silence_ffmpeg();
    *out = NULL;
    sleapc_image_decoder *d = sleapc__calloc(1, sizeof *d);
    if (!d)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "decode image: out of memory");
    d->pkt = av_packet_alloc();
    d->frame = av_frame_alloc();
    if (!d->pkt || !d->frame) {
        sleapc__image_decoder_destroy(d);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "decode image: out of memory");
    }
    *out = d;
    return SLEAPC_OK;
}

void sleapc__image_decoder_destroy(sleapc_image_decoder *d)
{
    if (!d)
        return;
    av_packet_free(&d->pkt);
    av_frame_free(&d->frame);
    converter_free(&d->conv);
    sleapc__free(d->rgb);
    sleapc__free(d);
}

/* One packet in, one frame out, through a decoder opened for this image. */
static sleapc_status decode_frame(sleapc_image_decoder *d, enum AVCodecID id,
                                  const uint8_t *bytes, size_t n, const char *name)
{
    char why[128];
    const AVCodec *codec = avcodec_find_decoder(id);
    if (!codec)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "decode image: %s: no %s decoder", name,
                            avcodec_get_name(id));
    if (n > (size_t)INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "decode image: %s: too large", name);
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    if (!ctx || av_new_packet(d->pkt, (int)n) < 0) {
        avcodec_free_context(&ctx);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "decode image: %s: out of memory", name);
    }
    memcpy(d->pkt->data, bytes, n);
    int ret = avcodec_open2(ctx, codec, NULL);
    if (ret >= 0)
        ret = avcodec_send_packet(ctx, d->pkt);
    av_packet_unref(d->pkt);
    if (ret >= 0) {
        avcodec_send_packet(ctx, NULL);
        ret = avcodec_receive_frame(ctx, d->frame);
    }
    avcodec_free_context(&ctx);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "decode image: %s: corrupt %s image (%s)", name,
                            codec->name, av_reason(ret, why, sizeof why));
    return SLEAPC_OK;
}

static bool is_gray_format(int format)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return desc && desc->nb_components <= 2 && !(desc->flags & AV_PIX_FMT_FLAG_PAL);
}

sleapc_status sleapc__image_decoder_decode(sleapc_image_decoder *d, const uint8_t *bytes,
                                           size_t n, const char *name,
                                           sleapc_decoded_image *out)
{
    memset(out, 0, sizeof *out);
    enum AVCodecID id = bytes ? sniff_codec(bytes, n) : AV_CODEC_ID_NONE;
    if (id == AV_CODEC_ID_NONE)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "decode image: %s: not a PNG, JPEG, TIFF or BMP image", name);
    sleapc_status st = decode_frame(d, id, bytes, n, name);
    if (st)
        return st;
    char what[64 + 4096];
    snprintf(what, sizeof what, "decode image: %s", name);
    const AVFrame *f = d->frame;
    bool gray = is_gray_format(f->format);
    st = converter_run(&d->conv, f, gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24, what);
    size_t n_px = (size_t)f->width * (size_t)f->height;
    if (!st && n_px * 3 > d->rgb_size) {
        sleapc__free(d->rgb);
        d->rgb_size = 0;
        d->rgb = sleapc__malloc(n_px * 3);
        if (!d->rgb)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "%s: out of memory", what);
        else
            d->rgb_size = n_px * 3;
    }
    if (!st) {
        if (gray)
            for (size_t i = 0; i < n_px; i++)
                d->rgb[3 * i] = d->rgb[3 * i + 1] = d->rgb[3 * i + 2] = d->conv.buf[i];
        else
            memcpy(d->rgb, d->conv.buf, n_px * 3);
        *out = (sleapc_decoded_image){
            .rgb = d->rgb, .height = f->height, .width = f->width, .gray_format = gray};
    }
    av_frame_unref(d->frame);
    return st;
}
