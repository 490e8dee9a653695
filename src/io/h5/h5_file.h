/* A small wrapper over libhdf5: the only way the rest of sleapc touches HDF5
 * files (.slp labels, analysis exports, legacy Keras .h5 models). Only the
 * files in src/io/h5/ include hdf5.h; everything here speaks plain C types.
 *
 * Conventions shared by every function below:
 * - Object paths are absolute or relative to the root ("/frames", "frames",
 *   "/video0/video"). Attributes are named by (object path, attribute name).
 * - Failures return a sleapc_status with the message "action: file: object:
 *   reason" (HDF5's own innermost reason appended when it gave one). HDF5's
 *   automatic error printing is switched off; nothing is ever printed.
 * - Memory handed out (arrays, strings, name lists) comes from sleapc__malloc
 *   and is owned by the caller: free with sleapc__free or the named helper.
 * - Out-parameters are cleared on entry, so they hold nothing on failure.
 * - A handle is used by one thread at a time (libhdf5 serialises calls). */
#ifndef SLEAPC_IO_H5_FILE_H
#define SLEAPC_IO_H5_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

#define SLEAPC_H5_MAX_DIMS 8

typedef struct sleapc_h5 sleapc_h5;

/* Element types for reading and writing. In memory they are the native C
 * types; on disk, little-endian. SLEAPC_H5_BOOL is a uint8_t (0/1) in
 * memory and, on disk, the 8-bit enum {FALSE = 0, TRUE = 1} that h5py uses
 * for numpy bool. 0 (SLEAPC_H5_TYPE_DEFAULT) means "the same as the memory
 * type" where a file type is optional. */
typedef enum sleapc_h5_type {
    SLEAPC_H5_TYPE_DEFAULT = 0,
    SLEAPC_H5_I8,
    SLEAPC_H5_U8,
    SLEAPC_H5_I16,
    SLEAPC_H5_U16,
    SLEAPC_H5_I32,
    SLEAPC_H5_U32,
    SLEAPC_H5_I64,
    SLEAPC_H5_U64,
    SLEAPC_H5_F32,
    SLEAPC_H5_F64,
    SLEAPC_H5_BOOL,
    SLEAPC_H5_TYPE_COUNT
} sleapc_h5_type;

/* Size in bytes of one element of t in memory (0 for DEFAULT). */
size_t sleapc__h5_type_size(sleapc_h5_type t);

/* ---- Files ------------------------------------------------------------ */

/* Open an existing file read-only. SLEAPC_ERR_IO when it cannot be opened
 * (missing, permissions), SLEAPC_ERR_FORMAT "not an HDF5 file" when it has
 * no HDF5 signature, SLEAPC_ERR_FORMAT when libhdf5 rejects it (truncated,
 * corrupt superblock). */
sleapc_status sleapc__h5_open(const char *path, sleapc_h5 **out);

/* Create path, truncating an existing file. SLEAPC_ERR_IO on failure. */
sleapc_status sleapc__h5_create(const char *path, sleapc_h5 **out);

/* Create a file that appears at path only when sleapc__h5_close succeeds:
 * writes go to "<path>.tmp.XXXXXX" in the same folder, which close renames
 * into place (after an fsync) and sleapc__h5_discard removes. */
sleapc_status sleapc__h5_create_atomic(const char *path, sleapc_h5 **out);

/* Close f. For a file made by sleapc__h5_create_atomic this is the commit:
 * on any failure the temporary file is removed and path is untouched. Always
 * releases f; accepts NULL. Returns the first failure (SLEAPC_ERR_IO). */
sleapc_status sleapc__h5_close(sleapc_h5 *f);

/* Close f without committing: an atomic file's temporary file is removed.
 * Accepts NULL. Never fails. */
void sleapc__h5_discard(sleapc_h5 *f);

/* The path f was opened or created with (the target path for atomic files).
 * Owned by f. */
const char *sleapc__h5_path(const sleapc_h5 *f);

/* ---- Objects ---------------------------------------------------------- */

typedef enum sleapc_h5_kind {
    SLEAPC_H5_KIND_NONE = 0, /* no such object (or a path through a non-group) */
    SLEAPC_H5_KIND_GROUP,
    SLEAPC_H5_KIND_DATASET,
    SLEAPC_H5_KIND_OTHER /* named datatype, dangling or external link */
} sleapc_h5_kind;

/* What obj is. Never fails: anything unreadable is KIND_NONE. */
sleapc_h5_kind sleapc__h5_kind(sleapc_h5 *f, const char *obj);
bool sleapc__h5_is_group(sleapc_h5 *f, const char *obj);
bool sleapc__h5_is_dataset(sleapc_h5 *f, const char *obj);

/* Names of the members of group (links, not recursive), in creation order
 * when the file tracks it and by name otherwise. *names is an array of *n
 * strings; free with sleapc__h5_free_strings(*names, *n). */
sleapc_status sleapc__h5_list(sleapc_h5 *f, const char *group, char ***names, int64_t *n);

/* Names of the attributes of obj, in the same order rules as list. */
sleapc_status sleapc__h5_attr_names(sleapc_h5 *f, const char *obj, char ***names, int64_t *n);

/* Free an array of n strings as returned here. Accepts NULL. */
void sleapc__h5_free_strings(char **strs, int64_t n);

/* Make a group (and any missing parents). SLEAPC_ERR_IO on failure. */
sleapc_status sleapc__h5_create_group(sleapc_h5 *f, const char *group);

/* ---- Describing datasets and attributes -------------------------------- */

typedef enum sleapc_h5_class {
    SLEAPC_H5_CLASS_OTHER = 0,
    SLEAPC_H5_CLASS_INT,
    SLEAPC_H5_CLASS_FLOAT,
    SLEAPC_H5_CLASS_STRING,
    SLEAPC_H5_CLASS_COMPOUND,
    SLEAPC_H5_CLASS_ENUM,
    SLEAPC_H5_CLASS_VLEN, /* variable-length sequence (not a string) */
    SLEAPC_H5_CLASS_ARRAY
} sleapc_h5_class;

typedef struct sleapc_h5_info {
    sleapc_h5_class cls;
    size_t elem_size; /* bytes per element in the file (vlen: the handle size) */
    bool is_signed;   /* INT, and ENUM's base type */
    bool vlen_string; /* STRING of variable length */
    int ndim;         /* 0 for a scalar */
    int64_t shape[SLEAPC_H5_MAX_DIMS];
    int64_t maxshape[SLEAPC_H5_MAX_DIMS]; /* -1 = unlimited (datasets; attrs: = shape) */
    int64_t n_elems;                      /* product of shape (1 for a scalar) */
    /* Datasets only: */
    bool chunked;
    int64_t chunk[SLEAPC_H5_MAX_DIMS];
    int gzip;      /* deflate level, -1 when not compressed */
    int n_members; /* COMPOUND */
} sleapc_h5_info;

/* Type, shape and layout of a dataset. SLEAPC_ERR_FORMAT when it is missing
 * or has more than SLEAPC_H5_MAX_DIMS dimensions. */
sleapc_status sleapc__h5_dataset_info(sleapc_h5 *f, const char *dset, sleapc_h5_info *out);

/* Type and shape of attribute name of obj. */
sleapc_status sleapc__h5_attr_info(sleapc_h5 *f, const char *obj, const char *name,
                                   sleapc_h5_info *out);

/* A canonical one-line text of a dataset's (attr == NULL) or an attribute's
 * file datatype, e.g. "f64le", "str[13,nullpad,ascii]", "vlen-str[utf8]",
 * "enum:i8le{FALSE=0,TRUE=1}" or
 * "compound[36]{frame_id@0:u64le,video@8:u32le,...}". Two objects with equal
 * texts have the same on-disk type. *text is owned by the caller. */
sleapc_status sleapc__h5_type_text(sleapc_h5 *f, const char *obj, const char *attr, char **text);

bool sleapc__h5_attr_exists(sleapc_h5 *f, const char *obj, const char *name);

/* ---- Reading ---------------------------------------------------------- */

/* Read a whole numeric dataset (any integer, float or bool-enum type, any
 * byte order) converted to type t, into a new array of info->n_elems
 * elements. info (optional) receives the dataset's description (shape).
 * Integer conversion out of range of t, or a non-numeric dataset, is
 * SLEAPC_ERR_FORMAT. An empty dataset gives a non-NULL 1-byte block. */
sleapc_status sleapc__h5_read(sleapc_h5 *f, const char *dset, sleapc_h5_type t, void **data,
                              sleapc_h5_info *info);

/* Same, into dst, which holds exactly n_elems elements of t; the dataset
 * must have that many elements (SLEAPC_ERR_FORMAT otherwise). */
sleapc_status sleapc__h5_read_into(sleapc_h5 *f, const char *dset, sleapc_h5_type t, void *dst,
                                   int64_t n_elems);

/* Read a dataset's bytes exactly as stored in its file datatype (no
 * conversion; not for variable-length types). *n_bytes = elements * size. */
sleapc_status sleapc__h5_read_raw(sleapc_h5 *f, const char *dset, void **data, size_t *n_bytes);

/* Read a string dataset (scalar or any shape, flattened in C order) into *n
 * NUL-terminated strings, fixed length (trailing NULs and, for SPACEPAD,
 * spaces removed) or variable length. An empty dataset of any type gives
 * *n = 0 (h5py writes empty string lists as float64 (0,)). */
sleapc_status sleapc__h5_read_strings(sleapc_h5 *f, const char *dset, char ***strs, int64_t *n);

/* Row `row` along the first axis of a dataset of 1-byte integers: a 1-D
 * dataset of variable-length int8/uint8 sequences gives that sequence; an
 * N-D fixed dataset gives the row's bytes (trailing padding included).
 * SLEAPC_ERR_INVALID_ARG when row is out of range. *bytes is owned by the
 * caller (never NULL on success). */
sleapc_status sleapc__h5_read_row_bytes(sleapc_h5 *f, const char *dset, int64_t row,
                                        uint8_t **bytes, size_t *n);

/* Scalar (or 1-element) attributes converted to C types. A string attribute
 * may be fixed or variable length, or a 1-D uint8/int8 array of its bytes;
 * *s is NUL-terminated with trailing NULs removed. SLEAPC_ERR_FORMAT when
 * the attribute is missing or of another kind. */
sleapc_status sleapc__h5_attr_string(sleapc_h5 *f, const char *obj, const char *name, char **s);
sleapc_status sleapc__h5_attr_int(sleapc_h5 *f, const char *obj, const char *name, int64_t *v);
sleapc_status sleapc__h5_attr_double(sleapc_h5 *f, const char *obj, const char *name, double *v);

/* A 1-D (or scalar) string attribute as *n strings (Keras "layer_names"). */
sleapc_status sleapc__h5_attr_strings(sleapc_h5 *f, const char *obj, const char *name, char ***strs,
                                      int64_t *n);

/* Attribute bytes exactly as stored in its file datatype (not vlen). */
sleapc_status sleapc__h5_attr_raw(sleapc_h5 *f, const char *obj, const char *name, void **data,
                                  size_t *n_bytes);

/* ---- Compound tables ----------------------------------------------------
 * A record layout maps named members of a 1-D compound dataset to fields of
 * a caller's C struct. Reading converts by member name (so file member
 * order, offsets, byte order and integer widths may differ); writing
 * produces a packed file type with the members in the given order. */
typedef struct sleapc_h5_field {
    const char *name;         /* member name in the file */
    sleapc_h5_type type;      /* C type of the struct field */
    size_t offset;            /* offsetof(struct, field) */
    sleapc_h5_type file_type; /* writing: type on disk (DEFAULT = same) */
    bool optional;            /* reading: a missing member leaves the field zero */
} sleapc_h5_field;

/* Read a whole 1-D compound dataset into *n_rows records of record_size
 * bytes (zero-filled, then the listed fields set). A required member that
 * is missing, or that cannot be converted, is SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__h5_read_compound(sleapc_h5 *f, const char *dset,
                                       const sleapc_h5_field *fields, int n_fields,
                                       size_t record_size, void **rows, int64_t *n_rows);

/* The same for rows [first, first + count) only (count -1: to the end),
 * into *rows (count records); *n_total gets the table's length. Rows
 * outside the table are SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__h5_read_compound_rows(sleapc_h5 *f, const char *dset,
                                            const sleapc_h5_field *fields, int n_fields,
                                            size_t record_size, int64_t first, int64_t count,
                                            void **rows, int64_t *n_total);

/* ---- Writing ---------------------------------------------------------- */

typedef struct sleapc_h5_write_opts {
    sleapc_h5_type file_type; /* numeric writes: type on disk (DEFAULT = memory type) */
    bool chunked;             /* chunked layout (required by unlimited and gzip) */
    const int64_t *chunk;     /* chunk shape; NULL = guessed the way h5py does */
    bool unlimited;           /* maxshape None on every axis, as h5py's maxshape=(None,) */
    bool unlimited_first;     /* maxshape None on the first axis only: (None, D) */
    int gzip;                 /* 0 = none, 1..9 = deflate level */
} sleapc_h5_write_opts;

/* Write an ndim-dimensional dataset (ndim 0 = scalar) of memory type t from
 * data (C order). opts may be NULL (contiguous, no filter, same type).
 * Chunked layouts: a zero-length axis gets h5py's chunk of 1024 when
 * unlimited; with a fixed zero-length axis the dataset stays contiguous
 * unless gzip is asked for (then chunked as h5py does: that axis's chunk
 * is guessed as if it were 1024 long). */
sleapc_status sleapc__h5_write(sleapc_h5 *f, const char *dset, sleapc_h5_type t, int ndim,
                               const int64_t *shape, const void *data,
                               const sleapc_h5_write_opts *opts);

/* Write strings as fixed-length ASCII, NULL-padded, element size = longest
 * string (at least 1), as h5py stores a list of bytes. ndim/shape as above;
 * strs holds the product of shape strings in C order. */
sleapc_status sleapc__h5_write_strings(sleapc_h5 *f, const char *dset, int ndim,
                                       const int64_t *shape, const char *const *strs,
                                       const sleapc_h5_write_opts *opts);

/* A scalar variable-length UTF-8 string dataset (h5py's str). */
sleapc_status sleapc__h5_write_vlen_string(sleapc_h5 *f, const char *dset, const char *s);

/* A 1-D dataset of n variable-length UTF-8 strings (h5py's
 * string_dtype()); NULL entries are written as "". opts as above. */
sleapc_status sleapc__h5_write_vlen_strings(sleapc_h5 *f, const char *dset, int64_t n,
                                            const char *const *strs,
                                            const sleapc_h5_write_opts *opts);

/* Write n_rows records as a 1-D compound dataset with a packed file type
 * made of fields in order (file_type or type for each member). */
sleapc_status sleapc__h5_write_compound(sleapc_h5 *f, const char *dset,
                                        const sleapc_h5_field *fields, int n_fields,
                                        size_t record_size, const void *rows, int64_t n_rows,
                                        const sleapc_h5_write_opts *opts);

/* The same contiguous compound dataset of n_rows records, created at its
 * final size and then written a block of rows at a time (the file is the
 * same as one write_compound call makes). Close ends it (also after a
 * failed write; accepts NULL). */
typedef struct sleapc_h5_table sleapc_h5_table;
sleapc_status sleapc__h5_table_create(sleapc_h5 *f, const char *dset,
                                      const sleapc_h5_field *fields, int n_fields,
                                      size_t record_size, int64_t n_rows, sleapc_h5_table **out);
/* Rows [first, first + n) from rows (record_size bytes each). */
sleapc_status sleapc__h5_table_write(sleapc_h5_table *t, int64_t first, const void *rows,
                                     int64_t n);
sleapc_status sleapc__h5_table_close(sleapc_h5_table *t);

/* Scalar attributes on a group or dataset (replaced when present). A string
 * is fixed-length ASCII NULL-padded (h5py's numpy bytes) or, with vlen,
 * variable-length UTF-8 (h5py's str). int is int64, double float64. */
sleapc_status sleapc__h5_set_attr_string(sleapc_h5 *f, const char *obj, const char *name,
                                         const char *s, bool vlen);
sleapc_status sleapc__h5_set_attr_int(sleapc_h5 *f, const char *obj, const char *name, int64_t v);
sleapc_status sleapc__h5_set_attr_double(sleapc_h5 *f, const char *obj, const char *name, double v);

/* h5py's guess_chunk: the chunk shape h5py picks for a chunked dataset of
 * this shape and element size (zero-length axes count as 1024). */
void sleapc__h5_guess_chunk(int ndim, const int64_t *shape, size_t elem_size, int64_t *chunk);

#endif
