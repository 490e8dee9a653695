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
    char path[2048];
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    test_require_data();
    check_sha256_itself();

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
