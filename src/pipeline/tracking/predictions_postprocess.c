/* Filters and tracking after inference, with the video frames optical flow
 * needs (see predictions_track.h). */
#include "pipeline/tracking/predictions_track.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/video/frame_source.h"

/* Frames of the predictions' videos for optical flow, opened on first use:
 * the stored path, else the same name beside the predictions file. */
struct sleapc_video_frames {
    const sleapc_predictions *pr;
    const char *near_path;
    sleapc_frame_source **src; /* per video */
    uint8_t *pixels, *gray;
    size_t cap;
};
typedef struct sleapc_video_frames video_frames;

static sleapc_status open_video(video_frames *vf, int video)
{
    const char *stored = vf->pr->videos[video].filename;
    if (sleapc__frame_source_open(stored, &vf->src[video]) == SLEAPC_OK)
        return SLEAPC_OK;
    if (!vf->near_path)
        return sleapc__fail(SLEAPC_ERR_IO, "--use_flow needs the frames of video \"%s\": cannot open it",
                            stored);
    const char *slash = strrchr(vf->near_path, '/'), *base = strrchr(stored, '/');
    const size_t dir = slash ? (size_t)(slash - vf->near_path + 1) : 0;
    base = base ? base + 1 : stored;
    char *alt = sleapc__malloc(dir + strlen(base) + 1);
    if (!alt)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    memcpy(alt, vf->near_path, dir);
    strcpy(alt + dir, base);
    sleapc_status st = sleapc__frame_source_open(alt, &vf->src[video]);
    sleapc__free(alt);
    if (st)
        return sleapc__fail(SLEAPC_ERR_IO,
                            "--use_flow needs the frames of video \"%s\", which was found "
                            "neither there nor beside %s",
                            stored, vf->near_path);
    return SLEAPC_OK;
}

/* sleapc_track_images.gray: the frame's first channel (grayscale videos
 * are stored as one channel; see docs/tracking.md for colour videos). */
static sleapc_status video_gray(void *ctx, int video, int64_t frame_idx, const uint8_t **gray,
                                int64_t *height, int64_t *width)
{
    video_frames *vf = ctx;
    sleapc_status st;
    if (!vf->src[video] && (st = open_video(vf, video)))
        return st;
    sleapc_frame_source *src = vf->src[video];
    const size_t n = sleapc__frame_source_frame_bytes(src), px = (size_t)(src->height * src->width);
    if (n + px > vf->cap) {
        uint8_t *b = sleapc__realloc(vf->pixels, n + px);
        if (!b)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        vf->pixels = b;
        vf->cap = n + px;
    }
    vf->gray = vf->pixels + n;
    if ((st = sleapc__frame_source_read(src, frame_idx, vf->pixels)))
        return st;
    for (size_t i = 0; i < px; i++)
        vf->gray[i] = vf->pixels[i * (size_t)src->channels];
    *gray = vf->gray;
    *height = src->height;
    *width = src->width;
    return SLEAPC_OK;
}

sleapc_status sleapc__video_frames_open(const sleapc_predictions *head, const char *near_path,
                                       sleapc_video_frames **out, sleapc_track_images *images)
{
    *out = NULL;
    sleapc_video_frames *vf = sleapc__calloc(1, sizeof *vf);
    if (!vf || !(vf->src = sleapc__calloc((size_t)head->n_videos + 1, sizeof *vf->src))) {
        sleapc__free(vf);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    vf->pr = head;
    vf->near_path = near_path;
    *images = (sleapc_track_images){.ctx = vf, .gray = video_gray};
    *out = vf;
    return SLEAPC_OK;
}

void sleapc__video_frames_close(sleapc_video_frames *vf)
{
    if (!vf)
        return;
    for (int v = 0; v < vf->pr->n_videos; v++)
        sleapc__frame_source_close(vf->src[v]);
    sleapc__free(vf->src);
    sleapc__free(vf->pixels);
    sleapc__free(vf);
}

sleapc_status sleapc__predictions_postprocess(sleapc_predictions *pr,
                                              const sleapc_filter_config *filters,
                                              const sleapc_tracker_opts *to,
                                              const char *near_path)
{
    sleapc_status st = filters ? sleapc__predictions_filter(pr, filters) : SLEAPC_OK;
    if (st || !to)
        return st;
    sleapc_video_frames *vf = NULL;
    sleapc_track_images images = {0};
    if (to->use_flow && (st = sleapc__video_frames_open(pr, near_path, &vf, &images)))
        return st;
    st = sleapc__predictions_track(pr, to, to->use_flow ? &images : NULL);
    sleapc__video_frames_close(vf);
    return st;
}
