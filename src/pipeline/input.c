/* sleapc_input: one frame reader over frame sources and SLEAP labels files.
 * A labels file contributes its video (a frame source opened on the video's
 * file, or the images embedded in a package) and its labeled frames. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/predictions/predictions_format.h"
#include "io/slp/slp_images.h"
#include "io/slp/slp_read.h"
#include "io/video/frame_source.h"
#include "model/model_impl.h"
#include "pipeline/frame_layout.h"
#include "pipeline/input_impl.h"
#include "pipeline/labels_instances.h"
#include "pipeline/predict_stream.h"
#include "pipeline/predictor_impl.h"

struct sleapc_input {
    char *path;
    sleapc_frame_source *src;    /* NULL for embedded images */
    sleapc_slp *labels;          /* labels file, or NULL */
    int video;                   /* the labels' video */
    sleapc_slp *images;          /* the package holding its images: labels, or
                                  * the package the labels refer to (owned) */
    int image_video;             /* the video there */
    sleapc_image_decoder *dec;   /* embedded images */
    int64_t n_frames, height, width, channels;
    int64_t *defaults;
    int64_t n_defaults;
    char *record_name;           /* the filename a predictions file records */
    const char *record_dataset;  /* and the images' dataset in it (package) */
    const char *record_source;   /* and the package's original video JSON */
    uint8_t *decoded;            /* one frame as the frame source decodes it (h, w, c) */
};

void sleapc__input_close(sleapc_input *in)
{
    if (!in)
        return;
    sleapc__frame_source_close(in->src);
    if (in->images != in->labels)
        sleapc__slp_close(in->images);
    sleapc__slp_close(in->labels);
    sleapc__image_decoder_destroy(in->dec);
    sleapc__free(in->defaults);
    sleapc__free(in->record_name);
    sleapc__aligned_free(in->decoded);
    sleapc__free(in->path);
    sleapc__free(in);
}

/* The labeled frames of the chosen video, ascending, without repeats. */
static sleapc_status labeled_frames(sleapc_input *in)
{
    const sleapc_slp *r = in->labels;
    in->defaults = sleapc__malloc((size_t)(r->n_frames > 0 ? r->n_frames : 1) * sizeof(int64_t));
    if (!in->defaults)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < r->n_frames; k++)
        if (r->frames[k].video == in->video)
            in->defaults[in->n_defaults++] = r->frames[k].frame_idx;
    /* Insertion sort: label files list frames nearly in order. */
    for (int64_t i = 1; i < in->n_defaults; i++) {
        int64_t v = in->defaults[i], j = i;
        while (j > 0 && in->defaults[j - 1] > v) {
            in->defaults[j] = in->defaults[j - 1];
            j--;
        }
        in->defaults[j] = v;
    }
    int64_t n = 0;
    for (int64_t i = 0; i < in->n_defaults; i++)
        if (n == 0 || in->defaults[n - 1] != in->defaults[i])
            in->defaults[n++] = in->defaults[i];
    in->n_defaults = n;
    return SLEAPC_OK;
}

static sleapc_status open_labels(sleapc_input *in, int video_index, sleapc_decode_rule rule)
{
    sleapc_status st = sleapc__slp_open(in->path, &in->labels);
    if (st)
        return st;
    sleapc_slp *r = in->labels;
    if (video_index < 0 || video_index >= r->n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: no video %d (the file has %d)", in->path,
                            video_index, r->n_videos);
    in->video = video_index;
    const sleapc_slp_video *v = &r->videos[video_index];
    st = labeled_frames(in);
    if (st)
        return st;
    char *file = NULL;
    if (v->embedded) {
        /* Predictions name this package and its images, as sleap-io does,
         * never "." (which would mean the predictions file itself). */
        in->images = r;
        in->image_video = video_index;
        file = sleapc__strdup(in->path);
        if (!file)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    } else if (sleapc__slp_video_in_package(r, video_index)) {
        st = sleapc__slp_open_package_video(r, video_index, &in->images, &in->image_video);
        if (!st)
            st = sleapc__slp_video_path(r, video_index, &file);
        if (st)
            return st;
    }
    if (in->images) {
        const sleapc_slp_video *iv = &in->images->videos[in->image_video];
        in->record_name = file;
        in->record_dataset = iv->embed_dataset;
        in->record_source = iv->source_json;
        /* Frames live in the package: decode one now for the shape. */
        st = sleapc__image_decoder_create(&in->dec);
        if (st)
            return st;
        return sleapc__slp_embedded_shape(in->images, in->image_video, in->dec, "", &in->height,
                                          &in->width, &in->channels, &in->n_frames);
    }
    st = sleapc__slp_video_path(r, video_index, &file);
    if (!st)
        st = sleapc__frame_source_open_rule(file, rule, &in->src);
    /* Recorded where it was found, as sleap-io records a video it found
     * beside the labels file: the predictions then open it (and --use_flow
     * reads its frames) from the same place. */
    if (!st)
        in->record_name = file;
    else
        sleapc__free(file);
    return st;
}

sleapc_status sleapc__input_open(const char *path, int video_index, sleapc_decode_rule rule,
                                 sleapc_input **out)
{
    *out = NULL;
    sleapc_input *in = sleapc__calloc(1, sizeof *in);
    if (!in || !(in->path = sleapc__strdup(path))) {
        sleapc__free(in);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open input: out of memory");
    }
    sleapc_status st;
    if (sleapc__pred_path_is_slp(path)) {
        st = open_labels(in, video_index, rule);
    } else if (sleapc__frame_source_is_live(path)) {
        /* Frames as they come: no count, no defaults; recorded by the name
         * it was opened with (sleap-nn records the source string). */
        st = video_index == 0 ? sleapc__frame_source_open_live_rule(path, rule, &in->src)
                              : sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                             "%s: --video_index applies to labels files only", path);
        if (!st && !(in->record_name = sleapc__strdup(path)))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    } else {
        st = video_index == 0 ? sleapc__frame_source_open_rule(path, rule, &in->src)
                              : sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                             "%s: --video_index applies to labels files only", path);
        if (!st && !(in->record_name = sleapc__strdup(path)))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    if (!st && in->src) {
        in->n_frames = in->src->n_frames;
        in->height = in->src->height;
        in->width = in->src->width;
        in->channels = in->src->channels;
        in->decoded = sleapc__aligned_alloc((size_t)(in->height * in->width * in->channels));
        if (!in->decoded)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        if (!st && !in->labels && !in->src->live) {
            in->defaults = sleapc__malloc((size_t)in->n_frames * sizeof(int64_t));
            if (!in->defaults)
                st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
            for (int64_t k = 0; !st && k < in->n_frames; k++)
                in->defaults[k] = k;
            in->n_defaults = in->n_frames;
        }
    }
    if (st) {
        sleapc__input_close(in);
        return st;
    }
    *out = in;
    return SLEAPC_OK;
}

int64_t sleapc__input_n_frames(const sleapc_input *in)
{
    return in->n_frames;
}

int64_t sleapc__input_n_default_frames(const sleapc_input *in)
{
    return in->n_defaults;
}

const int64_t *sleapc__input_default_frames(const sleapc_input *in)
{
    return in->defaults;
}

bool sleapc__input_is_live(const sleapc_input *in)
{
    return in->src && in->src->live;
}

sleapc_video_info sleapc__input_video_info(const sleapc_input *in)
{
    sleapc_video_info v = {0};
    v.filename = in->record_name;
    v.dataset = in->record_dataset;
    v.source_json = in->record_source;
    v.n_frames = in->n_frames;
    v.height = in->height;
    v.width = in->width;
    v.channels = in->channels;
    return v;
}

static sleapc_status input_read(void *ctx, int64_t idx, uint8_t *dst)
{
    sleapc_input *in = ctx;
    if (idx < 0 || idx >= in->n_frames)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: frame %lld is beyond the end (%lld frames)",
                            in->path, (long long)idx, (long long)in->n_frames);
    if (in->src) {
        sleapc_status st = sleapc__frame_source_read(in->src, idx, in->decoded);
        if (!st)
            sleapc__frame_to_chw(in->decoded, in->height, in->width, in->channels, dst);
        return st;
    }
    sleapc_decoded_image img;
    sleapc_status st = sleapc__slp_embedded_decode(in->images, in->image_video, idx, in->dec, "",
                                                   in->height, in->width, &img);
    if (st)
        return st;
    sleapc__frame_rgb_to_chw(img.rgb, in->height, in->width, in->channels, dst);
    return SLEAPC_OK;
}

sleapc_status sleapc__input_read(sleapc_input *in, int64_t idx, uint8_t *dst)
{
    return input_read(in, idx, dst);
}

static sleapc_status input_next(void *ctx, uint8_t *dst, bool *end)
{
    sleapc_input *in = ctx;
    sleapc_status st = sleapc__frame_source_next(in->src, in->decoded, end);
    if (!st && !*end)
        sleapc__frame_to_chw(in->decoded, in->height, in->width, in->channels, dst);
    return st;
}

/* The labels' instances of each batch, handed to the predictor. */
typedef struct given_ctx {
    sleapc_input *in;
    sleapc_predictor *p;
    float *points;
    size_t cap;
} given_ctx;

static sleapc_status given_read(void *ctx, int64_t idx, uint8_t *dst)
{
    return input_read(((given_ctx *)ctx)->in, idx, dst);
}

static sleapc_status given_before(void *ctx, const int64_t *idx, int64_t n)
{
    given_ctx *g = ctx;
    int64_t slots = 0, n_nodes = 0;
    sleapc_status st = sleapc__labels_user_points(g->in->labels, g->in->video, idx, n, &g->points,
                                                  &g->cap, &slots, &n_nodes);
    return st ? st : sleapc__predictor_give_instances(g->p, g->points, n, slots, n_nodes);
}

/* A lone centered-instance model on a labels file (sleap-nn 0.3.5's
 * use_gt_centroids): crops around the user instances of the frames that have
 * any (only_labeled_frames), each instance scored 1. */
static sleapc_status given_run(sleapc_predictor *p, sleapc_input *in, const int64_t *frames,
                               int64_t n_frames, sleapc_writer *w, const sleapc_run_opts *opts)
{
    int64_t *kept = sleapc__malloc((size_t)(n_frames > 0 ? n_frames : 1) * sizeof *kept);
    if (!kept)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    int64_t n = 0;
    for (int64_t k = 0; k < n_frames; k++)
        if (sleapc__labels_has_user(in->labels, in->video, frames[k]))
            kept[n++] = frames[k];
    if (n < n_frames)
        sleapc__log(n ? SLEAPC_LOG_INFO : SLEAPC_LOG_WARN,
                    "%s: %lld of %lld frames have user instances to crop around; the others are "
                    "not predicted (a centered-instance model alone)",
                    in->path, (long long)n, (long long)n_frames);
    given_ctx g = {.in = in, .p = p};
    sleapc_frame_reader r = {.ctx = &g, .read = given_read, .before = given_before,
                             .height = in->height, .width = in->width,
                             .channels = in->channels};
    sleapc_status st = sleapc__predictor_given_begin(p);
    if (!st && n > 0)
        st = sleapc__predict_stream(p, &r, kept, n, w, opts);
    sleapc__predictor_given_end(p);
    sleapc__free(g.points);
    sleapc__free(kept);
    return st;
}

sleapc_status sleapc__predict_input(sleapc_predictor *p, sleapc_input *in, const int64_t *frames,
                                    int64_t n_frames, sleapc_writer *w, const sleapc_run_opts *opts)
{
    bool given = in->labels && sleapc__predictor_takes_given(p);
    /* Whole frames larger than a lone centered-instance model's crop are
     * refused here too, before anything runs, naming the input. */
    sleapc_status cst =
        given ? SLEAPC_OK : sleapc__predictor_crops_only(p, in->height, in->width, in->path);
    if (cst)
        return cst;
    if (sleapc__input_is_live(in)) {
        if (frames)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s: a live source is read in order once; frames cannot be picked",
                                in->path);
        sleapc_frame_reader r = {.ctx = in, .next = input_next, .height = in->height,
                                 .width = in->width, .channels = in->channels};
        /* The abort callback also ends a wait for the next frame (io polls it). */
        return sleapc__predict_stream(p, &r, NULL, -1, w, opts);
    }
    if (!frames) {
        frames = in->defaults;
        n_frames = in->n_defaults;
    }
    for (int64_t k = 0; k < n_frames; k++)
        if (frames[k] < 0 || frames[k] >= in->n_frames)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: frame %lld is beyond the end (%lld frames)",
                                in->path, (long long)frames[k], (long long)in->n_frames);
    if (given)
        return given_run(p, in, frames, n_frames, w, opts);
    sleapc_frame_reader r = {.ctx = in, .read = input_read, .height = in->height,
                             .width = in->width, .channels = in->channels};
    return sleapc__predict_stream(p, &r, frames, n_frames, w, opts);
}
