/* .npz reading: arrays stored or deflated in a hand-built zip read back with
 * their dtype, shape and values; a missing key, a damaged entry, a bad
 * archive or a missing file fail with a message naming file and key; and
 * onnxruntime's outputs of a sleap-nn 0.3.5 export case (np.savez) read as
 * their manifest describes them. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/ckpt/ckpt_zip.h"
#include "io/npy/npy_file.h"
#include "io/npy/npz_read.h"
#include "test_util.h"

typedef struct bytes {
    uint8_t p[1 << 14];
    size_t n;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
    if (b->n + n <= sizeof b->p) {
        memcpy(b->p + b->n, src, n);
        b->n += n;
    }
}

static void put_le(bytes *b, uint64_t x, int k)
{
    for (int i = 0; i < k; i++) {
        uint8_t c = (uint8_t)(x >> (8 * i));
        put(b, &c, 1);
    }
}

typedef struct entry {
    const char *name;
    const uint8_t *data;
    size_t n;
    bool deflate;
} entry;

/* A zip of the entries; a deflated one's payload is raw deflate. */
static void make_zip(bytes *z, const entry *e, int n)
{
    static uint8_t packed[4][4096];
    size_t packed_n[4];
    uint64_t offs[4];
    z->n = 0;
    for (int i = 0; i < n && i < 4; i++) {
        packed_n[i] = e[i].n;
        if (e[i].deflate) {
            z_stream zs = {0};
            CHECK(deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
            zs.next_in = (Bytef *)(uintptr_t)e[i].data;
            zs.avail_in = (uInt)e[i].n;
            zs.next_out = packed[i];
            zs.avail_out = sizeof packed[i];
            CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
            packed_n[i] = zs.total_out;
            deflateEnd(&zs);
        } else {
            memcpy(packed[i], e[i].data, e[i].n);
        }
        offs[i] = z->n;
        put_le(z, 0x04034b50u, 4);
        put_le(z, 20, 2);
        put_le(z, 0, 2);
        put_le(z, e[i].deflate ? 8 : 0, 2);
        put_le(z, 0, 4);
        put_le(z, sleapc__zip_crc32(0, e[i].data, e[i].n), 4);
        put_le(z, packed_n[i], 4);
        put_le(z, e[i].n, 4);
        put_le(z, strlen(e[i].name), 2);
        put_le(z, 0, 2);
        put(z, e[i].name, strlen(e[i].name));
        put(z, packed[i], packed_n[i]);
    }
    uint64_t cd = z->n;
    for (int i = 0; i < n && i < 4; i++) {
        put_le(z, 0x02014b50u, 4);
        put_le(z, 20, 2);
        put_le(z, 20, 2);
        put_le(z, 0, 2);
        put_le(z, e[i].deflate ? 8 : 0, 2);
        put_le(z, 0, 4);
        put_le(z, sleapc__zip_crc32(0, e[i].data, e[i].n), 4);
        put_le(z, packed_n[i], 4);
        put_le(z, e[i].n, 4);
        put_le(z, strlen(e[i].name), 2);
        put_le(z, 0, 6); /* extra and comment lengths, disk */
        put_le(z, 0, 6); /* internal and external attributes */
        put_le(z, offs[i], 4);
        put(z, e[i].name, strlen(e[i].name));
    }
    uint64_t cd_size = z->n - cd;
    put_le(z, 0x06054b50u, 4);
    put_le(z, 0, 4);
    put_le(z, (uint64_t)n, 2);
    put_le(z, (uint64_t)n, 2);
    put_le(z, cd_size, 4);
    put_le(z, cd, 4);
    put_le(z, 0, 2);
}

/* The bytes of t as a .npy file. */
static uint8_t *npy_bytes(const sleapc_tensor *t, size_t *n)
{
    const char *path = test_tmp_path("a.npy");
    CHECK_OK(sleapc__npy_write(path, t));
    return test_read_file(path, n);
}

static void expect_fail(const char *path, const char *key, sleapc_status want, const char *needle)
{
    sleapc_tensor t;
    sleapc_status st = sleapc__npz_read(path, key, &t);
    CHECK_MSG(st == want && strstr(sleapc_last_error(), needle),
              "%s[%s]: status %d, \"%s\" (want %d with \"%s\")", path, key, (int)st,
              sleapc_last_error(), (int)want, needle);
    if (st == SLEAPC_OK)
        free(t.data);
}

static void test_round_trip(void)
{
    float f[6] = {1.5f, -2, 3, 4, 5, 6e-20f};
    int64_t i[3] = {-1, 0, (int64_t)1 << 40};
    uint8_t b[4] = {1, 0, 0, 1};
    sleapc_tensor tf = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {2, 3}, .data = f};
    sleapc_tensor ti = {.dtype = SLEAPC_DTYPE_I64, .ndim = 1, .shape = {3}, .data = i};
    sleapc_tensor tb = {.dtype = SLEAPC_DTYPE_U8, .ndim = 3, .shape = {1, 2, 2}, .data = b};
    size_t nf = 0, ni = 0, nb = 0;
    uint8_t *bf = npy_bytes(&tf, &nf), *bi = npy_bytes(&ti, &ni), *bb = npy_bytes(&tb, &nb);
    entry e[3] = {{"peaks.npy", bf, nf, false}, {"idx.npy", bi, ni, true}, {"m.npy", bb, nb, true}};
    static bytes z;
    make_zip(&z, e, 3);
    const char *path = test_tmp_path("ok.npz");
    CHECK(test_write_file(path, z.p, z.n));
    sleapc_tensor t;
    CHECK_OK(sleapc__npz_read(path, "peaks", &t));
    CHECK(t.dtype == SLEAPC_DTYPE_F32 && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 3 &&
          memcmp(t.data, f, sizeof f) == 0);
    free(t.data);
    CHECK_OK(sleapc__npz_read(path, "idx", &t));
    CHECK(t.dtype == SLEAPC_DTYPE_I64 && t.ndim == 1 && t.shape[0] == 3 &&
          memcmp(t.data, i, sizeof i) == 0);
    free(t.data);
    CHECK_OK(sleapc__npz_read(path, "m", &t));
    CHECK(t.dtype == SLEAPC_DTYPE_U8 && t.ndim == 3 && memcmp(t.data, b, sizeof b) == 0);
    free(t.data);
    expect_fail(path, "peak", SLEAPC_ERR_FORMAT, "no array \"peak\"");
    expect_fail(path, "peaks.npy", SLEAPC_ERR_FORMAT, "ok.npz");

    /* A flipped payload byte: the CRC-32 catches it. */
    make_zip(&z, e, 3);
    /* The first entry's payload follows its 30-byte header and its name. */
    z.p[30 + strlen(e[0].name) + 20] ^= 0x40; /* inside the .npy header text */
    path = test_tmp_path("flipped.npz");
    CHECK(test_write_file(path, z.p, z.n));
    expect_fail(path, "peaks", SLEAPC_ERR_FORMAT, "damaged");
    /* A deflated payload cut short. */
    entry big = {"idx.npy", bi, ni, true};
    make_zip(&z, &big, 1);
    size_t local = 30 + strlen(big.name);
    path = test_tmp_path("cut.npz");
    /* Zero the second half of the deflate stream. */
    for (size_t k = local + (z.n - local) / 3; k < local + (z.n - local) / 2; k++)
        z.p[k] = 0;
    CHECK(test_write_file(path, z.p, z.n));
    expect_fail(path, "idx", SLEAPC_ERR_FORMAT, "idx");
    free(bf);
    free(bi);
    free(bb);
}

static void test_bad_files(void)
{
    const char *path = test_tmp_path("not_a_zip.npz");
    CHECK(test_write_file(path, "hello, this is not a zip archive at all", 39));
    expect_fail(path, "x", SLEAPC_ERR_FORMAT, "not_a_zip.npz");
    path = test_tmp_path("empty.npz");
    CHECK(test_write_file(path, "", 0));
    expect_fail(path, "x", SLEAPC_ERR_FORMAT, "empty.npz");
    expect_fail(test_tmp_path("missing.npz"), "x", SLEAPC_ERR_IO, "missing.npz");
    expect_fail(test_tmp_dir(), "x", SLEAPC_ERR_IO, "not a regular file");
    /* An entry that is not a .npy. */
    entry e = {"x.npy", (const uint8_t *)"just text", 9, false};
    static bytes z;
    make_zip(&z, &e, 1);
    path = test_tmp_path("text.npz");
    CHECK(test_write_file(path, z.p, z.n));
    expect_fail(path, "x", SLEAPC_ERR_FORMAT, "text.npz[x]");
}

/* Reference data: a bottom-up case's onnxruntime outputs. */
static void test_reference(void)
{
    if (!test_data_dir())
        return;
    const char *path =
        test_data_path("sleapnn-0.3.5/exports/bottomup/cases/centered_pair_f0000/ort_outputs.npz");
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    fclose(f);
    sleapc_tensor t;
    CHECK_OK(sleapc__npz_read(path, "peaks", &t));
    CHECK(t.dtype == SLEAPC_DTYPE_F32 && t.ndim == 4 && t.shape[0] == 1 && t.shape[1] == 2 &&
          t.shape[2] == 20 && t.shape[3] == 2);
    free(t.data);
    CHECK_OK(sleapc__npz_read(path, "candidate_mask", &t));
    CHECK(t.dtype == SLEAPC_DTYPE_U8 && t.ndim == 3 && t.shape[2] == 400);
    int n_true = 0;
    for (int64_t k = 0; t.data && k < sleapc_tensor_numel(&t); k++)
        n_true += ((const uint8_t *)t.data)[k] == 1;
    CHECK(n_true > 0);
    free(t.data);
}

int main(void)
{
    test_round_trip();
    test_bad_files();
    test_reference();
    return test_finish();
}
