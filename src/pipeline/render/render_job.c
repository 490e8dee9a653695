/* The render job behind sleapc_render: a labels file's instances drawn on its
 * video's frames, written as one PNG or as a video. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/suffix.h"
#include "io/slp/slp_images.h"
#include "io/slp/slp_read.h"
#include "io/video/frame_source.h"
#include "io/video/video_encode.h"
#include "pipeline/render/render_draw.h"
#include "pipeline/render/render_job.h"

/* Used when neither the caller nor the source video gives a rate. */
#define DEFAULT_FPS 30.0

typedef enum out_kind { OUT_PNG, OUT_LOSSY, OUT_LOSSLESS } out_kind;

/* A labeled frame of the chosen video: its frame index and its position in
 * the labels' frame table. */
typedef struct labeled_frame {
    int64_t frame_idx;
    int64_t pos;
} labeled_frame;

typedef struct job {
    const char *out_path;
    sleapc_slp *labels;
    int video;
    sleapc_frame_source *src;  /* the frames, or NULL when embedded in labels */
    sleapc_image_decoder *dec; /* embedded images */
    sleapc_slp *images;        /* where they are: labels, or a package it names */
    int image_video;           /* the video there */
    char *video_file;          /* owned: where the frames come from (for messages, fps) */
    int64_t n_frames, height, width, channels;
    labeled_frame *labeled; /* this video's labeled frames, sorted by frame_idx */
    int64_t n_labeled;
    bool *hidden; /* per instance: a prediction a user instance replaced */
    double *xy;   /* scratch: one instance's points */
    int max_nodes;
    uint8_t *pixels; /* one source frame, HWC with `channels` */
    uint8_t *rgb;    /* the canvas, HWC RGB */
    sleapc_draw_style style;
} job;

sleapc_render_opts sleapc__render_opts_default(void)
{
    sleapc_render_opts o = {.video_index = 0, .node_radius_px = 0, .line_width_px = 0, .fps = 0};
    return o;
}

static bool out_kind_of(const char *path, out_kind *kind)
{
    if (sleapc__ends_with_nocase(path, ".png"))
        *kind = OUT_PNG;
    else if (sleapc__ends_with_nocase(path, ".mp4") || sleapc__ends_with_nocase(path, ".mov"))
        *kind = OUT_LOSSY;
    else if (sleapc__ends_with_nocase(path, ".mkv") || sleapc__ends_with_nocase(path, ".avi"))
        *kind = OUT_LOSSLESS;
    else
        return false;
    return true;
}

static void job_free(job *j)
{
    sleapc__frame_source_close(j->src);
    sleapc__image_decoder_destroy(j->dec);
    if (j->images != j->labels)
        sleapc__slp_close(j->images);
    sleapc__slp_close(j->labels);
    sleapc__free(j->video_file);
    sleapc__free(j->labeled);
    sleapc__free(j->hidden);
    sleapc__free(j->xy);
    sleapc__aligned_free(j->pixels);
    sleapc__aligned_free(j->rgb);
}

static int cmp_labeled(const void *pa, const void *pb)
{
    const labeled_frame *a = pa, *b = pb;
    if (a->frame_idx != b->frame_idx)
        return a->frame_idx < b->frame_idx ? -1 : 1;
    /* Ties keep file order, so instances draw in a stable order. */
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The labeled frames of the chosen video sorted by frame index, and which
 * predictions are hidden (SLEAP's LabeledFrame.instances_to_show leaves out
 * predictions that a user instance was corrected from). */
static sleapc_status index_labels(job *j)
{
    const sleapc_slp *r = j->labels;
    j->labeled = sleapc__malloc((size_t)(r->n_frames > 0 ? r->n_frames : 1) * sizeof *j->labeled);
    j->hidden = sleapc__calloc((size_t)(r->n_instances > 0 ? r->n_instances : 1), sizeof(bool));
    for (int s = 0; s < r->n_skeletons; s++)
        j->max_nodes =
            r->skeletons[s].n_nodes > j->max_nodes ? r->skeletons[s].n_nodes : j->max_nodes;
    j->xy = sleapc__malloc((size_t)(j->max_nodes > 0 ? j->max_nodes : 1) * 2 * sizeof(double));
    if (!j->labeled || !j->hidden || !j->xy)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "render: out of memory");
    for (int64_t k = 0; k < r->n_frames; k++)
        if (r->frames[k].video == j->video)
            j->labeled[j->n_labeled++] = (labeled_frame){r->frames[k].frame_idx, k};
    qsort(j->labeled, (size_t)j->n_labeled, sizeof *j->labeled, cmp_labeled);
    for (int64_t i = 0; i < r->n_instances; i++) {
        int64_t from = r->instances[i].from_predicted;
        if (!r->instances[i].predicted && from >= 0 && from < r->n_instances)
            j->hidden[from] = true;
    }
    return SLEAPC_OK;
}

/* Where the frames come from: the caller's video, the labels' images
 * embedded in the package (this file, or the package it names, as
 * predictions made from a package do), or the video file the labels name. */
static sleapc_status open_frames(job *j, const char *video_path)
{
    sleapc_slp *r = j->labels;
    const sleapc_slp_video *v = &r->videos[j->video];
    sleapc_status st;
    if (!video_path && v->embedded) {
        j->images = r;
        j->image_video = j->video;
    } else if (!video_path && sleapc__slp_video_in_package(r, j->video)) {
        st = sleapc__slp_open_package_video(r, j->video, &j->images, &j->image_video);
        if (st)
            return sleapc__wrap(st, "render");
    }
    if (j->images) {
        st = sleapc__image_decoder_create(&j->dec);
        if (st)
            return st;
        return sleapc__slp_embedded_shape(j->images, j->image_video, j->dec, "render: ", &j->height,
                                          &j->width, &j->channels, &j->n_frames);
    }
    if (video_path) {
        if (!(j->video_file = sleapc__strdup(video_path)))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "render: out of memory");
    } else if ((st = sleapc__slp_video_path(r, j->video, &j->video_file))) {
        return st;
    }
    st = sleapc__frame_source_open(j->video_file, &j->src);
    if (st)
        return st;
    j->n_frames = j->src->n_frames;
    j->height = j->src->height;
    j->width = j->src->width;
    j->channels = j->src->channels;
    return SLEAPC_OK;
}

static sleapc_status read_frame(job *j, int64_t idx)
{
    if (j->src)
        return sleapc__frame_source_read(j->src, idx, j->pixels);
    sleapc_decoded_image img;
    sleapc_status st = sleapc__slp_embedded_decode(j->images, j->image_video, idx, j->dec,
                                                   "render: ", j->height, j->width, &img);
    if (st)
        return st;
    sleapc__frame_rgb_to_channels(img.rgb, (size_t)(j->height * j->width), j->channels, j->pixels);
    return SLEAPC_OK;
}

/* First position in j->labeled whose frame index is >= idx. */
static int64_t lower_bound(const job *j, int64_t idx)
{
    int64_t lo = 0, hi = j->n_labeled;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (j->labeled[mid].frame_idx < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void draw_instances(job *j, int64_t idx)
{
    const sleapc_slp *r = j->labels;
    sleapc_draw_image img = {.rgb = j->rgb, .height = j->height, .width = j->width};
    int64_t shown = 0;
    for (int64_t k = lower_bound(j, idx); k < j->n_labeled && j->labeled[k].frame_idx == idx; k++) {
        const sleapc_slp_frame *f = &r->frames[j->labeled[k].pos];
        for (int64_t i = f->first_instance; i < f->first_instance + f->n_instances; i++) {
            if (j->hidden[i])
                continue;
            const sleapc_slp_instance *in = &r->instances[i];
            const sleapc_slp_skeleton *sk = &r->skeletons[in->skeleton];
            int n = in->n_points < sk->n_nodes ? in->n_points : sk->n_nodes;
            if (in->first_point < 0 || in->first_point + n > r->n_points)
                continue;
            for (int q = 0; q < n; q++) {
                const sleapc_slp_point *p = &r->points[in->first_point + q];
                /* Invisible user points are not drawn, like missing ones. */
                j->xy[2 * q] = p->visible ? p->x : NAN;
                j->xy[2 * q + 1] = p->visible ? p->y : NAN;
            }
            uint8_t rgb[3];
            sleapc__draw_color(in->track >= 0 ? in->track : shown, rgb);
            sleapc__draw_pose(&img, j->xy, n, (const int(*)[2])sk->edges, sk->n_edges, &j->style,
                              rgb);
            shown++;
        }
    }
}

/* Frame idx with its instances into j->rgb. */
static sleapc_status render_frame(job *j, int64_t idx)
{
    sleapc_status st = read_frame(j, idx);
    if (st)
        return st;
    size_t n_px = (size_t)(j->height * j->width);
    if (j->channels == 3) {
        memcpy(j->rgb, j->pixels, n_px * 3);
    } else {
        for (size_t k = 0; k < n_px; k++)
            j->rgb[3 * k] = j->rgb[3 * k + 1] = j->rgb[3 * k + 2] = j->pixels[k];
    }
    draw_instances(j, idx);
    return SLEAPC_OK;
}

/* Frames drawn into a video; a stop request ends it after the current frame,
 * the video closed with what was drawn (nothing drawn: no file). */
static sleapc_status render_video(job *j, const int64_t *frames, int64_t n_frames, double fps,
                                  bool lossless)
{
    sleapc_video_writer *w = NULL;
    sleapc_status st =
        sleapc__video_writer_open(j->out_path, j->height, j->width, 3, fps, lossless, &w);
    int64_t k = 0;
    for (; !st && k < n_frames && !sleapc__interrupted(); k++) {
        st = render_frame(j, frames[k]);
        if (!st)
            st = sleapc__video_writer_write(w, j->rgb);
    }
    if (st || k == 0) {
        sleapc__video_writer_discard(w);
        if (!st)
            st = sleapc__fail(SLEAPC_ERR_INTERRUPTED, "render: %s: interrupted before the first "
                                                      "frame; nothing written",
                              j->out_path);
        return st;
    }
    st = sleapc__video_writer_close(w);
    if (!st && k < n_frames)
        st = sleapc__fail(SLEAPC_ERR_INTERRUPTED, "render: interrupted after %lld of %lld frames",
                          (long long)k, (long long)n_frames);
    return st;
}

/* The labeled frames of the video, ascending, each once. */
static sleapc_status default_frames(const job *j, int64_t **out, int64_t *n_out)
{
    int64_t *list = sleapc__malloc((size_t)(j->n_labeled > 0 ? j->n_labeled : 1) * sizeof *list);
    if (!list)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "render: out of memory");
    int64_t n = 0;
    for (int64_t k = 0; k < j->n_labeled; k++) {
        int64_t f = j->labeled[k].frame_idx;
        if (n == 0 || list[n - 1] != f)
            list[n++] = f;
    }
    *out = list;
    *n_out = n;
    return SLEAPC_OK;
}

static sleapc_status render_frames(job *j, const int64_t *frames, int64_t n_frames,
                                   const sleapc_render_opts *o, out_kind kind)
{
    const char *source = j->video_file ? j->video_file
                         : j->images   ? j->images->path
                                       : j->labels->path;
    if (n_frames < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "render: %s: no frames to render", j->out_path);
    for (int64_t k = 0; k < n_frames; k++)
        if (frames[k] < 0 || frames[k] >= j->n_frames)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "render: %s: frame %lld is not in 0..%lld",
                                source, (long long)frames[k], (long long)j->n_frames - 1);
    j->style = sleapc__draw_style_for(j->height, j->width);
    if (o->node_radius_px > 0)
        j->style.node_radius_px = o->node_radius_px;
    if (o->line_width_px > 0)
        j->style.line_width_px = o->line_width_px;
    size_t n_px = (size_t)j->height * (size_t)j->width;
    j->pixels = sleapc__aligned_alloc(n_px * (size_t)j->channels);
    j->rgb = sleapc__aligned_alloc(n_px * 3);
    if (!j->pixels || !j->rgb)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "render: %s: out of memory for %lldx%lld frames",
                            source, (long long)j->height, (long long)j->width);
    if (kind == OUT_PNG) {
        sleapc_status st = render_frame(j, frames[0]);
        return st ? st : sleapc__png_write(j->out_path, j->rgb, j->height, j->width, 3);
    }
    double fps = o->fps;
    if (!(fps > 0) && j->video_file)
        fps = sleapc__video_probe_fps(j->video_file);
    if (!(fps > 0))
        fps = DEFAULT_FPS;
    return render_video(j, frames, n_frames, fps, kind == OUT_LOSSLESS);
}

sleapc_status sleapc__render(const char *labels_path, const char *video_path, const char *out_path,
                             const int64_t *frames, int64_t n_frames, const sleapc_render_opts *opts)
{
    out_kind kind;
    if (!out_kind_of(out_path, &kind))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "render: %s: the output must be .png (one frame), .mp4/.mov (video) "
                            "or .mkv/.avi (lossless video)",
                            out_path);
    sleapc_render_opts o = opts ? *opts : sleapc__render_opts_default();
    job j = {.out_path = out_path};
    int64_t *list = NULL;
    sleapc_status st = sleapc__slp_open(labels_path, &j.labels);
    if (!st && (o.video_index < 0 || o.video_index >= j.labels->n_videos))
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "render: %s: no video %d (the file has %d)",
                          labels_path, o.video_index, j.labels->n_videos);
    j.video = o.video_index;
    if (!st)
        st = index_labels(&j);
    if (!st)
        st = open_frames(&j, video_path);
    if (!st && !frames) {
        if (j.n_labeled == 0)
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                              "render: %s: video %d has no labeled frames (name the frames)",
                              labels_path, j.video);
        else
            st = default_frames(&j, &list, &n_frames);
        frames = list;
    }
    if (!st)
        st = render_frames(&j, frames, n_frames, &o, kind);
    sleapc__free(list);
    job_free(&j);
    return st;
}
