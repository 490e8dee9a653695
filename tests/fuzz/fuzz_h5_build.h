/* An HDF5 file built from fuzz bytes with sleapc's own writer, so the
 * readers above libhdf5 (labels, Keras weights) are fuzzed over files
 * libhdf5 itself reads correctly (libhdf5's own parser is not the target).
 * The bytes are a list of operations, each an op byte, a NUL-terminated
 * object path and the op's payload:
 *   0 group                     5 attribute: name NUL, double (8 bytes)
 *   1 attribute: name NUL, string NUL    6 attribute: name NUL, int64 (8 bytes)
 *   2 float32 dataset: ndim (1..3), dims (1 byte each), raw values
 *   3 string dataset: n rows, each NUL-terminated
 *   4 .slp table: kind (frames, instances, pred_points, points), n rows,
 *     raw row bytes
 * An operation libhdf5 refuses (a missing parent, a name taken) is skipped.
 * Payloads shorter than they say are zero-padded. */
#ifndef SLEAPC_TESTS_FUZZ_H5_BUILD_H
#define SLEAPC_TESTS_FUZZ_H5_BUILD_H

#include "fuzz_common.h"
#include "io/h5/h5_file.h"
#ifdef SLEAPC_LIBFUZZER
#include <hdf5.h>
#endif
#include "io/slp/slp_schema.h"

#define FUZZ_H5_MAX_ELEMS 4096
#define FUZZ_H5_MAX_ROWS 64

typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n, at;
} fuzz_reader;

static inline uint8_t fz_byte(fuzz_reader *r)
{
    return r->at < r->n ? r->p[r->at++] : 0;
}

/* A NUL-terminated string of at most cap - 1 bytes (cut when longer). */
static inline void fz_str(fuzz_reader *r, char *dst, size_t cap)
{
    size_t k = 0;
    while (r->at < r->n && r->p[r->at]) {
        if (k + 1 < cap)
            dst[k++] = (char)r->p[r->at];
        r->at++;
    }
    r->at += r->at < r->n;
    dst[k] = '\0';
}

static inline void fz_bytes(fuzz_reader *r, void *dst, size_t n)
{
    size_t take = r->n - r->at < n ? r->n - r->at : n;
    memcpy(dst, r->p + r->at, take);
    memset((uint8_t *)dst + take, 0, n - take);
    r->at += take;
}

static inline void fz_table(fuzz_reader *r, sleapc_h5 *f)
{
    static const char *const names[4] = {"frames", "instances", "pred_points", "points"};
    static const size_t sizes[4] = {sizeof(sleapc_slp_frame_rec), sizeof(sleapc_slp_instance_rec),
                                    sizeof(sleapc_slp_point_rec), sizeof(sleapc_slp_point_rec)};
    static const int n_fields[4] = {SLEAPC_SLP_FRAME_FIELDS, SLEAPC_SLP_INSTANCE_FIELDS,
                                    SLEAPC_SLP_PRED_POINT_FIELDS, SLEAPC_SLP_POINT_FIELDS};
    const sleapc_h5_field *fields[4] = {sleapc__slp_frame_fields, sleapc__slp_instance_fields,
                                        sleapc__slp_point_fields, sleapc__slp_point_fields};
    int kind = fz_byte(r) % 4;
    int64_t rows = fz_byte(r) % (FUZZ_H5_MAX_ROWS + 1);
    uint8_t *buf = calloc((size_t)rows + 1, sizes[kind]);
    if (!buf)
        return;
    fz_bytes(r, buf, (size_t)rows * sizes[kind]);
    sleapc__h5_write_compound(f, names[kind], fields[kind], n_fields[kind], sizes[kind], buf, rows,
                              NULL);
    free(buf);
}

static inline void fz_op(fuzz_reader *r, sleapc_h5 *f)
{
    int op = fz_byte(r) % 7;
    char path[72], name[72], text[1024];
    if (op == 4) {
        fz_table(r, f);
        return;
    }
    fz_str(r, path, sizeof path);
    if (!path[0])
        snprintf(path, sizeof path, "x");
    if (op == 0) {
        sleapc__h5_create_group(f, path);
    } else if (op == 1 || op == 5 || op == 6) {
        fz_str(r, name, sizeof name);
        if (!name[0])
            snprintf(name, sizeof name, "a");
        if (op == 1) {
            fz_str(r, text, sizeof text);
            sleapc__h5_set_attr_string(f, path, name, text, false);
        } else {
            uint8_t raw[8];
            fz_bytes(r, raw, 8);
            double d;
            int64_t i;
            memcpy(&d, raw, 8);
            memcpy(&i, raw, 8);
            if (op == 5)
                sleapc__h5_set_attr_double(f, path, name, d);
            else
                sleapc__h5_set_attr_int(f, path, name, i);
        }
    } else if (op == 2) {
        int ndim = 1 + fz_byte(r) % 3;
        int64_t dims[3], n = 1;
        for (int d = 0; d < ndim; d++) {
            dims[d] = fz_byte(r) % 17;
            n *= dims[d];
        }
        if (n > FUZZ_H5_MAX_ELEMS)
            return;
        float *v = calloc((size_t)n + 1, sizeof *v);
        if (!v)
            return;
        fz_bytes(r, v, (size_t)n * sizeof *v);
        sleapc__h5_write(f, path, SLEAPC_H5_F32, ndim, dims, v, NULL);
        free(v);
    } else if (op == 3) {
        int64_t rows = fz_byte(r) % 9;
        char row_text[8][256];
        const char *rows_p[8];
        for (int64_t k = 0; k < rows; k++) {
            fz_str(r, row_text[k], sizeof row_text[k]);
            rows_p[k] = row_text[k];
        }
        if (rows)
            sleapc__h5_write_strings(f, path, 1, &rows, rows_p, NULL);
    }
}

/* Build the file at path from data; false when it cannot be written. */
static inline int fuzz_h5_build(const char *path, const uint8_t *data, size_t size)
{
#ifdef SLEAPC_LIBFUZZER
    /* libhdf5 hands its large blocks (a file's metadata cache is over a
     * megabyte) back to the system past a small limit, and under ASan each
     * new block is fresh pages: keeping them makes a run ~10x faster. */
    static int limits_set;
    if (!limits_set++)
        H5set_free_list_limits(-1, -1, -1, -1, -1, -1);
#endif
    sleapc_h5 *f = NULL;
    if (sleapc__h5_create(path, &f))
        return 0;
    fuzz_reader r = {data, size, 0};
    for (int ops = 0; r.at < r.n && ops < 256; ops++)
        fz_op(&r, f);
    return sleapc__h5_close(f) == SLEAPC_OK;
}

#endif
