/* The six sleap-nn test checkpoints read back exactly as torch.load sees them:
 * names, order and shapes from spec/ckpt_keys/NAME.txt, values from
 * NAME.checksums.tsv (sha256 of the float32 bytes, float64 sum, first value),
 * and the tensor and parameter counts of the formats.md A.2 table. */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/ckpt/ckpt.h"
#include "io/ckpt/ckpt_zip.h"
#include "test_util.h"

#define MAX_LINE 1024
#define MAX_ROWS 256

/* ---- SHA-256 (FIPS 180-4), to compare the exact float32 bytes ---- */

typedef struct sha256 {
    uint32_t h[8];
    uint8_t block[64];
    size_t fill;
    uint64_t total;
} sha256;

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha_block(sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha_k[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

static void sha_init(sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->fill = 0;
    s->total = 0;
}

static void sha_update(sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->total += n;
    while (n--) {
        s->block[s->fill++] = *p++;
        if (s->fill == 64) {
            sha_block(s, s->block);
            s->fill = 0;
        }
    }
}

static void sha_hex(sha256 *s, char out[65])
{
    uint64_t bits = s->total * 8;
    uint8_t pad = 0x80, zero = 0, len[8];
    sha_update(s, &pad, 1);
    while (s->fill != 56)
        sha_update(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha_update(s, len, 8);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08" PRIx32, s->h[i]);
}

/* ---- spec files ---- */

typedef struct row {
    char key[512];
    int ndim;
    int64_t shape[8];
    char sha[65];
    double sum;
    double first;
} row;

static int parse_shape(const char *s, int64_t *shape)
{
    int n = 0;
    if (*s != '[')
        return -1;
    s++;
    while (*s && *s != ']') {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || n == 8)
            return -1;
        shape[n++] = v;
        s = end;
        while (*s == ',' || *s == ' ')
            s++;
    }
    return *s == ']' ? n : -1;
}

/* Split a tab-separated line in place; returns the number of fields. */
static int split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        fields[n++] = line;
        char *tab = strchr(line, '\t');
        if (!tab)
            break;
        *tab = '\0';
        line = tab + 1;
    }
    return n;
}

/* NAME.txt: key, shape, ... per tensor; also the header's declared totals. */
static int read_listing(const char *path, row *rows, long *declared_tensors,
                        long *declared_params)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[MAX_LINE];
    int n = 0;
    *declared_tensors = *declared_params = -1;
    while (fgets(line, sizeof line, f)) {
        long a, b;
        if (line[0] == '#') {
            if (sscanf(line, "# %ld tensors, %ld float32 parameters", &a, &b) == 2) {
                *declared_tensors = a;
                *declared_params = b;
            }
            continue;
        }
        char *fld[8];
        if (split_tabs(line, fld, 8) < 2 || n == MAX_ROWS)
            continue;
        snprintf(rows[n].key, sizeof rows[n].key, "%s", fld[0]);
        rows[n].ndim = parse_shape(fld[1], rows[n].shape);
        n++;
    }
    fclose(f);
    return n;
}

/* NAME.checksums.tsv: key, shape, sha256, sum, first value. */
static int read_checksums(const char *path, row *rows)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[MAX_LINE];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *fld[8];
        if (split_tabs(line, fld, 8) < 5 || n == MAX_ROWS)
            continue;
        snprintf(rows[n].key, sizeof rows[n].key, "%s", fld[0]);
        rows[n].ndim = parse_shape(fld[1], rows[n].shape);
        snprintf(rows[n].sha, sizeof rows[n].sha, "%s", fld[2]);
        rows[n].sum = strtod(fld[3], NULL);
        rows[n].first = strtod(fld[4], NULL);
        n++;
    }
    fclose(f);
    return n;
}

/* The formats.md A.2 row for a folder: tensor and parameter counts
 * ("| `name` | 104,374 | 14 | 18,250 | 93 / 18,800 |"). */
static int read_a2_row(const char *formats_md, const char *name, long *tensors, long *params)
{
    FILE *f = fopen(formats_md, "r");
    if (!f)
        return 0;
    char line[MAX_LINE], want[300];
    snprintf(want, sizeof want, "| `%s` |", name);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, want, strlen(want)) != 0)
            continue;
        /* Drop thousands separators, then read columns 3 and 4. */
        char clean[MAX_LINE];
        size_t k = 0;
        for (size_t i = strlen(want); line[i] && k + 1 < sizeof clean; i++)
            if (line[i] != ',')
                clean[k++] = line[i];
        clean[k] = '\0';
        long bytes;
        found = sscanf(clean, " %ld | %ld | %ld |", &bytes, tensors, params) == 3;
    }
    fclose(f);
    return found;
}

static int same_shape(const sleapc_weight *t, const row *r)
{
    if (t->ndim != r->ndim)
        return 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] != r->shape[i])
            return 0;
    return 1;
}

static void check_model(const char *spec_dir, const char *formats_md, const char *name,
                        const char *ckpt)
{
    static row listing[MAX_ROWS], sums[MAX_ROWS];
    char path[4096];
    sleapc_weights w = {0};
    CHECK_OK(sleapc__ckpt_read(ckpt, &w));
    printf("%s: %d tensors, %lld parameters\n", name, w.n,
           (long long)sleapc__weights_param_count(&w));

    long decl_tensors = -1, decl_params = -1;
    snprintf(path, sizeof path, "%s/%s.txt", spec_dir, name);
    int n_list = read_listing(path, listing, &decl_tensors, &decl_params);
    CHECK_MSG(n_list > 0, "cannot read %s", path);
    CHECK_MSG(w.n == n_list, "%s: %d tensors read, listing has %d", name, w.n, n_list);
    int64_t listed_params = 0;
    for (int i = 0; i < n_list && i < w.n; i++) {
        CHECK_MSG(strcmp(w.items[i].name, listing[i].key) == 0, "%s: tensor %d is %s, want %s",
                  name, i, w.items[i].name, listing[i].key);
        CHECK_MSG(same_shape(&w.items[i], &listing[i]), "%s: %s shape differs", name,
                  listing[i].key);
        int64_t numel = 1;
        for (int d = 0; d < listing[i].ndim; d++)
            numel *= listing[i].shape[d];
        listed_params += numel;
    }
    CHECK_MSG(decl_tensors == n_list && decl_params == listed_params,
              "%s: listing header says %ld tensors / %ld params", name, decl_tensors,
              decl_params);
    CHECK(sleapc__weights_param_count(&w) == listed_params);

    long a2_tensors = -1, a2_params = -1;
    CHECK_MSG(read_a2_row(formats_md, name, &a2_tensors, &a2_params),
              "%s: no row in formats.md A.2", name);
    CHECK_MSG(a2_tensors == w.n && a2_params == sleapc__weights_param_count(&w),
              "%s: A.2 says %ld tensors / %ld params", name, a2_tensors, a2_params);

    snprintf(path, sizeof path, "%s/%s.checksums.tsv", spec_dir, name);
    int n_sums = read_checksums(path, sums);
    CHECK_MSG(n_sums == w.n, "%s: %d checksum rows for %d tensors", name, n_sums, w.n);
    for (int i = 0; i < n_sums; i++) {
        const sleapc_weight *t = sleapc__weights_find(&w, sums[i].key);
        CHECK_MSG(t != NULL, "%s: %s missing", name, sums[i].key);
        if (!t)
            continue;
        CHECK(same_shape(t, &sums[i]));
        int64_t numel = sleapc__weight_numel(t);
        double sum = 0.0;
        for (int64_t k = 0; k < numel; k++)
            sum += t->data[k];
        /* The reference sum is printed with 9 significant digits and was
         * accumulated in another order, so agreement to 1e-6 relative (with
         * a 1e-9 absolute floor for sums near zero) is the meaningful check. */
        CHECK_MSG(fabs(sum - sums[i].sum) <= 1e-6 * fabs(sums[i].sum) + 1e-9,
                  "%s: %s sum %.9g, want %.9g", name, sums[i].key, sum, sums[i].sum);
        /* Nine significant digits identify a float32 uniquely: exact. */
        CHECK_MSG(numel > 0 && t->data[0] == (float)sums[i].first, "%s: %s first %.9g, want %.9g",
                  name, sums[i].key, numel > 0 ? t->data[0] : 0.0, sums[i].first);
        /* The sha256 is over little-endian float32 bytes in C order. */
        if (strlen(sums[i].sha) == 64) {
            sha256 s;
            char hex[65];
            sha_init(&s);
            for (int64_t k = 0; k < numel; k++) {
                uint32_t bits;
                memcpy(&bits, &t->data[k], 4);
                uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
                                 (uint8_t)(bits >> 24)};
                sha_update(&s, le, 4);
            }
            sha_hex(&s, hex);
            CHECK_MSG(strcmp(hex, sums[i].sha) == 0, "%s: %s sha256 %s, want %s", name,
                      sums[i].key, hex, sums[i].sha);
        }
    }
    sleapc__weights_clear(&w);
}

static void check_sha256_itself(void)
{
    /* FIPS 180-2 example "abc", so a checksum mismatch is not a hash bug. */
    sha256 s;
    char hex[65];
    sha_init(&s);
    sha_update(&s, "abc", 3);
    sha_hex(&s, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
}

/* ---- synthetic archives: opcodes, dtypes and layouts the six files lack ---- */

typedef struct buf {
    uint8_t p[1 << 15];
    size_t n;
} buf;

static void put(buf *b, const void *src, size_t n)
{
    if (b->n + n <= sizeof b->p) {
        memcpy(b->p + b->n, src, n);
        b->n += n;
    }
}

static void put_le(buf *b, uint64_t x, int k)
{
    for (int i = 0; i < k; i++) {
        uint8_t c = i < 8 ? (uint8_t)(x >> (8 * i)) : 0;
        put(b, &c, 1);
    }
}

typedef struct zentry {
    const char *name;
    const void *data;
    size_t n;
} zentry;

/* A plain stored zip (no alignment, no data descriptors: another writer's
 * layout than torch's). */
static void make_zip(buf *z, const zentry *e, int n)
{
    uint64_t offs[16];
    z->n = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t cd = z->n;
        for (int i = 0; i < n; i++) {
            if (pass == 0)
                offs[i] = z->n;
            put_le(z, pass ? 0x02014b50u : 0x04034b50u, 4);
            if (pass)
                put_le(z, 20, 2);
            put_le(z, 20, 2);
            put_le(z, 0, 8); /* flags, method, time, date */
            put_le(z, sleapc__zip_crc32(0, e[i].data, e[i].n), 4);
            put_le(z, e[i].n, 4);
            put_le(z, e[i].n, 4);
            put_le(z, strlen(e[i].name), 2);
            put_le(z, 0, 2);
            if (pass) {
                put_le(z, 0, 10); /* comment length, disk, attributes */
                put_le(z, offs[i], 4);
            }
            put(z, e[i].name, strlen(e[i].name));
            if (!pass)
                put(z, e[i].data, e[i].n);
        }
        if (pass) {
            uint64_t cd_size = z->n - cd;
            put_le(z, 0x06054b50u, 4);
            put_le(z, 0, 4);
            put_le(z, (uint64_t)n, 2);
            put_le(z, (uint64_t)n, 2);
            put_le(z, cd_size, 4);
            put_le(z, cd, 4);
            put_le(z, 0, 2);
        }
    }
}

static buf pk, zip;

static void op(int c)
{
    uint8_t b = (uint8_t)c;
    put(&pk, &b, 1);
}

/* Literals may contain NUL bytes. */
#define BYTES(lit) put(&pk, lit, sizeof lit - 1)

static void sbu(const char *s) /* SHORT_BINUNICODE */
{
    op(0x8c);
    op((int)strlen(s));
    put(&pk, s, strlen(s));
}

static void stack_global(const char *module, const char *name)
{
    sbu(module);
    sbu(name);
    op(0x93);
}

static int expect_values(const sleapc_weights *w, const char *name, const float *want, int n)
{
    const sleapc_weight *t = sleapc__weights_find(w, name);
    if (!t || sleapc__weight_numel(t) != n) {
        fprintf(stderr, "%s: missing or wrong size\n", name);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (memcmp(&t->data[i], &want[i], sizeof(float)) != 0) {
            fprintf(stderr, "%s[%d] = %.9g, want %.9g\n", name, i, t->data[i], want[i]);
            return 0;
        }
    }
    return 1;
}

/* Protocol 0/1: text opcodes, PUT/GET, DICT/LIST/INST/OBJ, a shared double
 * storage seen through a transposed view and through an offset view. */
static void check_protocol0(void)
{
    double storage[6];
    for (int k = 0; k < 6; k++)
        storage[k] = k * 1.5 - 2;
    pk.n = 0;
    BYTES("(dp0\nS'state_dict'\np1\nccollections\nOrderedDict\np2\n(tRp3\n");
    BYTES("Vmodel.w\\u00e9\nctorch._utils\n_rebuild_tensor\np4\n"
          "((S'storage'\nctorch\nDoubleStorage\np5\nS'0'\nS'cpu'\nI6\ntQI0\n"
          "(I2\nI3\nt(I3\nI1\nttRs");
    BYTES("Vmodel.t\ng4\n((S'storage'\ng5\nS'0'\nS'cpu'\nL6L\ntQI0\n"
          "(I3\nI2\nt(I1\nI3\nttRs");
    BYTES("S\"model.off\"\ng4\n((S'storage'\ng5\nS'0'\nS'cpu'\nI6\ntQI2\n"
          "(I2\nt(I2\nttRs");
    BYTES("S'model.list'\n(lp9\nI1\naI01\naF2.5\na(I7\nI-8\nlas");
    BYTES("s");
    BYTES("S'junk'\n(i__main__\nThing\nsS'junk2'\n(cargparse\nNamespace\nos");
    BYTES("S'junk3'\nI5\n20sS'junk4'\n(I1\nI2\n1NsS'junk5'\nS'a\\x41\\n\\'b\\101'\ns.");
    const zentry e[] = {{"best/data.pkl", pk.p, pk.n}, {"best/data/0", storage, sizeof storage},
                        {"best/version", "3\n", 2}};
    make_zip(&zip, e, 3);
    sleapc_weights w = {0};
    CHECK_OK(sleapc__ckpt_read_buffer(zip.p, zip.n, "protocol0", &w));
    CHECK_MSG(w.n == 3, "%d tensors", w.n);
    CHECK(expect_values(&w, "model.w\xc3\xa9", (const float[]){-2, -0.5f, 1, 2.5f, 4, 5.5f}, 6));
    CHECK(expect_values(&w, "model.t", (const float[]){-2, 2.5f, -0.5f, 4, 1, 5.5f}, 6));
    CHECK(expect_values(&w, "model.off", (const float[]){1, 4}, 2));
    const sleapc_weight *t = sleapc__weights_find(&w, "model.t");
    CHECK(t && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 2);
    sleapc__weights_clear(&w);
}

/* One tensor of n elements: _rebuild_tensor_v2 over storage `key`. */
static void tensor_v2(const char *cls, const char *key, int n)
{
    stack_global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    op('(');
    sbu("storage");
    stack_global("torch", cls);
    sbu(key);
    sbu("cpu");
    op('K');
    op(n);
    op('t');
    op('Q');
    BYTES("K\x00");
    op('K');
    op(n);
    op(0x85);
    BYTES("K\x01\x85\x89N");
    op('t');
    op('R');
}

/* Protocol 4: FRAME, MEMOIZE, STACK_GLOBAL, the byte-string and set opcodes,
 * NEWOBJ_EX, LONG1/LONG4, and every storage dtype the reader converts. */
static void check_protocol4(void)
{
    static const struct {
        const char *cls;
        uint8_t bytes[16];
        int size, n;
        float want[5];
    } dt[] = {
        {"FloatStorage", {0, 0, 0xc0, 0x3f, 0, 0, 0x80, 0xbe}, 8, 2, {1.5f, -0.25f}},
        {"DoubleStorage", {0, 0, 0, 0, 0, 0, 2, 0xc0, 0, 0, 0, 0, 0, 0, 8, 0x40}, 16, 2,
         {-2.25f, 3}},
        {"HalfStorage", {0, 0x3c, 0, 0xc0, 1, 0, 0, 0x7c, 0x55, 0x35}, 10, 5,
         {1, -2, 5.9604644775390625e-8f, INFINITY, 0.333251953125f}},
        {"BFloat16Storage", {0xc0, 0x3f, 0x20, 0xc0}, 4, 2, {1.5f, -2.5f}},
        {"LongStorage", {0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 0, 0},
         16, 2, {-5, 1099511627776.0f}},
        {"IntStorage", {0xf9, 0xff, 0xff, 0xff, 0x40, 0xe2, 1, 0}, 8, 2, {-7, 123456}},
        {"ShortStorage", {0xd4, 0xfe, 0x2c, 1}, 4, 2, {-300, 300}},
        {"CharStorage", {0x80, 0x7f}, 2, 2, {-128, 127}},
        {"ByteStorage", {0xff, 0}, 2, 2, {255, 0}},
        {"BoolStorage", {0, 1, 2}, 3, 3, {0, 1, 1}},
    };
    enum { N_DT = sizeof dt / sizeof dt[0] };
    pk.n = 0;
    BYTES("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00");
    size_t frame_start = pk.n;
    op('}');
    op(0x94);
    sbu("state_dict");
    op(0x94);
    stack_global("collections", "OrderedDict");
    op(0x94);
    BYTES(")R\x94(");
    for (int i = 0; i < N_DT; i++) {
        char name[64], key[8];
        snprintf(name, sizeof name, "model.%s", dt[i].cls);
        snprintf(key, sizeof key, "%d", i);
        sbu(name);
        if (i == 0) { /* nn.Parameter(tensor) */
            stack_global("torch._utils", "_rebuild_parameter");
            tensor_v2(dt[i].cls, key, dt[i].n);
            BYTES("\x88h\x02)R\x87R"); /* (tensor, True, OrderedDict()) */
        } else if (i == 1) { /* a tensor subclass */
            stack_global("torch._tensor", "_rebuild_from_type_v2");
            op('(');
            stack_global("torch._utils", "_rebuild_tensor_v2");
            stack_global("torch.nn.parameter", "Parameter");
            op('(');
            op('(');
            sbu("storage");
            stack_global("torch", dt[i].cls);
            sbu(key);
            sbu("cpu");
            BYTES("K\x02tQK\x00K\x02\x85K\x01\x85\x89Nt}tR");
        } else {
            tensor_v2(dt[i].cls, key, dt[i].n);
        }
    }
    op('u');
    op('s');
    sbu("junk");
    BYTES("](\x8f(K\x01K\x02\x90(K\x01K\x02\x91");
    stack_global("argparse", "Namespace");
    BYTES(")}\x92");
    BYTES("\x8b\x09\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09");
    BYTES("\x8a\x02\xff\x7f" "B\x03\x00\x00\x00" "abc" "C\x02hi");
    BYTES("\x8e\x01\x00\x00\x00\x00\x00\x00\x00z\x96\x01\x00\x00\x00\x00\x00\x00\x00z\x98");
    BYTES("G\x3f\xf8\x00\x00\x00\x00\x00\x00T\x02\x00\x00\x00okU\x02ok\x82\x01");
    BYTES("\x8d\x02\x00\x00\x00\x00\x00\x00\x00okh\x01" "es.");
    uint64_t frame_len = pk.n - frame_start;
    for (int i = 0; i < 8; i++)
        pk.p[3 + i] = (uint8_t)(frame_len >> (8 * i));

    zentry e[N_DT + 2] = {{"best/data.pkl", pk.p, pk.n}, {"best/byteorder", "little", 6}};
    static char names[N_DT][32];
    for (int i = 0; i < N_DT; i++) {
        snprintf(names[i], sizeof names[i], "best/data/%d", i);
        e[i + 2] = (zentry){names[i], dt[i].bytes, (size_t)dt[i].size};
    }
    make_zip(&zip, e, N_DT + 2);
    sleapc_weights w = {0};
    CHECK_OK(sleapc__ckpt_read_buffer(zip.p, zip.n, "protocol4", &w));
    CHECK_MSG(w.n == N_DT, "%d tensors", w.n);
    for (int i = 0; i < N_DT; i++) {
        char name[64];
        snprintf(name, sizeof name, "model.%s", dt[i].cls);
        CHECK_MSG(expect_values(&w, name, dt[i].want, dt[i].n), "%s", name);
    }
    sleapc__weights_clear(&w);
}

/* Another folder name, big-endian storages, and no byteorder record at all
 * (older torch: little-endian). */
static void check_byteorder_and_prefix(void)
{
    static const uint8_t be[8] = {0x3f, 0xc0, 0, 0, 0xbe, 0x80, 0, 0};
    static const uint8_t le[8] = {0, 0, 0xc0, 0x3f, 0, 0, 0x80, 0xbe};
    for (int big = 0; big < 2; big++) {
        pk.n = 0;
        BYTES("\x80\x02}");
        sbu("state_dict");
        BYTES("}");
        sbu("w");
        tensor_v2("FloatStorage", "0", 2);
        BYTES("ss.");
        zentry e[3] = {{"archive/data.pkl", pk.p, pk.n},
                       {"archive/data/0", big ? be : le, 8},
                       {"archive/byteorder", "big", 3}};
        make_zip(&zip, e, big ? 3 : 2);
        sleapc_weights w = {0};
        CHECK_OK(sleapc__ckpt_read_buffer(zip.p, zip.n, "byteorder", &w));
        CHECK(expect_values(&w, "w", (const float[]){1.5f, -0.25f}, 2));
        sleapc__weights_clear(&w);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    check_sha256_itself();
    check_protocol0();
    check_protocol4();
    check_byteorder_and_prefix();
    if (test_n_failed)
        return test_finish();
    test_require_data();

    char spec_dir[2048], formats_md[2048], models[2048];
    snprintf(spec_dir, sizeof spec_dir, "%s/../spec/ckpt_keys", test_data_dir());
    snprintf(formats_md, sizeof formats_md, "%s/../spec/formats.md", test_data_dir());
    snprintf(models, sizeof models, "%s", test_data_path("sleap-nn-assets/model_ckpts"));

    DIR *d = opendir(models);
    CHECK_MSG(d != NULL, "cannot list %s", models);
    if (!d)
        return test_finish();
    char *names[64];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 64) {
        char ckpt[4096];
        struct stat sb;
        if (de->d_name[0] == '.')
            continue;
        snprintf(ckpt, sizeof ckpt, "%s/%s/best.ckpt", models, de->d_name);
        if (stat(ckpt, &sb) == 0 && S_ISREG(sb.st_mode))
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    /* Each folder found must also have its formats.md A.2 row (checked below). */
    CHECK_MSG(n > 0, "no checkpoints under %s", models);
    for (int i = 0; i < n; i++) {
        char ckpt[4096];
        snprintf(ckpt, sizeof ckpt, "%s/%s/best.ckpt", models, names[i]);
        check_model(spec_dir, formats_md, names[i], ckpt);
        free(names[i]);
    }
    return test_finish();
}
