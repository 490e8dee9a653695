/* Boxes in results and in .slp: sleap-nn 0.3.5's boxes of a reference run
 * (tests/goldens/sleapnn-0.3.5-families, bbox_ssd__video) written again must
 * give its /bboxes dataset for dataset (dtype, layout, attributes, values)
 * and its /frames; categorized boxes add /categories (format 2.7); the
 * boxes survive append, gather and a spill; no boxes, no /bboxes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/results_spill.h"
#include "io/h5/h5_file.h"
#include "pipeline/writer_state.h"
#include "slp_fixture.h"
#include "test_util.h"

#define REF SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families/cases/bbox_ssd__video/pred.slp"

static const char *const cols[] = {"angle", "category", "frame_idx", "instance", "is_predicted",
                                   "name",  "score",    "source",    "track",    "tracking_score",
                                   "video", "x1",       "x2",        "y1",       "y2"};
enum { N_COLS = sizeof cols / sizeof *cols };

static void make_header(sleapc_predictions *pr, int64_t frames)
{
    static const char *const nodes[] = {"A", "B"};
    static const int edges[][2] = {{0, 1}};
    fixture_init(pr, "Skeleton-0", 2, nodes, 1, edges, 0, NULL, "centered_pair_small.mp4", frames,
                 4);
}

/* The reference's boxes as results: one frame per frame index, in order. */
static bool load_reference(sleapc_predictions *pr)
{
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(REF, &f));
    if (!f)
        return false;
    void *c[6] = {0};
    sleapc_h5_info info = {0};
    const char *names[6] = {"bboxes/frame_idx", "bboxes/x1", "bboxes/y1",
                            "bboxes/x2",        "bboxes/y2", "bboxes/score"};
    const sleapc_h5_type types[6] = {SLEAPC_H5_I64, SLEAPC_H5_F64, SLEAPC_H5_F64,
                                     SLEAPC_H5_F64, SLEAPC_H5_F64, SLEAPC_H5_F32};
    bool ok = true;
    for (int i = 0; i < 6; i++) {
        sleapc_status st = sleapc__h5_read(f, names[i], types[i], &c[i], &info);
        CHECK_OK(st);
        ok = ok && !st;
    }
    const int64_t n = info.n_elems;
    make_header(pr, 20);
    for (int64_t i = 0; ok && i < n; i++) {
        const int64_t fi = ((int64_t *)c[0])[i];
        if (pr->n_frames == 0 || pr->frames[pr->n_frames - 1].frame_idx != fi) {
            fixture_add_frame(pr, 0, fi);
            pr->frames[pr->n_frames - 1].box_first = pr->n_boxes;
        }
        sleapc_pred_frame *fr = &pr->frames[pr->n_frames - 1];
        const sleapc_pred_box b = {((double *)c[1])[i],
                                   ((double *)c[2])[i],
                                   ((double *)c[3])[i],
                                   ((double *)c[4])[i],
                                   ((float *)c[5])[i],
                                   -1,
                                   -1,
                                   NAN,
                                   -1};
        CHECK_OK(sleapc__results_reserve_boxes(pr, pr->n_boxes + 1));
        pr->boxes[pr->n_boxes++] = b;
        fr->n_boxes++;
    }
    CHECK(n == 48 && pr->n_frames == 20);
    for (int i = 0; i < 6; i++)
        sleapc__free(c[i]);
    sleapc__h5_close(f);
    return ok;
}

static bool same_info(const sleapc_h5_info *a, const sleapc_h5_info *b)
{
    return a->cls == b->cls && a->elem_size == b->elem_size && a->is_signed == b->is_signed &&
           a->vlen_string == b->vlen_string && a->ndim == b->ndim && a->shape[0] == b->shape[0] &&
           a->maxshape[0] == b->maxshape[0] && a->chunked == b->chunked && a->gzip == b->gzip;
}

static int64_t n_attrs(sleapc_h5 *f, const char *obj)
{
    char **names = NULL;
    int64_t n = -1;
    CHECK_OK(sleapc__h5_attr_names(f, obj, &names, &n));
    for (int64_t i = 0; i < n; i++)
        sleapc__free(names[i]);
    sleapc__free(names);
    return n;
}

static void compare_dataset(sleapc_h5 *a, sleapc_h5 *b, const char *name)
{
    sleapc_h5_info ia = {0}, ib = {0};
    CHECK_OK(sleapc__h5_dataset_info(a, name, &ia));
    CHECK_OK(sleapc__h5_dataset_info(b, name, &ib));
    CHECK_MSG(same_info(&ia, &ib), "%s: another dtype or layout", name);
    CHECK_MSG(n_attrs(a, name) == 0 && n_attrs(b, name) == 0, "%s: attributes", name);
    if (ia.vlen_string) {
        char **sa = NULL, **sb = NULL;
        int64_t na = 0, nb = 0;
        CHECK_OK(sleapc__h5_read_strings(a, name, &sa, &na));
        CHECK_OK(sleapc__h5_read_strings(b, name, &sb, &nb));
        CHECK(na == nb);
        for (int64_t i = 0; i < na && i < nb; i++)
            CHECK_MSG(strcmp(sa[i], sb[i]) == 0, "%s[%lld]", name, (long long)i);
        for (int64_t i = 0; i < na; i++)
            sleapc__free(sa[i]);
        for (int64_t i = 0; i < nb; i++)
            sleapc__free(sb[i]);
        sleapc__free(sa);
        sleapc__free(sb);
        return;
    }
    void *da = NULL, *db = NULL;
    size_t la = 0, lb = 0;
    CHECK_OK(sleapc__h5_read_raw(a, name, &da, &la));
    CHECK_OK(sleapc__h5_read_raw(b, name, &db, &lb));
    CHECK_MSG(la == lb && da && db && memcmp(da, db, la) == 0, "%s: other values", name);
    sleapc__free(da);
    sleapc__free(db);
}

static double format_id(sleapc_h5 *f)
{
    double v = 0;
    CHECK_OK(sleapc__h5_attr_double(f, "metadata", "format_id", &v));
    return v;
}

static void compare_with_reference(const char *path)
{
    sleapc_h5 *a = NULL, *b = NULL;
    CHECK_OK(sleapc__h5_open(REF, &a));
    CHECK_OK(sleapc__h5_open(path, &b));
    if (!a || !b)
        goto done;
    CHECK(format_id(b) == 2.0 && format_id(a) == 2.0);
    char **names = NULL;
    int64_t n = 0;
    CHECK_OK(sleapc__h5_list(b, "bboxes", &names, &n));
    CHECK(n == N_COLS);
    for (int64_t i = 0; i < n; i++)
        sleapc__free(names[i]);
    sleapc__free(names);
    CHECK(n_attrs(b, "bboxes") == 0);
    char full[64];
    for (int i = 0; i < N_COLS; i++) {
        snprintf(full, sizeof full, "bboxes/%s", cols[i]);
        compare_dataset(a, b, full);
    }
    compare_dataset(a, b, "frames");
    CHECK(!sleapc__h5_is_group(b, "categories"));
done:
    sleapc__h5_close(a);
    sleapc__h5_close(b);
}

static void test_reference(void)
{
    sleapc_predictions pr;
    if (!load_reference(&pr)) {
        fixture_free(&pr);
        return;
    }
    const char *path = test_tmp_path("boxes.slp");
    CHECK_OK(sleapc__predictions_write_slp(&pr, path));
    compare_with_reference(path);

    /* Through a spill, as a run writes. */
    sleapc_results_spill *s = NULL;
    const char *spath = test_tmp_path("spilled.slp");
    CHECK_OK(sleapc__spill_open(spath, pr.n_nodes, &s));
    if (s) {
        sleapc_predictions half = pr;
        half.n_frames = 7;
        CHECK_OK(sleapc__spill_append(s, &half));
        half.frames = pr.frames + 7;
        half.n_frames = pr.n_frames - 7;
        CHECK_OK(sleapc__spill_append(s, &half));
        sleapc_results_source src;
        sleapc_predictions head = sleapc__results_header(&pr);
        sleapc__spill_source(s, &head, &src);
        CHECK(src.n_boxes == 48);
        CHECK_OK(sleapc__predictions_write_slp_from(&head, &src, spath));
        compare_with_reference(spath);
        /* Gathered back: the same boxes. */
        sleapc_predictions all = sleapc__results_header(&pr);
        CHECK_OK(sleapc__results_gather(&src, &all));
        CHECK(all.n_frames == 20 && all.n_boxes == 48);
        for (int64_t k = 0; k < all.n_frames && k < pr.n_frames; k++)
            CHECK(all.frames[k].n_boxes == pr.frames[k].n_boxes &&
                  memcmp(all.boxes + all.frames[k].box_first, pr.boxes + pr.frames[k].box_first,
                         (size_t)pr.frames[k].n_boxes * sizeof *pr.boxes) == 0);
        sleapc__free(all.frames);
        sleapc__free(all.insts);
        sleapc__free(all.points);
        sleapc__free(all.point_scores);
        sleapc__free(all.boxes);
        sleapc__spill_close(s);
    }

    /* Appended as a batch: frames renumbered, boxes follow. */
    sleapc_predictions dst = sleapc__results_header(&pr);
    int64_t idx[20];
    for (int k = 0; k < 20; k++)
        idx[k] = 100 + k;
    CHECK_OK(sleapc__results_append(&dst, &pr, 0, idx));
    CHECK_OK(sleapc__results_append(&dst, &pr, 0, idx));
    CHECK(dst.n_frames == 40 && dst.n_boxes == 96 && dst.frames[20].box_first == 48 &&
          dst.frames[39].frame_idx == 119 && dst.boxes[95].x1 == pr.boxes[47].x1);
    sleapc__free(dst.frames);
    sleapc__free(dst.insts);
    sleapc__free(dst.points);
    sleapc__free(dst.point_scores);
    sleapc__free(dst.boxes);
    fixture_free(&pr);
}

/* Categorized boxes, one with an instance, in a frame after one without. */
static void test_categories(void)
{
    sleapc_predictions pr;
    make_header(&pr, 4);
    static const char *const cats[] = {"mouse", "fly"};
    CHECK_OK(sleapc__results_set_bbox_categories(&pr, cats, 2));
    static const float xy[4] = {1, 2, 3, 4}, sc[2] = {1, 1};
    fixture_add_frame(&pr, 0, 3);
    fixture_add_instance(&pr, xy, sc, 0.9f, -1, NAN);
    fixture_add_frame(&pr, 0, 5);
    fixture_add_instance(&pr, xy, sc, 0.8f, -1, NAN);
    const sleapc_pred_box b[3] = {{1, 2, 3, 4, 0.5f, 1, -1, NAN, 0},
                                  {5, 6, 7, 8, 0.25f, -1, -1, NAN, -1},
                                  {9, 10, 11, 12, 0.125f, 0, 3, 0.5f, 5}};
    CHECK_OK(sleapc__results_add_boxes(&pr, &pr.frames[1], b, 3));
    const char *path = test_tmp_path("categories.slp");
    CHECK_OK(sleapc__predictions_write_slp(&pr, path));
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (f) {
        CHECK(format_id(f) == 2.7);
        char **s = NULL;
        int64_t n = 0;
        CHECK_OK(sleapc__h5_read_strings(f, "bboxes/category", &s, &n));
        CHECK(n == 3 && !strcmp(s[0], "fly") && !s[1][0] && !strcmp(s[2], "mouse"));
        for (int64_t i = 0; i < n; i++)
            sleapc__free(s[i]);
        sleapc__free(s);
        CHECK_OK(sleapc__h5_read_strings(f, "categories/name", &s, &n));
        CHECK(n == 2 && !strcmp(s[0], "fly") && !strcmp(s[1], "mouse"));
        for (int64_t i = 0; i < n; i++)
            sleapc__free(s[i]);
        sleapc__free(s);
        int32_t inst[3] = {0}, track[3] = {0};
        int64_t frame[3] = {0};
        CHECK_OK(sleapc__h5_read_into(f, "bboxes/instance", SLEAPC_H5_I32, inst, 3));
        CHECK_OK(sleapc__h5_read_into(f, "bboxes/track", SLEAPC_H5_I32, track, 3));
        CHECK_OK(sleapc__h5_read_into(f, "bboxes/frame_idx", SLEAPC_H5_I64, frame, 3));
        /* The instance is the frame's first, row 1; out of range ones are none. */
        CHECK(inst[0] == 1 && inst[1] == -1 && inst[2] == -1);
        CHECK(track[2] == -1 && frame[0] == 5 && frame[2] == 5);
        sleapc_h5_info li = {0};
        CHECK_OK(sleapc__h5_dataset_info(f, "categories/links", &li));
        CHECK(li.cls == SLEAPC_H5_CLASS_COMPOUND && li.shape[0] == 2 && li.n_members == 4);
        sleapc__h5_close(f);
    }
    fixture_free(&pr);
}

static void test_no_boxes(void)
{
    sleapc_predictions pr;
    make_header(&pr, 2);
    static const float xy[4] = {1, 2, 3, 4}, sc[2] = {1, 1};
    fixture_add_frame(&pr, 0, 0);
    fixture_add_instance(&pr, xy, sc, 0.9f, -1, NAN);
    const char *path = test_tmp_path("plain.slp");
    CHECK_OK(sleapc__predictions_write_slp(&pr, path));
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (f) {
        CHECK(format_id(f) == 1.4);
        CHECK(!sleapc__h5_is_group(f, "bboxes") && !sleapc__h5_is_group(f, "categories"));
        sleapc__h5_close(f);
    }
    fixture_free(&pr);
}

/* --no_empty_frames keeps a frame with boxes (sleap-nn's frame is not empty). */
static void test_drop_empty(void)
{
    sleapc_predictions pr;
    make_header(&pr, 3);
    static const sleapc_pred_box b = {1, 2, 3, 4, 0.5f, -1, -1, NAN, -1};
    fixture_add_frame(&pr, 0, 0);
    fixture_add_frame(&pr, 0, 1);
    CHECK_OK(sleapc__results_add_boxes(&pr, &pr.frames[1], &b, 1));
    fixture_add_frame(&pr, 0, 2);
    sleapc__writer_drop_empty_frames(&pr);
    CHECK(pr.n_frames == 1 && pr.frames[0].frame_idx == 1 && pr.frames[0].n_boxes == 1);
    fixture_free(&pr);
}

int main(void)
{
    test_drop_empty();
    test_reference();
    test_categories();
    test_no_boxes();
    return test_finish();
}
