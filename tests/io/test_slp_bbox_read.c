/* Boxes read back from a .slp: sleap-nn 0.3.5's boxes of a reference run
 * (tests/goldens/sleapnn-0.3.5-families, bbox_ssd__video) read and written
 * again give its /bboxes datasets and /frames, read whole or in blocks of
 * a few frames (as `sleapc convert` reads); categorized, linked boxes
 * written, read and written again give the same /bboxes and /categories;
 * malformed groups are format errors naming the file. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/h5/h5_file.h"
#include "io/predictions/predictions_format.h"
#include "io/slp/slp_read_bbox.h"
#include "slp_fixture.h"
#include "test_util.h"

#define REF SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families/cases/bbox_ssd__video/pred.slp"

static const char *const cols[] = {"angle", "category", "frame_idx", "instance", "is_predicted",
                                   "name",  "score",    "source",    "track",    "tracking_score",
                                   "video", "x1",       "x2",        "y1",       "y2"};
enum { N_COLS = sizeof cols / sizeof *cols };

/* Dataset name of a and b: same type, shape and values. */
static void same_dataset(sleapc_h5 *a, sleapc_h5 *b, const char *name)
{
    char *ta = NULL, *tb = NULL;
    sleapc_h5_info ia = {0}, ib = {0};
    CHECK_OK(sleapc__h5_dataset_info(a, name, &ia));
    CHECK_OK(sleapc__h5_dataset_info(b, name, &ib));
    CHECK_OK(sleapc__h5_type_text(a, name, NULL, &ta));
    CHECK_OK(sleapc__h5_type_text(b, name, NULL, &tb));
    CHECK_MSG(ta && tb && !strcmp(ta, tb) && ia.n_elems == ib.n_elems, "%s: type or shape", name);
    sleapc__free(ta);
    sleapc__free(tb);
    if (ia.vlen_string) {
        char **sa = NULL, **sb = NULL;
        int64_t na = 0, nb = 0;
        CHECK_OK(sleapc__h5_read_strings(a, name, &sa, &na));
        CHECK_OK(sleapc__h5_read_strings(b, name, &sb, &nb));
        CHECK(na == nb);
        for (int64_t i = 0; i < na && i < nb; i++)
            CHECK_MSG(!strcmp(sa[i], sb[i]), "%s[%lld]", name, (long long)i);
        sleapc__h5_free_strings(sa, na);
        sleapc__h5_free_strings(sb, nb);
        return;
    }
    void *da = NULL, *db = NULL;
    size_t la = 0, lb = 0;
    CHECK_OK(sleapc__h5_read_raw(a, name, &da, &lb));
    CHECK_OK(sleapc__h5_read_raw(b, name, &db, &la));
    CHECK_MSG(la == lb && da && db && !memcmp(da, db, la), "%s: other values", name);
    sleapc__free(da);
    sleapc__free(db);
}

static void same_groups(const char *pa, const char *pb, bool categories)
{
    sleapc_h5 *a = NULL, *b = NULL;
    CHECK_OK(sleapc__h5_open(pa, &a));
    CHECK_OK(sleapc__h5_open(pb, &b));
    char full[64];
    for (int i = 0; a && b && i < N_COLS; i++) {
        snprintf(full, sizeof full, "bboxes/%s", cols[i]);
        same_dataset(a, b, full);
    }
    if (a && b)
        same_dataset(a, b, "frames");
    if (a && b && categories) {
        same_dataset(a, b, "categories/name");
        same_dataset(a, b, "categories/links");
    }
    sleapc__h5_close(a);
    sleapc__h5_close(b);
}

/* read path, write it to out; pr keeps what was read */
static void read_write(const char *path, const char *out, sleapc_predictions *pr)
{
    CHECK_OK(sleapc__predictions_read(path, pr, NULL));
    CHECK_OK(sleapc__predictions_write_slp(pr, out));
}

/* path read in blocks of 3 frames and written to out */
static void read_write_blocks(const char *path, const char *out)
{
    sleapc_predictions_reader r;
    CHECK_OK(sleapc__predictions_open_blocks(path, 3, &r));
    CHECK_OK(sleapc__predictions_write(&r.pr, &r.src, out, NULL));
    sleapc__predictions_reader_close(&r);
}

static void test_reference(void)
{
    sleapc_predictions pr, pr2;
    const char *a = test_tmp_path("ref_again.slp");
    read_write(REF, a, &pr);
    CHECK(pr.n_boxes == 48 && pr.n_frames == 20 && pr.n_insts == 0 && pr.n_bbox_categories == 0);
    int64_t n = 0;
    for (int64_t k = 0; k < pr.n_frames; k++) {
        CHECK(pr.frames[k].box_first == n);
        n += pr.frames[k].n_boxes;
    }
    CHECK(n == 48);
    CHECK(pr.boxes[0].category == -1 && pr.boxes[0].instance == -1 && pr.boxes[0].track == -1);
    CHECK(fabsf(pr.boxes[0].score - 0.999998927f) < 1e-6f);
    same_groups(REF, a, false);
    /* and once more: the read of sleapc's own file writes the same */
    char b[4096];
    snprintf(b, sizeof b, "%s", test_tmp_path("ref_again2.slp"));
    read_write(a, b, &pr2);
    same_groups(a, b, false);
    read_write_blocks(REF, b);
    same_groups(REF, b, false);
    sleapc__predictions_free(&pr);
    sleapc__predictions_free(&pr2);
}

static void test_categories(void)
{
    sleapc_predictions pr, back, back2;
    static const char *const nodes[] = {"A", "B"}, *const tracks[] = {"t0"};
    static const int edges[][2] = {{0, 1}};
    fixture_init(&pr, "Skeleton-0", 2, nodes, 1, edges, 1, tracks, "v.mp4", 4, 4);
    static const char *const cats[] = {"mouse", "fly"};
    CHECK_OK(sleapc__results_set_bbox_categories(&pr, cats, 2));
    static const float xy[4] = {1, 2, 3, 4}, sc[2] = {1, 1};
    fixture_add_frame(&pr, 0, 3);
    fixture_add_instance(&pr, xy, sc, 0.9f, -1, NAN);
    fixture_add_frame(&pr, 0, 5);
    fixture_add_instance(&pr, xy, sc, 0.8f, 0, 0.5f);
    fixture_add_instance(&pr, xy, sc, 0.7f, -1, NAN);
    const sleapc_pred_box b[3] = {{1, 2, 3, 4, 0.5f, 1, -1, NAN, 1},
                                  {5, 6, 7, 8, 0.25f, -1, -1, NAN, -1},
                                  {9, 10, 11, 12, 0.125f, 0, 0, 0.5f, 0}};
    CHECK_OK(sleapc__results_add_boxes(&pr, &pr.frames[1], b, 3));
    const char *p1 = test_tmp_path("cat1.slp");
    CHECK_OK(sleapc__predictions_write_slp(&pr, p1));
    char p2[4096], p3[4096];
    snprintf(p2, sizeof p2, "%s", test_tmp_path("cat2.slp"));
    snprintf(p3, sizeof p3, "%s", test_tmp_path("cat3.slp"));
    read_write(p1, p2, &back);
    CHECK(back.n_boxes == 3 && back.frames[0].n_boxes == 0 && back.frames[1].n_boxes == 3);
    if (back.n_boxes == 3) {
        const sleapc_pred_box *x = back.boxes;
        CHECK(back.n_bbox_categories == 2 && !strcmp(back.bbox_categories[x[0].category], "fly"));
        CHECK(x[1].category == -1 && !strcmp(back.bbox_categories[x[2].category], "mouse"));
        CHECK(x[0].instance == 1 && x[1].instance == -1 && x[2].instance == 0);
        CHECK(x[2].track == 0 && x[2].tracking_score == 0.5f && isnan(x[0].tracking_score));
        CHECK(x[0].x1 == 1 && x[2].y2 == 12 && x[1].score == 0.25f);
    }
    same_groups(p1, p2, true);
    read_write(p2, p3, &back2);
    same_groups(p2, p3, true);
    read_write_blocks(p1, p3);
    same_groups(p1, p3, true);
    fixture_free(&pr);
    sleapc__predictions_free(&back);
    sleapc__predictions_free(&back2);
}

/* A file with a /bboxes group of the given columns (x1 has 3 rows, the
 * others n rows), read directly. */
static sleapc_status read_bad(const char *name, int n_cols, int64_t n, bool link_out)
{
    const char *path = test_tmp_path(name);
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_create(path, &f));
    if (!f)
        return SLEAPC_ERR_IO;
    static const double v[3] = {1, 2, 3};
    static const char *const num[] = {"x1",       "y1",           "x2",        "y2",
                                      "angle",    "video",        "frame_idx", "track",
                                      "instance", "is_predicted", "score"};
    CHECK_OK(sleapc__h5_create_group(f, "bboxes"));
    char full[64];
    for (int i = 0; i < n_cols && i < 11; i++) {
        snprintf(full, sizeof full, "bboxes/%s", num[i]);
        const int64_t rows = i == 0 ? 3 : n;
        CHECK_OK(sleapc__h5_write(f, full, SLEAPC_H5_F64, 1, &rows, v, NULL));
    }
    if (n_cols > 11) {
        static const char *const s[3] = {"", "", ""};
        CHECK_OK(sleapc__h5_write_vlen_strings(f, "bboxes/category", n, s, NULL));
    }
    if (link_out) {
        static const char *const names[1] = {"mouse"};
        CHECK_OK(sleapc__h5_create_group(f, "categories"));
        CHECK_OK(sleapc__h5_write_vlen_strings(f, "categories/name", 1, names, NULL));
        typedef struct {
            uint8_t t;
            int64_t id;
            int32_t c;
        } rec;
        const sleapc_h5_field fl[] = {
            {"owner_type", SLEAPC_H5_U8, offsetof(rec, t), SLEAPC_H5_TYPE_DEFAULT, false},
            {"owner_id", SLEAPC_H5_I64, offsetof(rec, id), SLEAPC_H5_TYPE_DEFAULT, false},
            {"category_idx", SLEAPC_H5_I32, offsetof(rec, c), SLEAPC_H5_TYPE_DEFAULT, false}};
        const rec r = {4, 7, 0}; /* box 7 of 3 */
        CHECK_OK(sleapc__h5_write_compound(f, "categories/links", fl, 3, sizeof r, &r, 1, NULL));
    }
    CHECK_OK(sleapc__h5_close(f));
    f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    sleapc_slp_bbox_rows rows;
    sleapc_status st = f ? sleapc__slp_bboxes_read(f, path, &rows) : SLEAPC_ERR_IO;
    if (!st)
        sleapc__slp_bbox_rows_free(&rows);
    else
        CHECK_MSG(strstr(sleapc_last_error(), name) != NULL, "error names the file: %s",
                  sleapc_last_error());
    sleapc__h5_close(f);
    return st;
}

static void test_malformed(void)
{
    CHECK(read_bad("bad_missing.slp", 5, 3, false) == SLEAPC_ERR_FORMAT);
    CHECK(read_bad("bad_rows.slp", 12, 2, false) == SLEAPC_ERR_FORMAT);
    CHECK(read_bad("bad_link.slp", 12, 3, true) == SLEAPC_ERR_FORMAT);
    CHECK(read_bad("good.slp", 12, 3, false) == SLEAPC_OK);
}

int main(void)
{
    test_reference();
    test_categories();
    test_malformed();
    return test_finish();
}
