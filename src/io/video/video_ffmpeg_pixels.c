/* Pixels out of FFmpeg: decoded frames converted to packed RGB24 (or GRAY8),
 * and still images (PNG, JPEG, TIFF, BMP) decoded and converted the same way,
 * gray formats kept gray (sleap-io's grayscale rule).
 *
 * Video frames are converted as libavfilter's vf_scale (FFmpeg 5.1) converts
 * them, by one of two rules (sleapc_decode_rule):
 *   FFMPEG_DEFAULT  ffmpeg -i V -pix_fmt rgb24: the colour matrix of the
 *                   frame's tag, swscale's default bicubic flags. sleap-io
 *                   0.9.5 gives these frames.
 *   BT601_ACCURATE  ffmpeg -vf scale=in_color_matrix=bt601:flags=bicubic+accurate_rnd
 *                   (how the sleap-nn 0.3.3 reference frames were made).
 * Both: MPEG-2 chroma siting for yuv420p and the source range the frame
 * declares. Still images keep the second rule. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/video/frame_source.h"
#include "io/video/video_ffmpeg_impl.h"

/* ---- Conversion of a decoded frame to packed RGB24 (or GRAY8) ---- */

void sleapc__ffmpeg_converter_free(sleapc_ffmpeg_converter *c)
{
    sws_freeContext(c->sws);
    sleapc__aligned_free(c->buf);
    sleapc_decode_rule rule = c->rule;
    memset(c, 0, sizeof *c);
    c->rule = rule;
}

static sleapc_status converter_build(sleapc_ffmpeg_converter *c, const AVFrame *f, int dst_fmt,
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
    av_opt_set_int(s, "sws_flags",
                   c->rule == SLEAPC_DECODE_BT601_ACCURATE ? SWS_BICUBIC | SWS_ACCURATE_RND
                                                           : SWS_BICUBIC,
                   0);
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
    c->src_space = -1;
    return SLEAPC_OK;
}

/* vf_scale's parse_yuv_type: the coefficients of a colour matrix tag, with
 * the tags swscale has no table for read as BT.601 (BT.470BG). */
static const int *tagged_coefficients(int space)
{
    if (space < 1 || space > 10 || space == 8)
        space = AVCOL_SPC_BT470BG;
    return sws_getCoefficients(space);
}

/* vf_scale does this for every frame: the input matrix (BT.601 forced, or
 * the frame's tag) both ways, the source range from the frame when it says
 * one, the rest kept. */
static void converter_set_colorspace(sleapc_ffmpeg_converter *c, int range, int space)
{
    int *inv = NULL, *table = NULL, src_full = 0, dst_full = 0, bright = 0, contrast = 0,
        sat = 0;
    sws_getColorspaceDetails(c->sws, &inv, &src_full, &table, &dst_full, &bright, &contrast,
                             &sat);
    if (range != AVCOL_RANGE_UNSPECIFIED)
        src_full = range == AVCOL_RANGE_JPEG;
    const int *coefs = c->rule == SLEAPC_DECODE_BT601_ACCURATE
                           ? sws_getCoefficients(SWS_CS_ITU601)
                           : tagged_coefficients(space);
    /* Fails only for formats without YUV (nothing to set then). */
    (void)sws_setColorspaceDetails(c->sws, coefs, src_full, coefs, dst_full, bright, contrast,
                                   sat);
    c->src_range = range;
    c->src_space = space;
}

/* Convert f into c->buf as packed rows (width * bytes-per-pixel, no gaps). */
sleapc_status sleapc__ffmpeg_converter_run(sleapc_ffmpeg_converter *c, const AVFrame *f,
                                           int dst_fmt, const char *what)
{
    if (f->width < 1 || f->height < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: decoded frame has no pixels", what);
    if (!c->sws || c->src_w != f->width || c->src_h != f->height || c->src_fmt != f->format ||
        c->dst_fmt != dst_fmt) {
        sleapc_status st = converter_build(c, f, dst_fmt, what);
        if (st)
            return st;
    }
    if (c->src_range != (int)f->color_range || c->src_space != (int)f->colorspace)
        converter_set_colorspace(c, (int)f->color_range, (int)f->colorspace);

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

/* ---- Still images ---- */

struct sleapc_image_decoder {
    AVPacket *pkt;
    AVFrame *frame;
    sleapc_ffmpeg_converter conv;
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
    sleapc__ffmpeg_silence();
    *out = NULL;
    sleapc_image_decoder *d = sleapc__calloc(1, sizeof *d);
    if (!d)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "decode image: out of memory");
    d->conv.rule = SLEAPC_DECODE_BT601_ACCURATE;
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
    sleapc__ffmpeg_converter_free(&d->conv);
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
                            codec->name, sleapc__ffmpeg_reason(ret, why, sizeof why));
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
    st = sleapc__ffmpeg_converter_run(&d->conv, f, gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24,
                                      what);
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
