/* Reading a .slp file: metadata, JSON lists and the four tables, checked
 * against each other so that every index handed out is valid. Mirrors
 * sleap-io read_labels, including the version rules of formats D.7. */
#include "io/slp/slp_read.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/slp/slp_read_impl.h"
#include "io/slp/slp_schema.h"

#define FAIL_FORMAT(...) sleapc__fail(SLEAPC_ERR_FORMAT, "read labels: %s: " __VA_ARGS__)

static sleapc_status nomem(const sleapc_slp *r)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", r->path);
}

/* A list of JSON rows; absent datasets are empty lists (optional ones). */
static sleapc_status read_rows(sleapc_slp *r, sleapc_h5 *f, const char *name, bool required,
                               char ***rows, int64_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!sleapc__h5_is_dataset(f, name)) {
        if (required)
            return FAIL_FORMAT("no /%s dataset", r->path, name);
        return SLEAPC_OK;
    }
    return sleapc__h5_read_strings(f, name, rows, n);
}

static sleapc_status read_lists(sleapc_slp *r, sleapc_h5 *f)
{
    char **rows = NULL;
    int64_t n = 0;
    sleapc_status st = read_rows(r, f, "videos_json", true, &rows, &n);
    if (!st && n > 1000000)
        st = FAIL_FORMAT("%lld videos", r->path, (long long)n);
    if (!st && !(r->videos = sleapc__calloc((size_t)n + 1, sizeof *r->videos)))
        st = nomem(r);
    for (int64_t i = 0; !st && i < n; i++) {
        r->n_videos = (int)i + 1;
        st = sleapc__slp_parse_video(r, (int)i, rows[i], &r->videos[i]);
        if (!st)
            st = sleapc__slp_read_embedded_info(r, f, &r->videos[i]);
    }
    sleapc__h5_free_strings(rows, n);
    if (st)
        return st;
    st = read_rows(r, f, "tracks_json", false, &rows, &n);
    if (!st && n > 10000000)
        st = FAIL_FORMAT("%lld tracks", r->path, (long long)n);
    if (!st && !(r->track_names = sleapc__calloc((size_t)n + 1, sizeof *r->track_names)))
        st = nomem(r);
    for (int64_t i = 0; !st && i < n; i++) {
        r->n_tracks = (int)i + 1;
        st = sleapc__slp_parse_track(r, (int)i, rows[i], &r->track_names[i]);
    }
    sleapc__h5_free_strings(rows, n);
    if (st)
        return st;
    st = read_rows(r, f, "suggestions_json", false, &rows, &n);
    if (!st && n > 100000000)
        st = FAIL_FORMAT("%lld suggestions", r->path, (long long)n);
    if (!st && !(r->suggestions = sleapc__calloc((size_t)n + 1, sizeof *r->suggestions)))
        st = nomem(r);
    for (int64_t i = 0; !st && i < n; i++) {
        r->n_suggestions = (int)i + 1;
        st = sleapc__slp_parse_suggestion(r, (int)i, rows[i], &r->suggestions[i]);
    }
    sleapc__h5_free_strings(rows, n);
    return st;
}

/* sleap-io 0.9 keeps the provenance in a dataset of its own (the metadata
 * JSON's copy may be dropped for size) and reads it first. Its text is
 * kept as stored, so that numbers such as 1.0 are written back unchanged;
 * one that is not a JSON object leaves the metadata's copy. */
static sleapc_status read_provenance(sleapc_slp *r, sleapc_h5 *f)
{
    char **rows = NULL;
    int64_t n = 0;
    sleapc_status st = sleapc__h5_read_strings(f, "provenance_json", &rows, &n);
    if (st)
        return st;
    cJSON *root = n == 1 ? cJSON_Parse(rows[0]) : NULL;
    if (cJSON_IsObject(root)) {
        char *text = sleapc__strdup(rows[0]);
        if (!text)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", r->path);
        else {
            sleapc__free(r->provenance);
            r->provenance = text;
        }
    }
    cJSON_Delete(root);
    sleapc__h5_free_strings(rows, n);
    return st;
}

static sleapc_status read_metadata(sleapc_slp *r, sleapc_h5 *f)
{
    if (!sleapc__h5_is_group(f, "metadata"))
        return FAIL_FORMAT("no /metadata group", r->path);
    sleapc_status st = sleapc__h5_attr_double(f, "metadata", "format_id", &r->format_id);
    char *json = NULL;
    if (!st)
        st = sleapc__h5_attr_string(f, "metadata", "json", &json);
    if (!st)
        st = sleapc__slp_parse_metadata(r, json);
    sleapc__free(json);
    if (!st && sleapc__h5_is_dataset(f, "provenance_json"))
        st = read_provenance(r, f);
    return st;
}

/* Old package files number frames.video by their video<N> group instead of
 * the videos_json row (formats D.7): map id N to the video whose dataset is
 * "video<N>/...". Applied only when some id is not a row index. */
static sleapc_status map_video_id(const sleapc_slp *r, uint64_t id, bool sparse, int *out)
{
    if (!sparse) {
        *out = (int)id;
        return SLEAPC_OK;
    }
    char prefix[32];
    snprintf(prefix, sizeof prefix, "video%llu/", (unsigned long long)id);
    for (int i = 0; i < r->n_videos; i++) {
        const char *ds = r->videos[i].dataset;
        if (ds && ds[0] == '/')
            ds++;
        if (ds && strncmp(ds, prefix, strlen(prefix)) == 0) {
            *out = i;
            return SLEAPC_OK;
        }
    }
    return FAIL_FORMAT("/frames: video id %llu matches no video", r->path, (unsigned long long)id);
}

static sleapc_status build_frames(sleapc_slp *r, const sleapc_slp_frame_rec *fr, int64_t n)
{
    bool sparse = false;
    for (int64_t k = 0; k < n; k++)
        sparse = sparse || fr[k].video >= (uint64_t)r->n_videos;
    if (!(r->frames = sleapc__calloc((size_t)n + 1, sizeof *r->frames)))
        return nomem(r);
    for (int64_t k = 0; k < n; k++) {
        sleapc_slp_frame *d = &r->frames[k];
        if (fr[k].instance_id_start > fr[k].instance_id_end ||
            fr[k].instance_id_end > (uint64_t)r->n_instances || fr[k].frame_idx > INT64_MAX)
            return FAIL_FORMAT("/frames[%lld]: instance range [%llu, %llu) outside the %lld "
                               "instances",
                               r->path, (long long)k, (unsigned long long)fr[k].instance_id_start,
                               (unsigned long long)fr[k].instance_id_end,
                               (long long)r->n_instances);
        sleapc_status st = map_video_id(r, fr[k].video, sparse, &d->video);
        if (st)
            return st;
        d->frame_idx = (int64_t)fr[k].frame_idx;
        d->first_instance = (int64_t)fr[k].instance_id_start;
        d->n_instances = (int64_t)(fr[k].instance_id_end - fr[k].instance_id_start);
    }
    r->n_frames = n;
    return SLEAPC_OK;
}

static sleapc_status build_instances(sleapc_slp *r, const sleapc_slp_instance_rec *in, int64_t n,
                                     int64_t n_user, int64_t n_pred)
{
    if (!(r->instances = sleapc__calloc((size_t)n + 1, sizeof *r->instances)))
        return nomem(r);
    r->n_instances = n;
    for (int64_t i = 0; i < n; i++) {
        const sleapc_slp_instance_rec *s = &in[i];
        sleapc_slp_instance *d = &r->instances[i];
        bool pred = s->instance_type == SLEAPC_SLP_INSTANCE_PREDICTED;
        int64_t table = pred ? n_pred : n_user;
        if (s->instance_type > SLEAPC_SLP_INSTANCE_PREDICTED ||
            s->skeleton >= (uint32_t)r->n_skeletons || s->track < -1 || s->track >= r->n_tracks ||
            s->from_predicted < -1 || s->from_predicted >= n)
            return FAIL_FORMAT("/instances[%lld]: bad type, skeleton, track or from_predicted",
                               r->path, (long long)i);
        int n_nodes = r->skeletons[s->skeleton].n_nodes;
        if (s->point_id_start > s->point_id_end || s->point_id_end > (uint64_t)table ||
            s->point_id_end - s->point_id_start != (uint64_t)n_nodes)
            return FAIL_FORMAT("/instances[%lld]: point range [%llu, %llu) does not hold the %d "
                               "nodes of skeleton %u",
                               r->path, (long long)i, (unsigned long long)s->point_id_start,
                               (unsigned long long)s->point_id_end, n_nodes, s->skeleton);
        d->predicted = pred;
        d->skeleton = (int)s->skeleton;
        d->track = s->track;
        d->from_predicted = s->from_predicted;
        d->score = s->score;
        d->tracking_score = s->tracking_score;
        /* One point array: user points first, then predicted points. */
        d->first_point = (int64_t)s->point_id_start + (pred ? n_user : 0);
        d->n_points = n_nodes;
    }
    return SLEAPC_OK;
}

static sleapc_status build_points(sleapc_slp *r, const sleapc_slp_point_rec *user, int64_t n_user,
                                  const sleapc_slp_point_rec *pred, int64_t n_pred)
{
    int64_t n = n_user + n_pred;
    if (!(r->points = sleapc__calloc((size_t)n + 1, sizeof *r->points)))
        return nomem(r);
    r->n_points = n;
    /* Before format 1.1 the origin was the pixel corner; sleap-io shifts
     * user and predicted points by half a pixel (formats D.7). */
    double shift = r->format_id < 1.1 ? 0.5 : 0.0;
    for (int64_t i = 0; i < n; i++) {
        const sleapc_slp_point_rec *s = i < n_user ? &user[i] : &pred[i - n_user];
        r->points[i] = (sleapc_slp_point){s->x - shift, s->y - shift, i < n_user ? NAN : s->score,
                                          s->visible != 0, s->complete != 0};
    }
    return SLEAPC_OK;
}

static sleapc_status read_tables(sleapc_slp *r, sleapc_h5 *f)
{
    void *fr = NULL, *in = NULL, *up = NULL, *pp = NULL;
    int64_t n_fr = 0, n_in = 0, n_up = 0, n_pp = 0;
    sleapc_status st =
        sleapc__h5_read_compound(f, "frames", sleapc__slp_frame_fields, SLEAPC_SLP_FRAME_FIELDS,
                                 sizeof(sleapc_slp_frame_rec), &fr, &n_fr);
    if (!st)
        st = sleapc__h5_read_compound(f, "instances", sleapc__slp_instance_fields,
                                      SLEAPC_SLP_INSTANCE_FIELDS, sizeof(sleapc_slp_instance_rec),
                                      &in, &n_in);
    if (!st)
        st =
            sleapc__h5_read_compound(f, "points", sleapc__slp_point_fields, SLEAPC_SLP_POINT_FIELDS,
                                     sizeof(sleapc_slp_point_rec), &up, &n_up);
    if (!st)
        st = sleapc__h5_read_compound(f, "pred_points", sleapc__slp_point_fields,
                                      SLEAPC_SLP_PRED_POINT_FIELDS, sizeof(sleapc_slp_point_rec),
                                      &pp, &n_pp);
    if (!st)
        st = build_instances(r, in, n_in, n_up, n_pp);
    if (!st)
        st = build_frames(r, fr, n_fr);
    if (!st)
        st = build_points(r, up, n_up, pp, n_pp);
    sleapc__free(fr);
    sleapc__free(in);
    sleapc__free(up);
    sleapc__free(pp);
    return st;
}

static sleapc_status open_labels(const char *path, bool tables, sleapc_slp **out)
{
    *out = NULL;
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read labels: no path");
    sleapc_slp *r = sleapc__calloc(1, sizeof *r);
    if (!r || !(r->path = sleapc__strdup(path))) {
        sleapc__free(r);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", path);
    }
    sleapc_h5 *f = NULL;
    sleapc_status st = sleapc__h5_open(path, &f);
    r->h5 = f;
    if (!st)
        st = read_metadata(r, f);
    if (!st)
        st = read_lists(r, f);
    if (!st && tables)
        st = read_tables(r, f);
    if (st) {
        sleapc__slp_close(r);
        return st;
    }
    *out = r;
    return SLEAPC_OK;
}

sleapc_status sleapc__slp_open(const char *path, sleapc_slp **out)
{
    return open_labels(path, true, out);
}

sleapc_status sleapc__slp_open_header(const char *path, sleapc_slp **out)
{
    return open_labels(path, false, out);
}

sleapc_status sleapc__slp_map_video(const sleapc_slp *r, uint64_t id, bool sparse, int *out)
{
    return map_video_id(r, id, sparse, out);
}

static void free_video(sleapc_slp_video *v)
{
    sleapc__free(v->filename);
    sleapc__free(v->backend_type);
    sleapc__free(v->dataset);
    for (int i = 0; v->filenames && i < v->n_filenames; i++)
        sleapc__free(v->filenames[i]);
    sleapc__free(v->filenames);
    sleapc__free(v->embed_dataset);
    sleapc__free(v->frame_numbers);
    sleapc__free(v->source_json);
}

void sleapc__slp_close(sleapc_slp *r)
{
    if (!r)
        return;
    sleapc__h5_discard(r->h5);
    for (int i = 0; r->videos && i < r->n_videos; i++)
        free_video(&r->videos[i]);
    sleapc__free(r->videos);
    for (int i = 0; r->skeletons && i < r->n_skeletons; i++) {
        sleapc_slp_skeleton *s = &r->skeletons[i];
        sleapc__free(s->name);
        for (int j = 0; s->node_names && j < s->n_nodes; j++)
            sleapc__free(s->node_names[j]);
        sleapc__free(s->node_names);
        sleapc__free(s->edges);
        sleapc__free(s->symmetries);
    }
    sleapc__free(r->skeletons);
    for (int i = 0; r->track_names && i < r->n_tracks; i++)
        sleapc__free(r->track_names[i]);
    sleapc__free(r->track_names);
    sleapc__free(r->frames);
    sleapc__free(r->instances);
    sleapc__free(r->points);
    sleapc__free(r->suggestions);
    sleapc__free(r->provenance);
    sleapc__free(r->image);
    sleapc__free(r->path);
    sleapc__free(r);
}
