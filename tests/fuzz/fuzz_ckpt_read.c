/* libFuzzer target: checkpoint archives (best.ckpt). The first byte picks
 * what the rest is:
 *  - even: a whole archive, read as a file is read (zip directory, CRC-32 of
 *    each record, the pickle, tensor views over the storages);
 *  - odd: a pickle, stored as best/data.pkl in an archive made here with
 *    correct CRC-32s beside four small storage records ("0" to "3"), so that
 *    mutations reach the pickle machine behind the integrity check.
 * Every input must end in a status with a message, never a crash, leak or
 * abort (ASan + UBSan judge the first two). Replayed on its committed corpus
 * by test_fuzz_ckpt_replay.c. */
#include "fuzz_common.h"
#include "io/ckpt/ckpt.h"
#include "io/ckpt/ckpt_zip.h"

#define FUZZ_MAX_PICKLE 65536
#define N_STORAGES 4
#define STORAGE_BYTES 64

typedef struct zbuf {
    uint8_t *p;
    size_t n;
} zbuf;

static void put(zbuf *b, const void *src, size_t n)
{
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_le(zbuf *b, uint32_t x, int k)
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
    uint32_t offset;
} entry;

/* A stored zip of the entries (no zip64, no data descriptors). */
static size_t make_archive(entry *e, int n, uint8_t *out)
{
    zbuf z = {out, 0};
    for (int i = 0; i < n; i++) {
        uint32_t crc = sleapc__zip_crc32(0, e[i].data, e[i].n);
        size_t name_n = strlen(e[i].name);
        e[i].offset = (uint32_t)z.n;
        put_le(&z, 0x04034b50u, 4);
        put_le(&z, 20, 2), put_le(&z, 0, 2), put_le(&z, 0, 2);
        put_le(&z, 0, 2), put_le(&z, 0, 2);
        put_le(&z, crc, 4), put_le(&z, (uint32_t)e[i].n, 4), put_le(&z, (uint32_t)e[i].n, 4);
        put_le(&z, (uint32_t)name_n, 2), put_le(&z, 0, 2);
        put(&z, e[i].name, name_n);
        put(&z, e[i].data, e[i].n);
    }
    size_t cd = z.n;
    for (int i = 0; i < n; i++) {
        uint32_t crc = sleapc__zip_crc32(0, e[i].data, e[i].n);
        size_t name_n = strlen(e[i].name);
        put_le(&z, 0x02014b50u, 4);
        put_le(&z, 20, 2), put_le(&z, 20, 2), put_le(&z, 0, 2), put_le(&z, 0, 2);
        put_le(&z, 0, 2), put_le(&z, 0, 2);
        put_le(&z, crc, 4), put_le(&z, (uint32_t)e[i].n, 4), put_le(&z, (uint32_t)e[i].n, 4);
        put_le(&z, (uint32_t)name_n, 2), put_le(&z, 0, 2), put_le(&z, 0, 2);
        put_le(&z, 0, 2), put_le(&z, 0, 2), put_le(&z, 0, 4);
        put_le(&z, e[i].offset, 4);
        put(&z, e[i].name, name_n);
    }
    size_t cd_size = z.n - cd;
    put_le(&z, 0x06054b50u, 4);
    put_le(&z, 0, 2), put_le(&z, 0, 2);
    put_le(&z, (uint32_t)n, 2), put_le(&z, (uint32_t)n, 2);
    put_le(&z, (uint32_t)cd_size, 4), put_le(&z, (uint32_t)cd, 4);
    put_le(&z, 0, 2);
    return z.n;
}

static void read_archive(const uint8_t *buf, size_t n)
{
    sleapc_weights w = {0};
    sleapc_status st = sleapc__ckpt_read_buffer(buf, n, "fuzz.ckpt", &w);
    fuzz_expect("fuzz_ckpt_read", st);
    /* Weights that came back are read whole (ASan checks their extent). */
    volatile float sink = 0;
    for (int i = 0; !st && i < w.n; i++)
        for (int64_t k = 0; k < sleapc__weight_numel(&w.items[i]); k++)
            sink += w.items[i].data[k];
    (void)sink;
    sleapc__weights_clear(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (!(data[0] & 1)) {
        read_archive(data + 1, size - 1);
        return 0;
    }
    size_t pkl_n = size - 1 < FUZZ_MAX_PICKLE ? size - 1 : FUZZ_MAX_PICKLE;
    static uint8_t storage[STORAGE_BYTES];
    for (int i = 0; i < STORAGE_BYTES; i++)
        storage[i] = (uint8_t)(i * 37 + 11);
    entry e[N_STORAGES + 2] = {
        {"best/data.pkl", data + 1, pkl_n, 0},
        {"best/byteorder", (const uint8_t *)"little", 6, 0},
        {"best/data/0", storage, STORAGE_BYTES, 0},
        {"best/data/1", storage, STORAGE_BYTES, 0},
        {"best/data/2", storage, 16, 0},
        {"best/data/3", storage, 4, 0},
    };
    size_t cap = pkl_n + 4096;
    uint8_t *zip = malloc(cap);
    if (!zip)
        return 0;
    size_t n = make_archive(e, N_STORAGES + 2, zip);
    read_archive(zip, n);
    free(zip);
    return 0;
}
