/* .npy reader/writer: the reference arrays read with the dtype, shape and
 * statistics their manifest records and write back byte-identical; writes
 * round-trip; bad files fail cleanly. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "io/npy/npy_file.h"
#include "test_util.h"

static const cJSON *manifest_entry(const cJSON *arrays, const char *file)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arrays)
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "file");
        if (cJSON_IsString(f) && strcmp(f->valuestring, file) == 0)
            return e;
    }
    return NULL;
}

static void check_against_manifest(const char *path, const cJSON *entry)
{
    sleapc_tensor t;
    sleapc_status st = sleapc__npy_read(path, &t);
    CHECK_MSG(st == SLEAPC_OK, "%s", sleapc_last_error());
    if (st)
        return;
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    CHECK_MSG(cJSON_IsString(dtype) && strcmp(dtype->valuestring, sleapc_dtype_name(t.dtype)) == 0,
              "%s: dtype %s", path, sleapc_dtype_name(t.dtype));
    CHECK_MSG(cJSON_GetArraySize(shape) == t.ndim, "%s: ndim %d", path, t.ndim);
    for (int i = 0; i < t.ndim && i < cJSON_GetArraySize(shape); i++)
        CHECK_MSG((int64_t)cJSON_GetArrayItem(shape, i)->valuedouble == t.shape[i],
                  "%s: dim %d is %lld", path, i, (long long)t.shape[i]);

    if (t.dtype == SLEAPC_DTYPE_F32) {
        const float *v = t.data;
        int64_t n = sleapc_tensor_numel(&t), n_nan = 0;
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i])) {
                n_nan++;
                continue;
            }
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        const cJSON *jn = cJSON_GetObjectItemCaseSensitive(entry, "n_nan");
        const cJSON *jmin = cJSON_GetObjectItemCaseSensitive(entry, "min");
        const cJSON *jmax = cJSON_GetObjectItemCaseSensitive(entry, "max");
        CHECK_MSG(cJSON_IsNumber(jn) && (int64_t)jn->valuedouble == n_nan, "%s: %lld NaNs", path,
                  (long long)n_nan);
        /* The manifest holds float32 values printed as doubles, so the
         * extremes match exactly once cast back to float32. */
        if (cJSON_IsNumber(jmin))
            CHECK_MSG((float)jmin->valuedouble == lo, "%s: min %.9g", path, lo);
        if (cJSON_IsNumber(jmax))
            CHECK_MSG((float)jmax->valuedouble == hi, "%s: max %.9g", path, hi);
    }

    /* Written back, the file is byte-identical to numpy's. */
    CHECK_OK(sleapc__npy_write(test_tmp_path("copy.npy"), &t));
    size_t n_orig = 0, n_copy = 0;
    unsigned char *orig = test_read_file(path, &n_orig);
    unsigned char *copy = test_read_file(test_tmp_path("copy.npy"), &n_copy);
    CHECK_MSG(orig && copy && n_orig == n_copy && memcmp(orig, copy, n_orig) == 0,
              "%s: rewritten file differs", path);
    free(orig);
    free(copy);
    sleapc__free(t.data);
}

/* Every .npy in a reference case folder against its manifest.json. */
static void test_reference_case(const char *case_rel)
{
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s", test_data_path(case_rel));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    size_t size = 0;
    unsigned char *text = test_read_file(path, &size);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    cJSON *manifest = cJSON_ParseWithLength((const char *)text, size);
    free(text);
    const cJSON *arrays = cJSON_GetObjectItemCaseSensitive(manifest, "arrays");
    CHECK_MSG(cJSON_IsObject(arrays), "%s: no arrays", path);

    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int n_files = 0;
    bool seen[3] = {false, false, false}; /* uint8, float32, int64 */
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".npy") != 0)
            continue;
        n_files++;
        const cJSON *entry = manifest_entry(arrays, e->d_name);
        CHECK_MSG(entry != NULL, "%s is not in the manifest", e->d_name);
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!entry || n < 0 || (size_t)n >= sizeof path)
            continue;
        const char *dt = cJSON_GetObjectItemCaseSensitive(entry, "dtype")->valuestring;
        seen[0] |= strcmp(dt, "uint8") == 0;
        seen[1] |= strcmp(dt, "float32") == 0;
        seen[2] |= strcmp(dt, "int64") == 0;
        check_against_manifest(path, entry);
    }
    if (d)
        closedir(d);
    CHECK_MSG(n_files == cJSON_GetArraySize(arrays), "%s: %d files, %d manifest entries", case_rel,
              n_files, cJSON_GetArraySize(arrays));
    CHECK(seen[0] && seen[1] && seen[2]);
    cJSON_Delete(manifest);
}

/* No ".tmp" files left behind in the temporary folder. */
static bool no_temp_files(void)
{
    DIR *d = opendir(test_tmp_dir());
    bool clean = d != NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp"))
            clean = false;
    if (d)
        closedir(d);
    return clean;
}

static void test_round_trip(void)
{
    static const sleapc_dtype dtypes[] = {SLEAPC_DTYPE_F32, SLEAPC_DTYPE_U8, SLEAPC_DTYPE_I32,
                                          SLEAPC_DTYPE_I64};
    static const struct {
        int ndim;
        int64_t shape[3];
    } shapes[] = {{0, {0}}, {1, {0}}, {1, {3}}, {3, {2, 3, 4}}};
    unsigned char src[24 * 8];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 37 + 11);
    for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            sleapc_tensor t = {.dtype = dtypes[di], .ndim = shapes[si].ndim, .data = src};
            memcpy(t.shape, shapes[si].shape, sizeof shapes[si].shape);
            char name[64];
            snprintf(name, sizeof name, "rt_%s_%zu.npy", sleapc_dtype_name(t.dtype), si);
            const char *path = test_tmp_path(name);
            CHECK_OK(sleapc__npy_write(path, &t));

            /* A v1.0 header padded to 64 bytes, ending in '\n'. */
            size_t size = 0;
            unsigned char *raw = test_read_file(path, &size);
            size_t nbytes = (size_t)sleapc_tensor_numel(&t) * sleapc_dtype_size(t.dtype);
            CHECK(raw && size >= 10 && memcmp(raw, "\x93NUMPY\x01\x00", 8) == 0);
            size_t hlen = raw ? raw[8] | (size_t)raw[9] << 8 : 0;
            CHECK((10 + hlen) % 64 == 0 && size == 10 + hlen + nbytes);
            CHECK(raw && raw[10 + hlen - 1] == '\n');
            free(raw);

            sleapc_tensor back;
            CHECK_OK(sleapc__npy_read(path, &back));
            CHECK(back.dtype == t.dtype && back.ndim == t.ndim);
            for (int k = 0; k < t.ndim; k++)
                CHECK(back.shape[k] == t.shape[k]);
            CHECK(back.data && memcmp(back.data, src, nbytes) == 0);
            sleapc__free(back.data);
        }
    }
    /* Overwriting replaces the whole file. */
    float one[1] = {1.5f}, two[2] = {2.5f, -3.0f};
    sleapc_tensor a = {.dtype = SLEAPC_DTYPE_F32, .ndim = 1, .shape = {1}, .data = one};
    sleapc_tensor b = {.dtype = SLEAPC_DTYPE_F32, .ndim = 1, .shape = {2}, .data = two};
    sleapc_tensor back;
    CHECK_OK(sleapc__npy_write(test_tmp_path("over.npy"), &a));
    CHECK_OK(sleapc__npy_write(test_tmp_path("over.npy"), &b));
    CHECK_OK(sleapc__npy_read(test_tmp_path("over.npy"), &back));
    CHECK(back.shape[0] == 2 && ((float *)back.data)[1] == -3.0f);
    sleapc__free(back.data);
    CHECK(no_temp_files());
}

/* A file with the given version, header text (padded here when pad is set)
 * and data bytes. */
static const char *make_npy(const char *name, int major, const char *header, bool pad,
                            const void *data, size_t data_len)
{
    unsigned char buf[1024];
    size_t prefix = major == 1 ? 10 : 12, len = strlen(header);
    size_t hlen = len;
    if (pad)
        hlen = (prefix + len + 1 + 63) / 64 * 64 - prefix;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(buf + prefix, header, len);
    if (pad) {
        memset(buf + prefix + len, ' ', hlen - len - 1);
        buf[prefix + hlen - 1] = '\n';
    }
    if (data_len)
        memcpy(buf + prefix + hlen, data, data_len);
    const char *path = test_tmp_path(name);
    test_write_file(path, buf, prefix + hlen + data_len);
    return path;
}

static void test_other_headers(void)
{
    sleapc_tensor t;
    /* v2.0 header, '<f8' converted to float32. */
    double d[3] = {0.25, -1e300, 3.0};
    const char *path = make_npy("f8.npy", 2,
                                "{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (3,), }",
                                true, d, sizeof d);
    CHECK_OK(sleapc__npy_read(path, &t));
    CHECK(t.dtype == SLEAPC_DTYPE_F32 && t.ndim == 1 && t.shape[0] == 3);
    const float *f = t.data;
    CHECK(f && f[0] == 0.25f && isinf(f[1]) && f[1] < 0 && f[2] == 3.0f);
    sleapc__free(t.data);
    /* Booleans become 0/1 bytes; double quotes, key order and Python 2 'L' dims are accepted. */
    unsigned char b[4] = {0, 1, 0, 1};
    path = make_npy("b1.npy", 1,
                    "{\"shape\": (2L, 2L), \"fortran_order\": False, "
                    "\"descr\": \"|b1\"}",
                    true, b, sizeof b);
    CHECK_OK(sleapc__npy_read(path, &t));
    CHECK(t.dtype == SLEAPC_DTYPE_U8 && t.ndim == 2 && t.shape[1] == 2);
    CHECK(t.data && memcmp(t.data, b, 4) == 0);
    sleapc__free(t.data);
    /* A scalar. */
    int32_t s = -7;
    path = make_npy("scalar.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': ()}", true,
                    &s, sizeof s);
    CHECK_OK(sleapc__npy_read(path, &t));
    CHECK(t.ndim == 0 && sleapc_tensor_numel(&t) == 1 && *(int32_t *)t.data == -7);
    sleapc__free(t.data);
}

static void expect_bad(const char *path, sleapc_status want, const char *needle)
{
    sleapc_tensor t;
    sleapc_status st = sleapc__npy_read(path, &t);
    const char *msg = sleapc_last_error();
    CHECK_MSG(st == want, "%s: got %s (%s)", path, sleapc_status_str(st), msg);
    CHECK_MSG(strstr(msg, path) != NULL, "message lacks the path: %s", msg);
    CHECK_MSG(!needle || strstr(msg, needle), "lacks '%s': %s", needle, msg);
    CHECK(t.data == NULL);
}

#define HDR(descr, fortran, shape)                                                                 \
    "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

static void test_corrupt(void)
{
    float data[4] = {1, 2, 3, 4};
    unsigned char bytes[64] = "\x93NUMPY\x01\x00\xc8\x00{'descr'";
    test_write_file(test_tmp_path("trunc.npy"), bytes, 8);
    expect_bad(test_tmp_path("trunc.npy"), SLEAPC_ERR_FORMAT, "truncated");
    test_write_file(test_tmp_path("trunc2.npy"), bytes, 20);
    expect_bad(test_tmp_path("trunc2.npy"), SLEAPC_ERR_FORMAT, "truncated");
    memcpy(bytes, "\x93NUMPX", 6);
    test_write_file(test_tmp_path("magic.npy"), bytes, sizeof bytes);
    expect_bad(test_tmp_path("magic.npy"), SLEAPC_ERR_FORMAT, "magic");
    expect_bad(make_npy("v4.npy", 4, HDR("<f4", "False", "(4,)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "version");
    expect_bad(make_npy("fortran.npy", 1, HDR("<f4", "True", "(2, 2)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "Fortran");
    expect_bad(make_npy("big.npy", 1, HDR(">f4", "False", "(4,)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "big-endian");
    expect_bad(make_npy("object.npy", 1, HDR("|O", "False", "(2,)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "object");
    expect_bad(make_npy("f2.npy", 1, HDR("<f2", "False", "(8,)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "dtype");
    expect_bad(make_npy("short.npy", 1, HDR("<f4", "False", "(5,)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "bytes");
    expect_bad(make_npy("long.npy", 1, HDR("<f4", "False", "(3,)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "bytes");
    expect_bad(make_npy("absurd.npy", 1,
                        HDR("<f4", "False", "(4294967296, 4294967296, 4294967296)"), true, data,
                        16),
               SLEAPC_ERR_FORMAT, "too large");
    expect_bad(
        make_npy("bigdim.npy", 1, HDR("<f4", "False", "(99999999999999999999,)"), true, data, 16),
        SLEAPC_ERR_FORMAT, "dimension");
    expect_bad(make_npy("7d.npy", 1, HDR("<f4", "False", "(1, 1, 1, 1, 1, 1, 4)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "dimensions");
    expect_bad(make_npy("notuple.npy", 1, HDR("<f4", "False", "(4)"), true, data, 16),
               SLEAPC_ERR_FORMAT, "tuple");
    expect_bad(make_npy("nokey.npy", 1, "{'descr': '<f4', 'shape': (4,), }", true, data, 16),
               SLEAPC_ERR_FORMAT, "lacks");
    expect_bad(make_npy("twice.npy", 1,
                        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': "
                        "False, 'shape': (4,), }",
                        true, data, 16),
               SLEAPC_ERR_FORMAT, "repeated");
    expect_bad(make_npy("extra.npy", 1,
                        "{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (4,), 'x': 1}",
                        true, data, 16),
               SLEAPC_ERR_FORMAT, "'x'");
    expect_bad(make_npy("struct.npy", 1,
                        "{'descr': [('a', '<f4')], 'fortran_order': False, "
                        "'shape': (4,), }",
                        true, data, 16),
               SLEAPC_ERR_FORMAT, "structured");
    expect_bad(make_npy("nonl.npy", 1, HDR("<f4", "False", "(4,)") "   ", false, data, 16),
               SLEAPC_ERR_FORMAT, "newline");
    expect_bad(make_npy("garbage.npy", 1, "{'descr': '<f4'; 'x'}", true, data, 16),
               SLEAPC_ERR_FORMAT, "malformed");
    expect_bad(make_npy("empty_hdr.npy", 1, "", false, data, 16), SLEAPC_ERR_FORMAT, NULL);

    expect_bad(test_tmp_path("does_not_exist.npy"), SLEAPC_ERR_IO, NULL);
    expect_bad(test_tmp_dir(), SLEAPC_ERR_IO, "is a directory");
}

static void test_write_errors(void)
{
    float v[2] = {1, 2};
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32, .ndim = 1, .shape = {2}, .data = v};
    /* No such folder; the target is a folder: the temp file is removed. */
    CHECK(sleapc__npy_write(test_tmp_path("no_dir/x.npy"), &t) == SLEAPC_ERR_IO);
    CHECK(strstr(sleapc_last_error(), "no_dir/x.npy") != NULL);
    mkdir(test_tmp_path("a_dir.npy"), 0700);
    CHECK(sleapc__npy_write(test_tmp_path("a_dir.npy"), &t) == SLEAPC_ERR_IO);
    CHECK(no_temp_files());
    sleapc_tensor bad = t;
    bad.ndim = 7;
    CHECK(sleapc__npy_write(test_tmp_path("bad.npy"), &bad) == SLEAPC_ERR_INVALID_ARG);
    bad = t;
    bad.shape[0] = -1;
    CHECK(sleapc__npy_write(test_tmp_path("bad.npy"), &bad) == SLEAPC_ERR_INVALID_ARG);
    bad = t;
    bad.data = NULL;
    CHECK(sleapc__npy_write(test_tmp_path("bad.npy"), &bad) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__npy_write(NULL, &t) == SLEAPC_ERR_INVALID_ARG);
    sleapc_tensor out;
    CHECK(sleapc__npy_read(NULL, &out) == SLEAPC_ERR_INVALID_ARG);
}

/* Fail the Nth allocation until the call succeeds: each failure is a clean
 * SLEAPC_ERR_NOMEM (ASan checks for leaks). */
static void test_alloc_failures(void)
{
    int32_t v[6] = {1, 2, 3, 4, 5, 6};
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_I32, .ndim = 2, .shape = {2, 3}, .data = v};
    const char *path = test_tmp_path("alloc.npy");
    int n, n_fail = 0;
    for (n = 1; n < 100; n++) {
        sleapc__alloc_fail_after(n);
        sleapc_status st = sleapc__npy_write(path, &t);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK)
            break;
        n_fail++;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "write n=%d: %s", n, sleapc_last_error());
    }
    CHECK(n_fail >= 1 && n < 100 && no_temp_files());
    n_fail = 0;
    for (n = 1; n < 100; n++) {
        sleapc_tensor back;
        sleapc__alloc_fail_after(n);
        sleapc_status st = sleapc__npy_read(path, &back);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            CHECK(memcmp(back.data, v, sizeof v) == 0);
            sleapc__free(back.data);
            break;
        }
        n_fail++;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM && back.data == NULL, "read n=%d: %s", n,
                  sleapc_last_error());
    }
    CHECK(n_fail >= 2 && n < 100);
}

int main(void)
{
    test_require_data();
    test_round_trip();
    test_other_headers();
    test_corrupt();
    test_write_errors();
    test_alloc_failures();
    test_reference_case("reference/single_instance__small_robot_f0000");
    test_reference_case("reference/multiclass_topdown__centered_pair_f0000");
    return test_finish();
}
