/* Seeking and decoding for the FFmpeg frame reader: positioning the demuxer
 * at the keyframe before a frame (or rewinding), decoding forward to the
 * frame whose pts is the one asked for, the retries when a seek overshoots or
 * skipping loses the frame, and frame 0's rule at open. */
#include <stdio.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/frame.h>

#include "core/error.h"
#include "io/video/video_ffmpeg_impl.h"
#include "io/video/video_index.h"

static void reset_decoder(sleapc_ffmpeg_video *v)
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
static sleapc_status rewind_input(sleapc_ffmpeg_video *v, const char *path)
{
    int stream = v->stream;
    v->positioned = false;
    avformat_close_input(&v->fmt);
    sleapc_status st = sleapc__ffmpeg_open_input(v, path);
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
static sleapc_status seek_near(sleapc_ffmpeg_video *v, const char *path, int64_t idx)
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
static void decode_next(sleapc_ffmpeg_video *v, bool *got)
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

static int64_t frame_number(sleapc_ffmpeg_video *v)
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
static void decode_until(sleapc_ffmpeg_video *v, int64_t idx, bool skip, bool *found,
                         int64_t *first)
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

static sleapc_status convert_current(sleapc_ffmpeg_video *v, const char *path, int64_t idx)
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
    sleapc_status st = sleapc__ffmpeg_converter_run(&v->conv, v->frame, AV_PIX_FMT_RGB24, what);
    av_frame_unref(v->frame);
    v->pending = false;
    if (st)
        return st;
    v->have_rgb = true;
    return SLEAPC_OK;
}

/* Leave frame idx, as packed RGB24, in v->conv.buf. */
sleapc_status sleapc__ffmpeg_read_rgb(sleapc_ffmpeg_video *v, const char *path, int64_t idx)
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
sleapc_status sleapc__ffmpeg_read_first_frame(sleapc_ffmpeg_video *v, const char *path)
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
