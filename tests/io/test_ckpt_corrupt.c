/* Damaged and hostile checkpoints: every case ends in a clean status with a
 * message (or, for harmless damage, in sane weights), never in a crash, an
 * out-of-bounds read or a leak (the sanitizer build checks the last two). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/ckpt/ckpt.h"
#include "io/ckpt/ckpt_zip.h"
#include "test_util.h"

#define PKL_NAME "best/data.pkl"
#define REAL_CKPT "sleap-nn-assets/model_ckpts/minimal_instance_single_instance/best.ckpt"

static uint32_t rng_state = 12345u;

static uint32_t rng(void)
{
    /* xorshift32: a fixed sequence, so a failure reproduces. */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void wr32(uint8_t *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Weights that came back OK must at least be well-formed. */
static int sane(const sleapc_weights *w, size_t file_size)
{
    for (int i = 0; i < w->n; i++) {
        const sleapc_weight *t = &w->items[i];
        if (!t->name || !t->name[0] || t->ndim < 0 || t->ndim > SLEAPC_WEIGHT_MAX_DIMS ||
            !t->data)
            return 0;
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] < 0)
                return 0;
        /* Each element came from at least one byte of the file. */
        if ((uint64_t)sleapc__weight_numel(t) > file_size)
            return 0;
        volatile float sink = 0;
        for (int64_t k = 0; k < sleapc__weight_numel(t); k++)
            sink += t->data[k];
        (void)sink;
    }
    return 1;
}

/* Read a private copy of exactly size bytes, so any over-read is caught. */
static sleapc_status read_copy(const uint8_t *src, size_t size, sleapc_weights *w)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, src, size);
    sleapc_status st = sleapc__ckpt_read_buffer(size ? copy : NULL, size, "mutant", w);
    free(copy);
    return st;
}

static int outcome_ok(const uint8_t *buf, size_t size)
{
    sleapc_weights w = {0};
    sleapc_status st = read_copy(buf, size, &w);
    int ok = st == SLEAPC_OK ? sane(&w, size) : sleapc_last_error()[0] != '\0';
    sleapc__weights_clear(&w);
    return ok;
}

static sleapc_status expect_status(const uint8_t *buf, size_t size, const char *needle)
{
    sleapc_weights w = {0};
    sleapc_status st = read_copy(buf, size, &w);
    CHECK_MSG(st != SLEAPC_OK && w.n == 0 && strstr(sleapc_last_error(), needle),
              "want failure mentioning \"%s\", got %s: %s", needle, sleapc_status_str(st),
              sleapc_last_error());
    sleapc__weights_clear(&w);
    return st;
}

static uint8_t *find_bytes(uint8_t *hay, size_t n, const void *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

/* The central-directory record of an entry, found by its name. */
static uint8_t *central_record(uint8_t *buf, size_t size, const char *name)
{
    size_t k = strlen(name);
    for (size_t i = 0; i + 46 + k <= size; i++)
        if (rd32(buf + i) == 0x02014b50u && buf[i + 28] == k && buf[i + 29] == 0 &&
            memcmp(buf + i + 46, name, k) == 0)
            return buf + i;
    return NULL;
}

/* Record the CRC-32 of an edited payload, so the edit reaches the parser
 * behind the archive's integrity check. */
static void set_crc(uint8_t *buf, size_t size, const char *name, const uint8_t *payload,
                    size_t n)
{
    uint8_t *cd = central_record(buf, size, name);
    CHECK(cd != NULL);
    if (cd)
        wr32(cd + 16, sleapc__zip_crc32(0, payload, n));
}

/* ---- the file-level cases ---- */

static void check_paths(const uint8_t *real, size_t size)
{
    const char *dir = test_tmp_dir();
    char path[512];
    sleapc_weights w = {0};

    snprintf(path, sizeof path, "%s/empty.ckpt", dir);
    CHECK(test_write_file(path, "", 0));
    CHECK(sleapc__ckpt_read(path, &w) == SLEAPC_ERR_FORMAT && sleapc_last_error()[0]);
    CHECK(strstr(sleapc_last_error(), path) != NULL);

    CHECK(sleapc__ckpt_read(dir, &w) == SLEAPC_ERR_IO && sleapc_last_error()[0]);
    snprintf(path, sizeof path, "%s/missing.ckpt", dir);
    CHECK(sleapc__ckpt_read(path, &w) == SLEAPC_ERR_IO && strstr(sleapc_last_error(), path));
    CHECK(w.n == 0 && w.items == NULL);

    snprintf(path, sizeof path, "%s/half.ckpt", dir);
    CHECK(test_write_file(path, real, size / 2));
    CHECK(sleapc__ckpt_read(path, &w) == SLEAPC_ERR_FORMAT);

    /* Every allocation failing in turn: NOMEM each time, until it works. */
    snprintf(path, sizeof path, "%s/whole.ckpt", dir);
    CHECK(test_write_file(path, real, size));
    sleapc_status st = SLEAPC_ERR_NOMEM;
    int64_t n;
    for (n = 1; n < 100000 && st != SLEAPC_OK; n++) {
        sleapc__alloc_fail_after(n);
        st = sleapc__ckpt_read(path, &w);
        sleapc__alloc_fail_after(0);
        if (st != SLEAPC_OK)
            CHECK_MSG(st == SLEAPC_ERR_NOMEM && w.n == 0 && sleapc_last_error()[0],
                      "allocation %lld: %s", (long long)n, sleapc_last_error());
    }
    printf("read survives failure of each of its first %lld allocations\n", (long long)n - 2);
    CHECK(st == SLEAPC_OK && w.n > 0);
    sleapc__weights_clear(&w);
}

static void check_truncation(const uint8_t *real, size_t size)
{
    for (int k = 0; k < 50; k++)
        CHECK(expect_status(real, size * (size_t)k / 50, "read checkpoint") != SLEAPC_OK);
    for (size_t cut = 1; cut <= 100; cut++)
        CHECK(expect_status(real, size - cut, "read checkpoint") != SLEAPC_OK);
}

static void check_flips(uint8_t *buf, size_t size, size_t pkl_off, size_t pkl_size)
{
    int bad = 0;
    size_t first = pkl_size < 2048 ? pkl_size : 2048;
    uint8_t *pkl = buf + pkl_off;
    /* Flipped pickle bytes with a matching CRC: the pickle parser's cases. */
    for (size_t i = 0; i < first; i++) {
        pkl[i] ^= 0xff;
        set_crc(buf, size, PKL_NAME, pkl, pkl_size);
        bad += !outcome_ok(buf, size);
        pkl[i] ^= 0xff;
    }
    for (int k = 0; k < 300; k++) {
        size_t i = rng() % pkl_size;
        uint8_t x = (uint8_t)(1 + rng() % 255);
        pkl[i] ^= x;
        set_crc(buf, size, PKL_NAME, pkl, pkl_size);
        bad += !outcome_ok(buf, size);
        pkl[i] ^= x;
    }
    set_crc(buf, size, PKL_NAME, pkl, pkl_size);
    /* Anywhere in the file: local headers, payloads, directory, end records. */
    for (int k = 0; k < 300; k++) {
        size_t i = rng() % size;
        uint8_t x = (uint8_t)(1 + rng() % 255);
        buf[i] ^= x;
        bad += !outcome_ok(buf, size);
        buf[i] ^= x;
    }
    CHECK_MSG(bad == 0, "%d flipped files gave OK with bad data or an empty message", bad);
}

/* expect_status on an archive whose pickle was edited in place (CRC updated). */
static sleapc_status expect_pkl(uint8_t *buf, size_t size, uint8_t *pkl, size_t pkl_size,
                                const char *needle)
{
    set_crc(buf, size, PKL_NAME, pkl, pkl_size);
    return expect_status(buf, size, needle);
}

static void check_targeted(uint8_t *buf, size_t size, uint8_t *pkl, size_t pkl_size)
{
    /* An opcode nobody defines, right after PROTO 2. */
    CHECK(pkl[0] == 0x80 && pkl[2] == '}');
    pkl[2] = 0xff;
    CHECK(expect_pkl(buf, size, pkl, pkl_size, "unknown pickle opcode 0xff at offset 2") ==
          SLEAPC_ERR_FORMAT);
    CHECK(strstr(sleapc_last_error(), "data.pkl") != NULL);
    pkl[2] = '}';

    /* A storage class this reader does not convert (same length as the
     * original, so the archive stays consistent). */
    uint8_t *cls = find_bytes(pkl, pkl_size, "FloatStorage", 12);
    CHECK(cls != NULL);
    if (cls) {
        memcpy(cls, "QInt8Storage", 12);
        CHECK(expect_pkl(buf, size, pkl, pkl_size,
                         "unsupported storage type torch.QInt8Storage") == SLEAPC_ERR_FORMAT);
        memcpy(cls, "FloatStorage", 12);
    }

    /* No state_dict key. */
    uint8_t *key = find_bytes(pkl, pkl_size, "state_dict", 10);
    CHECK(key != NULL);
    if (key) {
        key[9] = 'z';
        CHECK(expect_pkl(buf, size, pkl, pkl_size, "state_dict") == SLEAPC_ERR_FORMAT);
        key[9] = 't';
    }

    /* The first tensor (BINPERSID, offset BININT1 0, then its size tuple):
     * a larger first dimension or a storage offset needs more elements than
     * the storage has. */
    uint8_t *t0 = find_bytes(pkl, pkl_size, "QK\x00(K", 5);
    CHECK(t0 != NULL);
    if (t0) {
        t0[5]++;
        CHECK(expect_pkl(buf, size, pkl, pkl_size, "needs storage element") == SLEAPC_ERR_FORMAT);
        t0[5]--;
        t0[2] = 5;
        CHECK(expect_pkl(buf, size, pkl, pkl_size, "needs storage element") == SLEAPC_ERR_FORMAT);
        t0[2] = 0;
    }

    /* The storage entry shorter than the tensor needs: shrink its sizes in
     * the central directory (the reader's source for sizes). */
    uint8_t *cd = central_record(buf, size, "best/data/0");
    CHECK(cd != NULL);
    if (cd) {
        uint32_t n = rd32(cd + 24), crc = rd32(cd + 16);
        set_crc(buf, size, PKL_NAME, pkl, pkl_size);
        sleapc_zip z;
        CHECK_OK(sleapc__zip_open(buf, size, &z));
        const sleapc_zip_entry *e = sleapc__zip_find(&z, "best/data/0", 11);
        uint8_t *data0 = e ? buf + e->data_offset : NULL;
        sleapc__zip_close(&z);
        CHECK(data0 != NULL);
        wr32(cd + 20, n - 4);
        wr32(cd + 24, n - 4);
        if (data0)
            wr32(cd + 16, sleapc__zip_crc32(0, data0, n - 4));
        CHECK(expect_status(buf, size, "best/data/0") == SLEAPC_ERR_FORMAT);
        CHECK(strstr(sleapc_last_error(), "bytes") != NULL);
        wr32(cd + 20, n);
        wr32(cd + 24, n);
        wr32(cd + 16, crc);

        /* Damaged tensor bytes: refused by the record's CRC-32, never loaded
         * as wrong weights. */
        if (data0) {
            data0[n / 2] ^= 0x40;
            CHECK(expect_status(buf, size, "\"best/data/0\" is damaged (CRC-32") ==
                  SLEAPC_ERR_FORMAT);
            data0[n / 2] ^= 0x40;
        }
        /* A deflated entry is refused as unsupported. */
        cd[10] = 8;
        CHECK(expect_status(buf, size, "compressed") == SLEAPC_ERR_UNSUPPORTED);
        cd[10] = 0;
    }
    CHECK(outcome_ok(buf, size)); /* everything restored */
}

/* ---- handcrafted archives ---- */

typedef struct bytes {
    uint8_t p[1 << 16];
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
        uint8_t c = i < 8 ? (uint8_t)(x >> (8 * i)) : 0;
        put(b, &c, 1);
    }
}

/* A minimal stored zip: best/data.pkl, best/byteorder (if given) and
 * best/data/0 with storage bytes. */
static void make_zip(bytes *z, const void *pkl, size_t pkl_n, const char *byteorder,
                     const void *storage, size_t storage_n)
{
    const char *names[3] = {"best/data.pkl", "best/data/0", "best/byteorder"};
    const void *data[3] = {pkl, storage, byteorder};
    size_t lens[3] = {pkl_n, storage_n, byteorder ? strlen(byteorder) : 0};
    int n = byteorder ? 3 : 2;
    uint64_t offs[3];
    z->n = 0;
    for (int i = 0; i < n; i++) {
        offs[i] = z->n;
        put_le(z, 0x04034b50u, 4);
        put_le(z, 20, 2);
        put_le(z, 0, 2);
        put_le(z, 0, 2);
        put_le(z, 0, 4);
        put_le(z, sleapc__zip_crc32(0, data[i], lens[i]), 4);
        put_le(z, lens[i], 4);
        put_le(z, lens[i], 4);
        put_le(z, strlen(names[i]), 2);
        put_le(z, 0, 2);
        put(z, names[i], strlen(names[i]));
        put(z, data[i], lens[i]);
    }
    uint64_t cd = z->n;
    for (int i = 0; i < n; i++) {
        put_le(z, 0x02014b50u, 4);
        put_le(z, 20, 2);
        put_le(z, 20, 2);
        put_le(z, 0, 2);
        put_le(z, 0, 2);
        put_le(z, 0, 4);
        put_le(z, sleapc__zip_crc32(0, data[i], lens[i]), 4);
        put_le(z, lens[i], 4);
        put_le(z, lens[i], 4);
        put_le(z, strlen(names[i]), 2);
        put_le(z, 0, 6); /* extra and comment lengths, disk */
        put_le(z, 0, 6); /* internal and external attributes */
        put_le(z, offs[i], 4);
        put(z, names[i], strlen(names[i]));
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

static bytes zbuf, pbuf;

/* Pickle assembly helpers. */
static void op(int c)
{
    uint8_t b = (uint8_t)c;
    put(&pbuf, &b, 1);
}

static void text(const char *s)
{
    put(&pbuf, s, strlen(s));
}

/* A literal that may contain NUL bytes. */
#define TEXT_BYTES(lit) put(&pbuf, lit, sizeof lit - 1)

static void ustr(const char *s)
{
    op('X');
    put_le(&pbuf, strlen(s), 4);
    text(s);
}

static void int1(int x)
{
    op('K');
    op(x);
}

/* _rebuild_tensor_v2(('storage', torch.FloatStorage, '0', 'cpu', numel),
 * offset, size, stride, False, None) with 1-byte ints. */
static void tensor(int numel, int offset, int ndim, const int *size, const int *stride)
{
    text("ctorch._utils\n_rebuild_tensor_v2\n(");
    op('(');
    ustr("storage");
    text("ctorch\nFloatStorage\n");
    ustr("0");
    ustr("cpu");
    int1(numel);
    text("tQ");
    int1(offset);
    op('(');
    for (int i = 0; i < ndim; i++)
        int1(size[i]);
    op('t');
    op('(');
    for (int i = 0; i < ndim; i++)
        int1(stride[i]);
    text("t\x89Nt");
    op('R');
}

/* Start {'state_dict': {  ... and close with }} after the items. */
static void begin_state(void)
{
    pbuf.n = 0;
    text("\x80\x02}");
    ustr("state_dict");
    text("}(");
}

static void end_state(void)
{
    text("us.");
}

static sleapc_status run_pickle(const char *needle)
{
    static const float storage[16] = {0};
    make_zip(&zbuf, pbuf.p, pbuf.n, "little", storage, sizeof storage);
    return expect_status(zbuf.p, zbuf.n, needle);
}

static void run_raw(const char *pkl, size_t n, sleapc_status want, const char *needle)
{
    pbuf.n = 0;
    put(&pbuf, pkl, n);
    sleapc_status st = run_pickle(needle);
    CHECK_MSG(st == want, "pickle %.*s: %s", (int)(n < 20 ? n : 20), pkl, sleapc_status_str(st));
}

#define RAW(lit, want, needle) run_raw(lit, sizeof lit - 1, want, needle)

static void check_hostile_pickles(void)
{
    /* The baseline is fine: one 2x2 tensor. */
    begin_state();
    ustr("w");
    tensor(16, 0, 2, (const int[]){2, 2}, (const int[]){2, 1});
    end_state();
    make_zip(&zbuf, pbuf.p, pbuf.n, "little", (const float[16]){0}, 64);
    sleapc_weights w = {0};
    CHECK_OK(sleapc__ckpt_read_buffer(zbuf.p, zbuf.n, "baseline", &w));
    CHECK(w.n == 1 && w.items[0].ndim == 2);
    sleapc__weights_clear(&w);

    RAW("", SLEAPC_ERR_FORMAT, "without STOP");
    RAW("\x80\x02.", SLEAPC_ERR_FORMAT, "underflow");
    RAW("\x80\x02}.", SLEAPC_ERR_FORMAT, "no \"state_dict\"");
    RAW("\x80\x02].", SLEAPC_ERR_FORMAT, "not a dict");
    RAW("\x80\x09}.", SLEAPC_ERR_FORMAT, "protocol 9");
    RAW("\x80\x02}r\xff\xff\xff\xff.", SLEAPC_ERR_FORMAT, "memo index");
    RAW("\x80\x02h\x05.", SLEAPC_ERR_FORMAT, "never stored");
    RAW("\x80\x02X\xf0\xff\xff\xff", SLEAPC_ERR_FORMAT, "truncated");
    RAW("\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x80", SLEAPC_ERR_FORMAT, "truncated");
    RAW("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff", SLEAPC_ERR_FORMAT, "frame");
    RAW("\x80\x02\x8b\xff\xff\xff\xff", SLEAPC_ERR_FORMAT, "negative");
    RAW("\x80\x02t.", SLEAPC_ERR_FORMAT, "no MARK");
    RAW("\x80\x02" "1.", SLEAPC_ERR_FORMAT, "no MARK");
    RAW("\x80\x02}(K\x01u.", SLEAPC_ERR_FORMAT, "odd number");
    RAW("\x80\x02K\x01)R.", SLEAPC_ERR_FORMAT, "non-callable");
    RAW("\x80\x02K\x01(\x85.", SLEAPC_ERR_FORMAT, "underflow"); /* may not pop below MARK */
    RAW("\x80\x02K\x01K\x02" "a.", SLEAPC_ERR_FORMAT, "cannot add items");
    RAW("\x80\x02I12x\n.", SLEAPC_ERR_FORMAT, "integer");
    RAW("\x80\x02S'abc\n.", SLEAPC_ERR_FORMAT, "quoted");
    RAW("\x80\x02" "F1.5", SLEAPC_ERR_FORMAT, "newline");
    RAW("\x80\x02" "c\x00\nx\n.", SLEAPC_ERR_FORMAT, "NUL");
    RAW("\x80\x05\x97.", SLEAPC_ERR_UNSUPPORTED, "NEXT_BUFFER");
    RAW("\x80\x02(K\x01K\x02tQ.", SLEAPC_ERR_FORMAT, "persistent id");
    RAW("\x80\x02\xf0", SLEAPC_ERR_FORMAT, "unknown pickle opcode 0xf0 at offset 2");

    /* Many marks and many items: no recursion, bounded stacks. */
    pbuf.n = 0;
    text("\x80\x02");
    for (int i = 0; i < 20000; i++)
        op('(');
    for (int i = 0; i < 20000; i++)
        op(']');
    op('.');
    CHECK(run_pickle("not a dict") == SLEAPC_ERR_FORMAT);

    /* A list that contains itself as the state dict. */
    RAW("\x80\x02}X\x0a\x00\x00\x00state_dict]q\x00h\x00" "as.", SLEAPC_ERR_FORMAT, "not a dict");

    /* _rebuild_from_type_v2 nested beyond the limit. */
    pbuf.n = 0;
    text("\x80\x02");
    text("ctorch._tensor\n_rebuild_from_type_v2\n");
    for (int i = 0; i < 20; i++) /* args (func, type, <next args>, state) */
        text("(ctorch._tensor\n_rebuild_from_type_v2\nN");
    op(')');
    for (int i = 0; i < 20; i++)
        text("}t");
    text("R.");
    CHECK(run_pickle("nested") == SLEAPC_ERR_UNSUPPORTED);

    /* Tensor-level checks. */
    begin_state();
    ustr("w");
    tensor(16, 0, 7, (const int[]){1, 1, 1, 1, 1, 1, 1}, (const int[]){1, 1, 1, 1, 1, 1, 1});
    end_state();
    CHECK(run_pickle("dimensions") == SLEAPC_ERR_FORMAT);

    begin_state();
    ustr("w");
    tensor(16, 0, 2, (const int[]){2, 2}, (const int[]){2, 1});
    ustr("w");
    tensor(16, 4, 1, (const int[]){4}, (const int[]){1});
    end_state();
    CHECK(run_pickle("appears twice") == SLEAPC_ERR_FORMAT);

    begin_state();
    ustr("w");
    tensor(17, 0, 1, (const int[]){4}, (const int[]){1}); /* 17 floats in a 64-byte entry */
    end_state();
    CHECK(run_pickle("declared") == SLEAPC_ERR_FORMAT);

    begin_state();
    ustr("w");
    tensor(16, 0, 2, (const int[]){4, 4}, (const int[]){5, 1}); /* last element 3*5+3 */
    end_state();
    CHECK(run_pickle("needs storage element 18") == SLEAPC_ERR_FORMAT);

    /* Negative stride and sizes that overflow int64 when multiplied. */
    begin_state();
    ustr("w");
    text("ctorch._utils\n_rebuild_tensor_v2\n((");
    ustr("storage");
    text("ctorch\nFloatStorage\n");
    ustr("0");
    ustr("cpu");
    TEXT_BYTES("K\x10tQK\x00K\x02\x85J\xff\xff\xff\xff\x85\x89NtR");
    ustr("v");
    text("ctorch._utils\n_rebuild_tensor_v2\n((");
    ustr("storage");
    text("ctorch\nFloatStorage\n");
    ustr("0");
    ustr("cpu");
    TEXT_BYTES("K\x10tQK\x00\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x8a\x08\x00\x00\x00\x00\x00\x00"
         "\x00\x40\x86K\x01K\x01\x86\x89NtR");
    end_state();
    CHECK(run_pickle("negative size or stride") == SLEAPC_ERR_FORMAT);
    /* The overflowing sizes alone. */
    begin_state();
    ustr("v");
    text("ctorch._utils\n_rebuild_tensor_v2\n((");
    ustr("storage");
    text("ctorch\nFloatStorage\n");
    ustr("0");
    ustr("cpu");
    TEXT_BYTES("K\x10tQK\x00\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x8a\x08\x00\x00\x00\x00\x00\x00"
         "\x00\x40\x86K\x01K\x01\x86\x89NtR");
    end_state();
    CHECK(run_pickle("overflows") == SLEAPC_ERR_FORMAT);

    /* The storage key names no entry. */
    begin_state();
    ustr("w");
    text("ctorch._utils\n_rebuild_tensor_v2\n((");
    ustr("storage");
    text("ctorch\nFloatStorage\n");
    ustr("7");
    ustr("cpu");
    TEXT_BYTES("K\x01tQK\x00))\x89NtR");
    end_state();
    CHECK(run_pickle("best/data/7") == SLEAPC_ERR_FORMAT);

    /* Archive-level: no data.pkl, and a byteorder that is neither. */
    begin_state();
    end_state();
    make_zip(&zbuf, pbuf.p, pbuf.n, "middle", "", 0);
    CHECK(expect_status(zbuf.p, zbuf.n, "byteorder") == SLEAPC_ERR_FORMAT);
    make_zip(&zbuf, pbuf.p, pbuf.n, NULL, "", 0);
    memcpy(zbuf.p + 30 + 10, "pkz", 3); /* local name "best/data.pkl" */
    memcpy(find_bytes(zbuf.p + 40, zbuf.n - 40, "data.pkl", 8) + 5, "pkz", 3); /* central */
    CHECK(expect_status(zbuf.p, zbuf.n, "no data.pkl") == SLEAPC_ERR_FORMAT);
}

int main(void)
{
    check_hostile_pickles();

    test_require_data();
    size_t size = 0;
    uint8_t *real = test_read_file(test_data_path(REAL_CKPT), &size);
    CHECK(real != NULL);
    if (!real)
        return test_finish();
    sleapc_zip z;
    CHECK_OK(sleapc__zip_open(real, size, &z));
    const sleapc_zip_entry *e = sleapc__zip_find(&z, "best/data.pkl", 13);
    CHECK(e != NULL);
    size_t pkl_off = e ? (size_t)e->data_offset : 0, pkl_size = e ? (size_t)e->size : 0;
    sleapc__zip_close(&z);

    check_paths(real, size);
    check_truncation(real, size);
    check_flips(real, size, pkl_off, pkl_size);
    check_targeted(real, size, real + pkl_off, pkl_size);
    free(real);
    return test_finish();
}
