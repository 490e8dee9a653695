/* Video files through FFmpeg: opening the container and its video stream,
 * the decoder, and the frame count and index (one demux pass at open), plus
 * the frame source that ties them to seeking and decoding
 * (video_ffmpeg_seek.c) and pixel conversion (video_ffmpeg_pixels.c).
 *
 * Frame k is the k-th frame in presentation order, as the ffmpeg command line
 * outputs them. One demux pass at open (no decoding) counts the packets and
 * records their timestamps; sorted, they map each decoded frame's pts to its
 * frame number, so a read seeks to the keyframe at or before k and decodes
 * forward until the frame whose pts is k's. Sequential reads never seek. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/video/frame_source.h"
#include "io/video/video_ffmpeg_impl.h"
#include "io/video/video_index.h"

void sleapc__ffmpeg_silence(void)
{
    static atomic_int done;
    int expected = 0;
    if (atomic_compare_exchange_strong(&done, &expected, 1))
        av_log_set_level(AV_LOG_QUIET);
}

const char *sleapc__ffmpeg_reason(int err, char *buf, size_t n)
{
    if (av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "error %d", err);
    return buf;
}

sleapc_status sleapc__ffmpeg_video_stream(AVFormatContext *fmt, const char *path, int *stream)
{
    int ret = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: no video stream", path);
    *stream = ret;
    /* Audio and other streams are never needed: the demuxer skips them. */
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        if ((int)i != ret)
            fmt->streams[i]->discard = AVDISCARD_ALL;
    return SLEAPC_OK;
}

sleapc_status sleapc__ffmpeg_open_decoder(AVFormatContext *fmt, int stream, const char *path,
                                          AVCodecContext **dec, AVPacket **pkt, AVFrame **frame)
{
    const AVCodecParameters *par = fmt->streams[stream]->codecpar;
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    if (!codec)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "open video: %s: no decoder for codec %s",
                            path, avcodec_get_name(par->codec_id));
    *dec = avcodec_alloc_context3(codec);
    *pkt = av_packet_alloc();
    *frame = av_frame_alloc();
    if (!*dec || !*pkt || !*frame)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    if (avcodec_parameters_to_context(*dec, par) < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: bad codec parameters", path);
    (*dec)->pkt_timebase = fmt->streams[stream]->time_base;
    (*dec)->thread_count = 1;
    char why[128];
    int ret = avcodec_open2(*dec, codec, NULL);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: cannot open the %s decoder (%s)",
                            path, codec->name, sleapc__ffmpeg_reason(ret, why, sizeof why));
    return SLEAPC_OK;
}

sleapc_status sleapc__ffmpeg_open_input(sleapc_ffmpeg_video *v, const char *path)
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
                            sleapc__ffmpeg_reason(ret, why, sizeof why));
    }
    ret = avformat_find_stream_info(v->fmt, NULL);
    if (ret < 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: unreadable streams (%s)", path,
                            sleapc__ffmpeg_reason(ret, why, sizeof why));
    return sleapc__ffmpeg_video_stream(v->fmt, path, &v->stream);
}

/* The demux pass: every packet of the stream, none decoded. Packets the
 * demuxer marks for discarding (edit lists) yield no output frame. */
static sleapc_status build_index(sleapc_ffmpeg_video *v, const char *path)
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

static sleapc_status video_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst)
{
    sleapc_ffmpeg_video *v = src->impl;
    sleapc_status st = sleapc__ffmpeg_read_rgb(v, src->path, idx);
    src->n_seeks = v->n_seeks;
    if (st)
        return st;
    sleapc__frame_rgb_to_channels(v->conv.buf, (size_t)v->width * (size_t)v->height,
                                  src->channels, dst);
    return SLEAPC_OK;
}

static void video_close(sleapc_frame_source *src)
{
    sleapc_ffmpeg_video *v = src->impl;
    if (!v)
        return;
    sleapc__ffmpeg_converter_free(&v->conv);
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
    sleapc__ffmpeg_silence();
    sleapc_ffmpeg_video *v = sleapc__calloc(1, sizeof *v);
    if (!v)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", src->path);
    v->last = -1;
    v->skip_before = AV_NOPTS_VALUE;
    v->conv.rule = src->decode;
    src->ops = &video_ops;
    src->impl = v;
    sleapc_status st = sleapc__ffmpeg_open_input(v, src->path);
    if (!st)
        st = sleapc__ffmpeg_open_decoder(v->fmt, v->stream, src->path, &v->dec, &v->pkt,
                                         &v->frame);
    if (!st)
        st = build_index(v, src->path);
    /* Frame 0 decides the size and, by sleap-io's rule, the channel count. */
    if (!st)
        st = sleapc__ffmpeg_read_first_frame(v, src->path);
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
