/* sleapc__ckpt_write: what it writes reads back bit for bit, with and without
 * the Lightning training state, and the archive has torch's layout: stored
 * entries under best/, payloads on 64-byte boundaries, flag 0x0808 with data
 * descriptors, correct CRC-32s, version/byteorder/serialization_id records. */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/ckpt/ckpt.h"
#include "io/ckpt/ckpt_zip.h"
#include "test_util.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void add(sleapc_weights *w, const char *name, int ndim, const int64_t *shape,
                uint32_t seed)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    float *p = sleapc__aligned_alloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 4.0f;
    }
    CHECK_OK(sleapc__weights_add(w, name, ndim, shape, p));
}

/* Shapes a model can have (0-d, zero-sized, up to the 6-d limit) and float
 * values that must survive untouched (signed zero, denormals, inf, NaN). */
static void make_weights(sleapc_weights *w, int n_extra)
{
    add(w, "model.backbone.conv0.weight", 4, (const int64_t[]){8, 3, 3, 3}, 1);
    add(w, "model.backbone.conv0.bias", 1, (const int64_t[]){8}, 2);
    add(w, "model.scalar", 0, NULL, 3);
    add(w, "model.empty", 2, (const int64_t[]){0, 5}, 4);
    add(w, "model.six_d", 6, (const int64_t[]){1, 2, 1, 3, 2, 1}, 5);
    add(w, "model.head_layers.1.ClassVectorsHead.weight", 2, (const int64_t[]){2, 64}, 6);
    float *special = w->items[1].data;
    const float values[8] = {-0.0f, FLT_MIN / 8, FLT_MAX, -INFINITY, INFINITY, NAN, 1e-30f, -1};
    memcpy(special, values, sizeof values);
    for (int i = 0; i < n_extra; i++) {
        char name[64];
        snprintf(name, sizeof name, "model.extra.%d.bias", i);
        add(w, name, 1, (const int64_t[]){1 + i % 3}, 100u + (uint32_t)i);
    }
}

static int same_weights(const sleapc_weights *a, const sleapc_weights *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++) {
        const sleapc_weight *x = &a->items[i], *y = &b->items[i];
        if (strcmp(x->name, y->name) != 0 || x->ndim != y->ndim)
            return 0;
        for (int d = 0; d < x->ndim; d++)
            if (x->shape[d] != y->shape[d])
                return 0;
        size_t bytes = (size_t)sleapc__weight_numel(x) * sizeof(float);
        if (bytes && memcmp(x->data, y->data, bytes) != 0)
            return 0;
    }
    return 1;
}

/* Walk the archive independently of the reader's conventions. */
static void check_archive(const char *path, int n_storages_min)
{
    size_t size = 0;
    unsigned char *buf = test_read_file(path, &size);
    CHECK(buf != NULL);
    if (!buf)
        return;
    sleapc_zip z;
    CHECK_OK(sleapc__zip_open(buf, size, &z));
    int n_data = 0, have_version = 0, have_order = 0, have_id = 0;
    for (int i = 0; i < z.n; i++) {
        const sleapc_zip_entry *e = &z.entries[i];
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)e->name_len, e->name);
        const uint8_t *lh = buf + e->header_offset;
        const uint8_t *data = NULL;
        size_t n = 0;
        CHECK_OK(sleapc__zip_entry_data(&z, e, &data, &n));
        CHECK_MSG(strncmp(name, "best/", 5) == 0, "entry %s outside best/", name);
        CHECK_MSG(e->data_offset % 64 == 0, "%s payload at %llu", name,
                  (unsigned long long)e->data_offset);
        CHECK(e->method == 0 && e->flags == 0x0808);
        /* Local header: flag 0x0808, zero CRC and sizes, an FB padding field. */
        CHECK(rd16(lh + 6) == 0x0808 && rd32(lh + 14) == 0 && rd32(lh + 18) == 0 &&
              rd32(lh + 22) == 0);
        CHECK(lh[30 + rd16(lh + 26)] == 'F' && lh[31 + rd16(lh + 26)] == 'B');
        uint32_t crc = sleapc__zip_crc32(0, data, n);
        CHECK_MSG(crc == e->crc32, "%s: CRC %08x, directory says %08x", name, crc, e->crc32);
        /* The data descriptor after the payload repeats CRC and sizes. */
        const uint8_t *dd = data + n;
        CHECK((size_t)(dd + 16 - buf) <= size && rd32(dd) == 0x08074b50u &&
              rd32(dd + 4) == crc && rd32(dd + 8) == n && rd32(dd + 12) == n);
        if (strncmp(name, "best/data/", 10) == 0)
            n_data++;
        if (strcmp(name, "best/version") == 0)
            have_version = n == 2 && memcmp(data, "3\n", 2) == 0;
        if (strcmp(name, "best/byteorder") == 0)
            have_order = n == 6 && memcmp(data, "little", 6) == 0;
        if (strcmp(name, "best/.data/serialization_id") == 0) {
            have_id = n == 40;
            for (size_t k = 0; k < n; k++)
                have_id &= data[k] >= '0' && data[k] <= '9';
        }
    }
    CHECK_MSG(n_data >= n_storages_min, "%d storages, want at least %d", n_data, n_storages_min);
    CHECK(have_version && have_order && have_id);
    CHECK(sleapc__zip_find(&z, "best/data.pkl", 13) != NULL);
    /* torch (miniz) always ends with a zip64 end record and its locator. */
    CHECK(size > 98 && rd32(buf + size - 22) == 0x06054b50u &&
          rd32(buf + size - 42) == 0x07064b50u && rd32(buf + size - 98) == 0x06064b50u);
    sleapc__zip_close(&z);
    free(buf);
}

static void round_trip(const char *dir, bool training, int n_extra)
{
    sleapc_weights w = {0}, back = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/rt_%d_%d.ckpt", dir, training, n_extra);
    make_weights(&w, n_extra);
    CHECK_OK(sleapc__ckpt_write(path, &w, training));
    CHECK_OK(sleapc__ckpt_read(path, &back));
    CHECK_MSG(same_weights(&w, &back), "round trip differs (training=%d, extra=%d)", training,
              n_extra);
    /* With training state each weight also has two moments, plus step and
     * score scalars. */
    check_archive(path, training ? 3 * w.n : w.n);
    sleapc__weights_clear(&w);
    sleapc__weights_clear(&back);
}

static void check_deterministic_and_atomic(const char *dir)
{
    sleapc_weights w = {0};
    make_weights(&w, 3);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/same_a.ckpt", dir);
    snprintf(b, sizeof b, "%s/same_b.ckpt", dir);
    CHECK_OK(sleapc__ckpt_write(a, &w, true));
    CHECK_OK(sleapc__ckpt_write(b, &w, true));
    size_t na = 0, nb = 0;
    unsigned char *pa = test_read_file(a, &na), *pb = test_read_file(b, &nb);
    CHECK(pa && pb && na == nb && memcmp(pa, pb, na) == 0);
    free(pa);
    free(pb);

    /* Overwrite with different content: the new file replaces the old one. */
    sleapc_weights small = {0}, back = {0};
    add(&small, "only", 1, (const int64_t[]){4}, 9);
    CHECK_OK(sleapc__ckpt_write(a, &small, false));
    CHECK_OK(sleapc__ckpt_read(a, &back));
    CHECK(same_weights(&small, &back));
    sleapc__weights_clear(&back);

    /* A folder that does not exist: an I/O error and no file. */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.ckpt", dir);
    sleapc_status st = sleapc__ckpt_write(missing, &w, false);
    CHECK(st == SLEAPC_ERR_IO && sleapc_last_error()[0] != '\0');

    /* Every failed allocation is a clean NOMEM (ASan checks for leaks). */
    snprintf(b, sizeof b, "%s/oom.ckpt", dir);
    for (int64_t n = 1;; n++) {
        sleapc__alloc_fail_after(n);
        st = sleapc__ckpt_write(b, &w, true);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK)
            break;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM && sleapc_last_error()[0], "alloc %lld: %s",
                  (long long)n, sleapc_last_error());
        if (n > 1000)
            break;
    }
    CHECK(st == SLEAPC_OK);

    /* No temporary file is left behind by any of the above. */
    DIR *d = opendir(dir);
    struct dirent *de;
    int leftovers = 0;
    while (d && (de = readdir(d)))
        leftovers += strstr(de->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    CHECK_MSG(leftovers == 0, "%d temporary files left", leftovers);
    sleapc__weights_clear(&w);
    sleapc__weights_clear(&small);
}

static void check_bad_arguments(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad.ckpt", dir);
    sleapc_weights w = {0};
    add(&w, "x", 1, (const int64_t[]){2}, 1);
    char *name = w.items[0].name;
    w.items[0].name = NULL;
    CHECK(sleapc__ckpt_write(path, &w, false) == SLEAPC_ERR_INVALID_ARG);
    w.items[0].name = name;
    w.items[0].ndim = SLEAPC_WEIGHT_MAX_DIMS + 1;
    CHECK(sleapc__ckpt_write(path, &w, false) == SLEAPC_ERR_INVALID_ARG);
    w.items[0].ndim = 1;
    w.items[0].shape[0] = -2;
    CHECK(sleapc__ckpt_write(path, &w, false) == SLEAPC_ERR_INVALID_ARG);
    w.items[0].shape[0] = 2;
    CHECK(sleapc__ckpt_write(NULL, &w, false) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__ckpt_write(path, NULL, false) == SLEAPC_ERR_INVALID_ARG);
    struct stat sb;
    CHECK(stat(path, &sb) != 0);
    sleapc__weights_clear(&w);

    /* An empty state dict is still a valid checkpoint. */
    sleapc_weights empty = {0}, back = {0};
    CHECK_OK(sleapc__ckpt_write(path, &empty, true));
    CHECK_OK(sleapc__ckpt_read(path, &back));
    CHECK(back.n == 0);
}

/* A real checkpoint re-written by us reads back identically. */
static void rewrite_real(const char *dir)
{
    if (!test_data_dir())
        return;
    const char *src =
        test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid/best.ckpt");
    sleapc_weights w = {0}, back = {0};
    if (sleapc__ckpt_read(src, &w) != SLEAPC_OK)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/best.ckpt", dir);
    CHECK_OK(sleapc__ckpt_write(path, &w, true));
    CHECK_OK(sleapc__ckpt_read(path, &back));
    CHECK(w.n > 0 && same_weights(&w, &back));
    sleapc__weights_clear(&w);
    sleapc__weights_clear(&back);
}

int main(void)
{
    const char *dir = test_tmp_dir();
    /* The standard CRC-32 check value. */
    CHECK(sleapc__zip_crc32(0, "123456789", 9) == 0xcbf43926u);
    CHECK(sleapc__zip_crc32(sleapc__zip_crc32(0, "1234", 4), "56789", 5) == 0xcbf43926u);

    round_trip(dir, false, 0);
    round_trip(dir, true, 0);
    /* Over 1000 items: several SETITEMS/APPENDS batches, and storage keys
     * whose string order differs from their numeric order. */
    round_trip(dir, true, 1200);
    check_deterministic_and_atomic(dir);
    check_bad_arguments(dir);
    rewrite_real(dir);
    return test_finish();
}
