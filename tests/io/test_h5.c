/* The HDF5 wrapper: numeric, string, compound and attribute round trips
 * with conversions; h5py-compatible layout choices; object queries; errors
 * (missing objects, wrong types, out-of-range values, not-HDF5 and
 * truncated files, read-only handles, allocation failures); atomic files. */
#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "test_util.h"

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Files in the temp folder whose names start with prefix. */
static int count_prefixed(const char *prefix)
{
    DIR *d = opendir(test_tmp_dir());
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static bool has_text(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

typedef struct rec {
    double x;
    int32_t id;
    uint8_t flag;
    float extra;
} rec;

static const sleapc_h5_field rec_fields[] = {
    {"x", SLEAPC_H5_F64, offsetof(rec, x), SLEAPC_H5_TYPE_DEFAULT, false},
    {"id", SLEAPC_H5_I32, offsetof(rec, id), SLEAPC_H5_I64, false},
    {"flag", SLEAPC_H5_BOOL, offsetof(rec, flag), SLEAPC_H5_TYPE_DEFAULT, false},
};

static void write_sample(const char *path)
{
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_create(path, &f));
    if (!f)
        return;
    float m[2][3] = {{1.5f, -2.0f, 3.25f}, {4.0f, 5.5f, -6.0f}};
    int64_t s23[2] = {2, 3}, s4 = 4, s3 = 3, s0 = 0;
    CHECK_OK(sleapc__h5_write(f, "grp/sub/matrix", SLEAPC_H5_F32, 2, s23, m, NULL));
    int32_t ints[4] = {-1, 0, 7, 300};
    sleapc_h5_write_opts gz = {.chunked = true, .gzip = 9, .file_type = SLEAPC_H5_I16};
    CHECK_OK(sleapc__h5_write(f, "ints", SLEAPC_H5_I32, 1, &s4, ints, &gz));
    int64_t scalar = 42;
    CHECK_OK(sleapc__h5_write(f, "scalar", SLEAPC_H5_I64, 0, NULL, &scalar, NULL));
    uint8_t bools[3] = {1, 0, 1};
    CHECK_OK(sleapc__h5_write(f, "bools", SLEAPC_H5_BOOL, 1, &s3, bools, NULL));
    sleapc_h5_write_opts unl = {.unlimited = true};
    CHECK_OK(sleapc__h5_write(f, "empty", SLEAPC_H5_F64, 1, &s0, NULL, &unl));
    const char *strs[3] = {"alpha", "", "gamma-delta"};
    CHECK_OK(sleapc__h5_write_strings(f, "strs", 1, &s3, strs, &unl));
    const char *pairs[4] = {"a", "bb", "ccc", "d"};
    int64_t s22[2] = {2, 2};
    CHECK_OK(sleapc__h5_write_strings(f, "pairs", 2, s22, pairs, NULL));
    CHECK_OK(sleapc__h5_write_vlen_string(f, "vstr", "h\xc3\xa9llo"));
    rec rows[2] = {{0.5, 3, 1, 9.0f}, {-1.25, -4, 0, 9.0f}};
    int64_t two = 2;
    CHECK_OK(sleapc__h5_write_compound(f, "table", rec_fields, 3, sizeof(rec), rows, two, NULL));
    int8_t img[2][5] = {{1, 2, 3, 0, 0}, {-1, -2, 0, 0, 0}};
    int64_t s25[2] = {2, 5};
    sleapc_h5_write_opts gz8 = {.gzip = 4};
    CHECK_OK(sleapc__h5_write(f, "images", SLEAPC_H5_I8, 2, s25, img, &gz8));
    uint8_t pix[12];
    for (int i = 0; i < 12; i++)
        pix[i] = (uint8_t)i;
    int64_t s4d[4] = {2, 1, 2, 3};
    CHECK_OK(sleapc__h5_write(f, "pixels", SLEAPC_H5_U8, 4, s4d, pix, NULL));
    CHECK_OK(sleapc__h5_create_group(f, "meta"));
    CHECK_OK(sleapc__h5_set_attr_double(f, "meta", "format_id", 1.2));
    CHECK_OK(sleapc__h5_set_attr_string(f, "meta", "json", "{\"a\":1}", false));
    CHECK_OK(sleapc__h5_set_attr_string(f, "meta", "vjson", "[1,2]", true));
    CHECK_OK(sleapc__h5_set_attr_int(f, "ints", "height", 384));
    CHECK_OK(sleapc__h5_set_attr_int(f, "ints", "height", 385)); /* replaced */
    CHECK_OK(sleapc__h5_set_attr_string(f, "/", "root_attr", "r", true));
    CHECK_OK(sleapc__h5_close(f));
}

static void test_round_trips(void)
{
    const char *path = test_tmp_path("sample.h5");
    write_sample(path);
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (!f)
        return;
    CHECK(strcmp(sleapc__h5_path(f), path) == 0);

    /* Numbers: read in the stored type and converted to others. */
    sleapc_h5_info info;
    void *data = NULL;
    CHECK_OK(sleapc__h5_read(f, "/grp/sub/matrix", SLEAPC_H5_F64, &data, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3 && info.n_elems == 6);
    CHECK(info.cls == SLEAPC_H5_CLASS_FLOAT && info.elem_size == 4 && !info.chunked);
    CHECK(data && ((double *)data)[2] == 3.25 && ((double *)data)[5] == -6.0);
    sleapc__free(data);
    int64_t ints64[4] = {0};
    CHECK_OK(sleapc__h5_read_into(f, "ints", SLEAPC_H5_I64, ints64, 4));
    CHECK(ints64[0] == -1 && ints64[3] == 300);
    CHECK(sleapc__h5_read_into(f, "ints", SLEAPC_H5_I64, ints64, 3) == SLEAPC_ERR_FORMAT);
    CHECK_OK(sleapc__h5_dataset_info(f, "ints", &info));
    CHECK(info.chunked && info.gzip == 9 && info.elem_size == 2 && info.is_signed);
    float fl[4];
    CHECK_OK(sleapc__h5_read_into(f, "ints", SLEAPC_H5_F32, fl, 4));
    CHECK(fl[3] == 300.0f);
    /* 300 and -1 do not fit uint8: an error, never a silently clamped value. */
    uint8_t u8[4];
    sleapc_status st = sleapc__h5_read_into(f, "ints", SLEAPC_H5_U8, u8, 4);
    CHECK(st == SLEAPC_ERR_FORMAT && has_text(sleapc_last_error(), "out of range"));
    CHECK_OK(sleapc__h5_read(f, "scalar", SLEAPC_H5_I32, &data, &info));
    CHECK(info.ndim == 0 && info.n_elems == 1 && data && *(int32_t *)data == 42);
    sleapc__free(data);
    /* h5py's bool enum reads as 0/1 through any integer or float type. */
    double bd[3];
    CHECK_OK(sleapc__h5_read_into(f, "bools", SLEAPC_H5_F64, bd, 3));
    CHECK(bd[0] == 1 && bd[1] == 0 && bd[2] == 1);
    char *tt = NULL;
    CHECK_OK(sleapc__h5_type_text(f, "bools", NULL, &tt));
    CHECK_MSG(tt && strcmp(tt, "enum:i8le{FALSE=0,TRUE=1}") == 0, "%s", tt ? tt : "");
    sleapc__free(tt);
    CHECK_OK(sleapc__h5_read(f, "empty", SLEAPC_H5_F32, &data, &info));
    CHECK(data && info.n_elems == 0 && info.maxshape[0] == -1);
    sleapc__free(data);
    CHECK_OK(sleapc__h5_dataset_info(f, "empty", &info));
    CHECK(info.chunked && info.chunk[0] == 1024 && info.gzip == -1);

    /* Strings: fixed (NUL-padded to the longest), 2-D, variable length. */
    char **strs = NULL;
    int64_t n = 0;
    CHECK_OK(sleapc__h5_read_strings(f, "strs", &strs, &n));
    CHECK(n == 3 && strcmp(strs[0], "alpha") == 0 && strcmp(strs[1], "") == 0 &&
          strcmp(strs[2], "gamma-delta") == 0);
    sleapc__h5_free_strings(strs, n);
    CHECK_OK(sleapc__h5_type_text(f, "strs", NULL, &tt));
    CHECK_MSG(tt && strcmp(tt, "str[11,nullpad,ascii]") == 0, "%s", tt ? tt : "");
    sleapc__free(tt);
    CHECK_OK(sleapc__h5_read_strings(f, "pairs", &strs, &n));
    CHECK(n == 4 && strcmp(strs[2], "ccc") == 0);
    sleapc__h5_free_strings(strs, n);
    CHECK_OK(sleapc__h5_read_strings(f, "vstr", &strs, &n));
    CHECK(n == 1 && strcmp(strs[0], "h\xc3\xa9llo") == 0);
    sleapc__h5_free_strings(strs, n);
    CHECK_OK(sleapc__h5_type_text(f, "vstr", NULL, &tt));
    CHECK_MSG(tt && strcmp(tt, "vlen-str[nullterm,utf8]") == 0, "%s", tt ? tt : "");
    sleapc__free(tt);
    /* An empty list of any type is an empty string list (h5py float64 (0,)). */
    CHECK_OK(sleapc__h5_read_strings(f, "empty", &strs, &n));
    CHECK(n == 0);
    sleapc__h5_free_strings(strs, n);
    CHECK(sleapc__h5_read_strings(f, "ints", &strs, &n) == SLEAPC_ERR_FORMAT);

    /* Compound: packed on disk in the given order, read back by name. */
    CHECK_OK(sleapc__h5_type_text(f, "table", NULL, &tt));
    CHECK_MSG(tt && strcmp(tt, "compound[17]{x@0:f64le,id@8:i64le,"
                               "flag@16:enum:i8le{FALSE=0,TRUE=1}}") == 0,
              "%s", tt ? tt : "");
    sleapc__free(tt);
    const sleapc_h5_field reordered[] = {
        {"flag", SLEAPC_H5_U8, offsetof(rec, flag), 0, false},
        {"x", SLEAPC_H5_F64, offsetof(rec, x), 0, false},
        {"id", SLEAPC_H5_I32, offsetof(rec, id), 0, false},
        {"extra", SLEAPC_H5_F32, offsetof(rec, extra), 0, true},
    };
    void *rows = NULL;
    int64_t n_rows = 0;
    CHECK_OK(sleapc__h5_read_compound(f, "table", reordered, 4, sizeof(rec), &rows, &n_rows));
    rec *r = rows;
    CHECK(n_rows == 2 && r && r[0].x == 0.5 && r[0].id == 3 && r[0].flag == 1 && r[1].x == -1.25 &&
          r[1].id == -4 && r[1].flag == 0 && r[0].extra == 0.0f);
    sleapc__free(rows);
    const sleapc_h5_field missing[] = {{"nope", SLEAPC_H5_F32, 0, 0, false}};
    st = sleapc__h5_read_compound(f, "table", missing, 1, sizeof(rec), &rows, &n_rows);
    CHECK(st == SLEAPC_ERR_FORMAT && has_text(sleapc_last_error(), "nope") && !rows);
    st = sleapc__h5_read_compound(f, "ints", rec_fields, 1, sizeof(rec), &rows, &n_rows);
    CHECK(st == SLEAPC_ERR_FORMAT);

    /* Rows of a byte table (an embedded-image store). */
    uint8_t *bytes = NULL;
    size_t nb = 0;
    CHECK_OK(sleapc__h5_read_row_bytes(f, "images", 1, &bytes, &nb));
    CHECK(nb == 5 && bytes && bytes[0] == 0xff && bytes[1] == 0xfe && bytes[2] == 0);
    sleapc__free(bytes);
    CHECK(sleapc__h5_read_row_bytes(f, "images", 2, &bytes, &nb) == SLEAPC_ERR_INVALID_ARG);
    /* Raw pixels (n, h, w, c) uint8: one row is h * w * c bytes. */
    CHECK_OK(sleapc__h5_read_row_bytes(f, "pixels", 1, &bytes, &nb));
    CHECK(nb == 6 && bytes && bytes[0] == 6 && bytes[5] == 11);
    sleapc__free(bytes);
    CHECK(sleapc__h5_read_row_bytes(f, "grp/sub/matrix", 0, &bytes, &nb) == SLEAPC_ERR_FORMAT);

    /* Attributes. */
    double d = 0;
    int64_t iv = 0;
    char *s = NULL;
    CHECK_OK(sleapc__h5_attr_double(f, "/meta", "format_id", &d));
    CHECK(d == 1.2);
    CHECK_OK(sleapc__h5_attr_int(f, "ints", "height", &iv));
    CHECK(iv == 385);
    CHECK_OK(sleapc__h5_attr_string(f, "meta", "json", &s));
    CHECK(s && strcmp(s, "{\"a\":1}") == 0);
    sleapc__free(s);
    CHECK_OK(sleapc__h5_type_text(f, "meta", "json", &tt));
    CHECK_MSG(tt && strcmp(tt, "str[7,nullpad,ascii]") == 0, "%s", tt ? tt : "");
    sleapc__free(tt);
    CHECK_OK(sleapc__h5_attr_string(f, "meta", "vjson", &s));
    CHECK(s && strcmp(s, "[1,2]") == 0);
    sleapc__free(s);
    CHECK_OK(sleapc__h5_attr_strings(f, "/", "root_attr", &strs, &n));
    CHECK(n == 1 && strcmp(strs[0], "r") == 0);
    sleapc__h5_free_strings(strs, n);
    CHECK(sleapc__h5_attr_int(f, "meta", "json", &iv) == SLEAPC_ERR_FORMAT);
    CHECK(sleapc__h5_attr_double(f, "meta", "missing", &d) == SLEAPC_ERR_FORMAT);
    CHECK(sleapc__h5_attr_exists(f, "meta", "json") && !sleapc__h5_attr_exists(f, "meta", "x"));
    CHECK_OK(sleapc__h5_attr_names(f, "meta", &strs, &n));
    CHECK_MSG(n == 3 && strcmp(strs[0], "format_id") == 0 && strcmp(strs[2], "vjson") == 0,
              "%lld attributes, first %s", (long long)n, n ? strs[0] : "-");
    sleapc__h5_free_strings(strs, n);

    /* Objects. */
    CHECK(sleapc__h5_kind(f, "/") == SLEAPC_H5_KIND_GROUP);
    CHECK(sleapc__h5_is_group(f, "grp/sub") && sleapc__h5_is_dataset(f, "/grp/sub/matrix"));
    CHECK(sleapc__h5_kind(f, "grp/nope") == SLEAPC_H5_KIND_NONE);
    CHECK(sleapc__h5_kind(f, "ints/below") == SLEAPC_H5_KIND_NONE);
    CHECK(sleapc__h5_kind(f, "a/b/c/d") == SLEAPC_H5_KIND_NONE);
    CHECK_OK(sleapc__h5_list(f, "/", &strs, &n));
    /* Not tracking creation order (h5py's default): by name. */
    const char *expect[] = {"bools", "empty",  "grp",    "images", "ints",  "meta",
                            "pairs", "pixels", "scalar", "strs",   "table", "vstr"};
    CHECK(n == 12);
    for (int i = 0; i < 12 && i < n; i++)
        CHECK_MSG(strcmp(strs[i], expect[i]) == 0, "member %d is %s", i, strs[i]);
    sleapc__h5_free_strings(strs, n);
    CHECK(sleapc__h5_list(f, "ints", &strs, &n) == SLEAPC_ERR_FORMAT && !strs);

    /* Errors name the file and the object. */
    st = sleapc__h5_read(f, "/nope", SLEAPC_H5_F32, &data, NULL);
    CHECK(st == SLEAPC_ERR_FORMAT && !data);
    CHECK(has_text(sleapc_last_error(), path) && has_text(sleapc_last_error(), "/nope"));
    st = sleapc__h5_read(f, "strs", SLEAPC_H5_F32, &data, NULL);
    CHECK(st == SLEAPC_ERR_FORMAT && has_text(sleapc_last_error(), "not a numeric"));
    /* A read-only handle refuses writes. */
    CHECK(sleapc__h5_write(f, "x", SLEAPC_H5_F32, 0, NULL, fl, NULL) == SLEAPC_ERR_STATE);
    CHECK(sleapc__h5_set_attr_int(f, "/", "x", 1) == SLEAPC_ERR_STATE);
    CHECK_OK(sleapc__h5_close(f));
}

static void test_guess_chunk(void)
{
    /* Values h5py 3.7 picks (seen in the reference files): an empty
     * unlimited float64 list -> 1024; a short string list -> its length;
     * SLEAP's analysis matrices (1,2,3,3) f64 -> the whole array. */
    int64_t c[4];
    int64_t s0 = 0, s2 = 2, s4[4] = {1, 2, 3, 3};
    sleapc__h5_guess_chunk(1, &s0, 8, c);
    CHECK(c[0] == 1024);
    sleapc__h5_guess_chunk(1, &s2, 13, c);
    CHECK(c[0] == 2);
    sleapc__h5_guess_chunk(4, s4, 8, c);
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 3);
    /* Large arrays are split until a chunk is at most 1 MiB. */
    int64_t big[2] = {100000, 1000};
    sleapc__h5_guess_chunk(2, big, 8, c);
    CHECK(c[0] * c[1] * 8 <= 1024 * 1024 && c[0] >= 1 && c[1] >= 1);
}

static void test_bad_files(void)
{
    sleapc_h5 *f = NULL;
    CHECK(sleapc__h5_open(test_tmp_path("does_not_exist.h5"), &f) == SLEAPC_ERR_IO && !f);
    CHECK(sleapc__h5_open(test_tmp_dir(), &f) == SLEAPC_ERR_IO && !f);
    const char *txt = test_tmp_path("text.h5");
    CHECK(test_write_file(txt, "just some text, not HDF5\n", 25));
    sleapc_status st = sleapc__h5_open(txt, &f);
    CHECK(st == SLEAPC_ERR_FORMAT && !f && has_text(sleapc_last_error(), "not an HDF5 file"));
    CHECK(test_write_file(txt, "", 0));
    CHECK(sleapc__h5_open(txt, &f) == SLEAPC_ERR_FORMAT && !f);

    /* Every truncation of a valid file fails cleanly (libhdf5 checks the
     * end-of-file address in the superblock). */
    size_t size = 0;
    unsigned char *whole = test_read_file(test_tmp_path("sample.h5"), &size);
    CHECK(whole && size > 1000);
    const char *cut = test_tmp_path("cut.h5");
    int n_failed = 0, n_tried = 0;
    for (size_t len = 8; whole && len < size; len += size / 23 + 1) {
        CHECK(test_write_file(cut, whole, len));
        n_tried++;
        st = sleapc__h5_open(cut, &f);
        if (st) {
            n_failed++;
            CHECK(st == SLEAPC_ERR_FORMAT && !f);
            continue;
        }
        /* Opened anyway: every read must still fail or succeed cleanly. */
        void *data = NULL;
        if (!sleapc__h5_read(f, "grp/sub/matrix", SLEAPC_H5_F32, &data, NULL))
            sleapc__free(data);
        sleapc__h5_close(f);
    }
    CHECK_MSG(n_failed == n_tried, "%d of %d truncations opened", n_tried - n_failed, n_tried);
    free(whole);

    /* A real file from the data folder, cut in half. */
    if (test_data_dir()) {
        unsigned char *slp =
            test_read_file(test_data_path("sleap-io-written/predictions.slp"), &size);
        if (slp) {
            CHECK(test_write_file(cut, slp, size / 2));
            CHECK(sleapc__h5_open(cut, &f) == SLEAPC_ERR_FORMAT && !f);
            CHECK(has_text(sleapc_last_error(), "truncated"));
        }
        free(slp);
    }
}

static void test_atomic(void)
{
    const char *path = test_tmp_path("atomic.h5");
    sleapc_h5 *f = NULL;
    int64_t one = 1;
    double v = 2.5;
    CHECK_OK(sleapc__h5_create_atomic(path, &f));
    CHECK(f && !exists(path) && count_prefixed("atomic.h5.tmp") == 1);
    CHECK_OK(sleapc__h5_write(f, "v", SLEAPC_H5_F64, 1, &one, &v, NULL));
    sleapc__h5_discard(f);
    CHECK(!exists(path) && count_prefixed("atomic.h5.tmp") == 0);

    CHECK_OK(sleapc__h5_create_atomic(path, &f));
    CHECK_OK(sleapc__h5_write(f, "v", SLEAPC_H5_F64, 1, &one, &v, NULL));
    CHECK_OK(sleapc__h5_close(f));
    CHECK(exists(path) && count_prefixed("atomic.h5.tmp") == 0);
    double back = 0;
    CHECK_OK(sleapc__h5_open(path, &f));
    CHECK_OK(sleapc__h5_read_into(f, "v", SLEAPC_H5_F64, &back, 1));
    CHECK(back == 2.5);
    sleapc__h5_close(f);
    /* Writing the same name twice is refused. */
    CHECK_OK(sleapc__h5_create(test_tmp_path("twice.h5"), &f));
    CHECK_OK(sleapc__h5_write(f, "v", SLEAPC_H5_F64, 1, &one, &v, NULL));
    CHECK(sleapc__h5_write(f, "v", SLEAPC_H5_F64, 1, &one, &v, NULL) == SLEAPC_ERR_INVALID_ARG);
    sleapc__h5_close(f);
    CHECK(sleapc__h5_create_atomic(test_tmp_path("no_such_dir/x.h5"), &f) == SLEAPC_ERR_IO && !f);
}

/* A system call's failure is told as one reason naming the file once, not
 * as libhdf5's raw record (path, errno, flags, time). */
static void test_clean_errors(void)
{
    const char *path = test_tmp_path("no_such_dir/plain.h5");
    sleapc_h5 *f = NULL;
    CHECK(sleapc__h5_create(path, &f) == SLEAPC_ERR_IO && !f);
    const char *msg = sleapc_last_error();
    const char *first = strstr(msg, path);
    CHECK_MSG(first && !strstr(first + strlen(path), "plain.h5") &&
                  strstr(msg, "No such file or directory") && !strstr(msg, "errno") &&
                  !strstr(msg, "flags"),
              "%s", msg);
}

/* Fail each allocation of a read session in turn: every failure is a
 * clean status (ASan checks that nothing leaks). */
static void test_alloc_failures(void)
{
    const char *path = test_tmp_path("sample.h5");
    int n_fail = 0;
    for (int64_t k = 1; k < 200; k++) {
        sleapc__alloc_fail_after(k);
        sleapc_h5 *f = NULL;
        sleapc_status st = sleapc__h5_open(path, &f);
        char **strs = NULL;
        int64_t n = 0;
        void *rows = NULL;
        int64_t n_rows = 0;
        if (!st)
            st = sleapc__h5_read_strings(f, "strs", &strs, &n);
        if (!st)
            st = sleapc__h5_read_compound(f, "table", rec_fields, 3, sizeof(rec), &rows, &n_rows);
        char **names = NULL;
        int64_t n_names = 0;
        if (!st)
            st = sleapc__h5_list(f, "/", &names, &n_names);
        sleapc__alloc_fail_after(0);
        sleapc__h5_free_strings(strs, n);
        sleapc__h5_free_strings(names, n_names);
        sleapc__free(rows);
        sleapc__h5_close(f);
        if (!st)
            break;
        n_fail++;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "allocation %lld: %s", (long long)k, sleapc_last_error());
    }
    CHECK(n_fail > 3);
}

int main(void)
{
    test_round_trips();
    test_guess_chunk();
    test_bad_files();
    test_atomic();
    test_clean_errors();
    test_alloc_failures();
    return test_finish();
}
