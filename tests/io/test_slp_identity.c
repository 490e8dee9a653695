/* .slp identities (class_output: identity): the /identity group as sleap-io
 * 0.9.5 writes it for the labels sleap-nn 0.3.5 builds (checked with h5py
 * against files both wrote for the same model): /identity/name, vlen UTF-8
 * class names in the order instances first use them, chunked, maxshape
 * (None,); /identity/links, packed (u1, i8, i4, f4) rows, one per instance
 * with a class, identity_score = its tracking_score exactly (float32 stored
 * as float32); format_id 2.5. Without the flag, or with no classed
 * instance, the file is the plain 1.4 one (no /identity). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "io/predictions/predictions_format.h"
#include "slp_fixture.h"
#include "test_util.h"

typedef struct link_rec {
    int64_t owner_type, owner_id, identity_idx;
    float identity_score;
} link_rec;

static const sleapc_h5_field link_fields[] = {
    {"owner_type", SLEAPC_H5_I64, offsetof(link_rec, owner_type), SLEAPC_H5_TYPE_DEFAULT, false},
    {"owner_id", SLEAPC_H5_I64, offsetof(link_rec, owner_id), SLEAPC_H5_TYPE_DEFAULT, false},
    {"identity_idx", SLEAPC_H5_I64, offsetof(link_rec, identity_idx), SLEAPC_H5_TYPE_DEFAULT,
     false},
    {"identity_score", SLEAPC_H5_F32, offsetof(link_rec, identity_score), SLEAPC_H5_TYPE_DEFAULT,
     false},
};

/* Three frames: classes used first as "male" (1), then "female" (0); one
 * instance without a class; "other" (2) never used. */
static void make(sleapc_predictions *pr, bool identities, bool classed)
{
    static const char *const nodes[] = {"head", "tail"};
    static const int edges[][2] = {{0, 1}};
    static const char *const tracks[] = {"female", "male", "other"};
    fixture_init(pr, "mouse", 2, nodes, 1, edges, 3, tracks, "clip.mp4", 3, 5);
    pr->multiclass = true;
    pr->identities = identities;
    const float xy[4] = {1, 2, 3, 4}, sc[2] = {0.5f, 0.25f};
    fixture_add_frame(pr, 0, 0);
    fixture_add_instance(pr, xy, sc, 0.9f, classed ? 1 : -1, classed ? 0.75f : NAN);
    fixture_add_instance(pr, xy, sc, 0.8f, classed ? 0 : -1, classed ? 0.625f : NAN);
    fixture_add_frame(pr, 0, 5);
    fixture_add_instance(pr, xy, sc, 0.7f, -1, NAN);
    fixture_add_frame(pr, 0, 9);
    fixture_add_instance(pr, xy, sc, 0.6f, classed ? 0 : -1, classed ? 0.1f : NAN);
    fixture_add_instance(pr, xy, sc, 0.5f, classed ? 1 : -1, classed ? 0.3333333f : NAN);
}

static double format_id(sleapc_h5 *f)
{
    double v = 0;
    CHECK_OK(sleapc__h5_attr_double(f, "metadata", "format_id", &v));
    return v;
}

static void test_identities(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ident.slp", test_tmp_dir());
    sleapc_predictions pr;
    make(&pr, true, true);
    CHECK_OK(sleapc__predictions_write_slp(&pr, path));
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (!f) {
        fixture_free(&pr);
        return;
    }
    CHECK(format_id(f) == 2.5);
    char **names = NULL;
    int64_t n = 0;
    CHECK_OK(sleapc__h5_list(f, "identity", &names, &n));
    CHECK(n == 2 && !strcmp(names[0], "links") && !strcmp(names[1], "name"));
    sleapc__h5_free_strings(names, n);

    CHECK_OK(sleapc__h5_read_strings(f, "identity/name", &names, &n));
    CHECK(n == 2 && !strcmp(names[0], "male") && !strcmp(names[1], "female"));
    sleapc__h5_free_strings(names, n);
    sleapc_h5_info info;
    CHECK_OK(sleapc__h5_dataset_info(f, "identity/name", &info));
    CHECK(info.vlen_string && info.chunked && info.maxshape[0] == -1 && info.gzip == -1);
    char *type = NULL;
    CHECK_OK(sleapc__h5_type_text(f, "identity/name", NULL, &type));
    CHECK_MSG(type && !strcmp(type, "vlen-str[nullterm,utf8]"), "%s", type ? type : "?");
    sleapc__free(type);

    CHECK_OK(sleapc__h5_dataset_info(f, "identity/links", &info));
    CHECK(info.cls == SLEAPC_H5_CLASS_COMPOUND && info.elem_size == 17 && info.n_members == 4);
    CHECK(info.chunked && info.maxshape[0] == -1 && info.shape[0] == 4 && info.gzip == -1);
    CHECK_OK(sleapc__h5_type_text(f, "identity/links", NULL, &type));
    CHECK_MSG(type && !strcmp(type, "compound[17]{owner_type@0:u8le,owner_id@1:i64le,"
                                    "identity_idx@9:i32le,identity_score@13:f32le}"),
              "%s", type ? type : "?");
    sleapc__free(type);
    void *rows = NULL;
    int64_t n_rows = 0;
    CHECK_OK(sleapc__h5_read_compound(f, "identity/links", link_fields, 4, sizeof(link_rec), &rows,
                                      &n_rows));
    const link_rec *l = rows;
    /* (owner_id = row in /instances, identity_idx, score); row 2 has no class. */
    static const struct {
        int64_t id, idx;
        float score;
    } want[] = {{0, 0, 0.75f}, {1, 1, 0.625f}, {3, 1, 0.1f}, {4, 0, 0.3333333f}};
    CHECK(n_rows == 4);
    for (int64_t i = 0; l && i < n_rows && i < 4; i++) {
        CHECK(l[i].owner_type == 0 && l[i].owner_id == want[i].id);
        CHECK(l[i].identity_idx == want[i].idx);
        CHECK(l[i].identity_score == want[i].score); /* float32 both ways: exact */
    }
    sleapc__free(rows);
    CHECK_OK(sleapc__h5_close(f));
    fixture_free(&pr);
}

/* No flag, or no instance with a class: no /identity, format_id 1.4. */
static void test_none(bool identities, bool classed)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plain_%d%d.slp", test_tmp_dir(), identities, classed);
    sleapc_predictions pr;
    make(&pr, identities, classed);
    CHECK_OK(sleapc__predictions_write_slp(&pr, path));
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (f) {
        CHECK(sleapc__h5_kind(f, "identity") == SLEAPC_H5_KIND_NONE);
        CHECK(format_id(f) == 1.4);
        CHECK_OK(sleapc__h5_close(f));
    }
    fixture_free(&pr);
}

/* Read back (whole and in blocks), the identities are kept, and a rewrite
 * gives the same /identity. */
static void test_read_back(void)
{
    char path[512], again[512];
    snprintf(path, sizeof path, "%s/ident_rb.slp", test_tmp_dir());
    snprintf(again, sizeof again, "%s/ident_rb2.slp", test_tmp_dir());
    sleapc_predictions pr;
    make(&pr, true, true);
    CHECK_OK(sleapc__predictions_write_slp(&pr, path));
    fixture_free(&pr);
    sleapc_predictions back = {0};
    CHECK_OK(sleapc__predictions_read(path, &back, NULL));
    CHECK(back.identities);
    CHECK_OK(sleapc__predictions_write_path(&back, again));
    sleapc__predictions_free(&back);
    sleapc_predictions_reader r;
    CHECK_OK(sleapc__predictions_open_blocks(path, 2, &r));
    CHECK(r.pr.identities);
    sleapc__predictions_reader_close(&r);
    sleapc_h5 *a = NULL, *b = NULL;
    CHECK_OK(sleapc__h5_open(path, &a));
    CHECK_OK(sleapc__h5_open(again, &b));
    void *ra = NULL, *rb = NULL;
    int64_t na = 0, nb = 0;
    if (a && b) {
        CHECK_OK(sleapc__h5_read_compound(a, "identity/links", link_fields, 4, sizeof(link_rec),
                                          &ra, &na));
        CHECK_OK(sleapc__h5_read_compound(b, "identity/links", link_fields, 4, sizeof(link_rec),
                                          &rb, &nb));
        CHECK(na == 4 && nb == na && ra && rb &&
              memcmp(ra, rb, (size_t)na * sizeof(link_rec)) == 0);
        char **wa = NULL, **wb = NULL;
        int64_t ka = 0, kb = 0;
        CHECK_OK(sleapc__h5_read_strings(a, "identity/name", &wa, &ka));
        CHECK_OK(sleapc__h5_read_strings(b, "identity/name", &wb, &kb));
        CHECK(ka == 2 && kb == 2 && wa && wb && !strcmp(wa[0], wb[0]) && !strcmp(wa[1], wb[1]));
        sleapc__h5_free_strings(wa, ka);
        sleapc__h5_free_strings(wb, kb);
    }
    sleapc__free(ra);
    sleapc__free(rb);
    if (a)
        CHECK_OK(sleapc__h5_close(a));
    if (b)
        CHECK_OK(sleapc__h5_close(b));
}

int main(void)
{
    test_identities();
    test_read_back();
    test_none(false, true);
    test_none(true, false);
    return test_finish();
}
