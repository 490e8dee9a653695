/* A pickle virtual machine for what torch.save writes (protocols 0-4, plus
 * BYTEARRAY8 from 5). Python objects become plain tagged values; anything
 * that is not a container, a scalar or one of torch's tensor-rebuild calls
 * becomes an opaque stand-in, so a whole Lightning checkpoint decodes without
 * knowing its classes. Nothing is ever executed. */
#ifndef SLEAPC_IO_CKPT_PICKLE_H
#define SLEAPC_IO_CKPT_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef enum sleapc_pk_kind {
    SLEAPC_PK_NONE,
    SLEAPC_PK_BOOL,     /* u.i is 0 or 1 */
    SLEAPC_PK_INT,      /* u.i; an int wider than 64 bits is SLEAPC_PK_BIGINT */
    SLEAPC_PK_BIGINT,   /* value not kept */
    SLEAPC_PK_FLOAT,    /* u.f */
    SLEAPC_PK_STR,      /* u.str: UTF-8 (or Python 2 str) bytes */
    SLEAPC_PK_BYTES,    /* u.str: raw bytes (bytes, bytearray) */
    SLEAPC_PK_TUPLE,    /* u.seq */
    SLEAPC_PK_LIST,     /* u.seq */
    SLEAPC_PK_SET,      /* u.seq (set and frozenset; duplicates are not removed) */
    SLEAPC_PK_DICT,     /* u.seq: key, value, key, value ... in insertion order */
    SLEAPC_PK_GLOBAL,   /* u.global: a class or function named by GLOBAL/STACK_GLOBAL */
    SLEAPC_PK_OPAQUE,   /* u.opaque: the result of calling something unknown */
    SLEAPC_PK_STORAGE,  /* u.storage: a torch storage named by a persistent id */
    SLEAPC_PK_TENSOR,   /* u.tensor: the result of torch._utils._rebuild_tensor(_v2) */
} sleapc_pk_kind;

/* Element types of torch's typed storages (torch.FloatStorage, ...). */
typedef enum sleapc_pk_dtype {
    SLEAPC_PK_DTYPE_UNKNOWN = 0,  /* any other storage class: refused when read */
    SLEAPC_PK_DTYPE_F32,
    SLEAPC_PK_DTYPE_F64,
    SLEAPC_PK_DTYPE_F16,
    SLEAPC_PK_DTYPE_BF16,
    SLEAPC_PK_DTYPE_I64,
    SLEAPC_PK_DTYPE_I32,
    SLEAPC_PK_DTYPE_I16,
    SLEAPC_PK_DTYPE_I8,
    SLEAPC_PK_DTYPE_U8,
    SLEAPC_PK_DTYPE_BOOL,
} sleapc_pk_dtype;

/* Bytes per element of a dtype; 0 for SLEAPC_PK_DTYPE_UNKNOWN. */
size_t sleapc__pk_dtype_size(sleapc_pk_dtype dtype);

typedef struct sleapc_pk_obj sleapc_pk_obj;

struct sleapc_pk_obj {
    sleapc_pk_kind kind;
    union {
        int64_t i;
        double f;
        struct {
            const char *p;  /* not NUL-terminated; may contain NUL bytes */
            size_t n;
        } str;
        struct {
            sleapc_pk_obj **items;
            size_t n;  /* DICT: 2 x number of pairs */
            size_t cap;
        } seq;
        struct {
            const char *module;  /* NUL-terminated */
            const char *name;    /* NUL-terminated */
            int fn;              /* internal: what calling it does */
            sleapc_pk_dtype dtype;  /* storage classes only */
        } global;
        struct {
            const sleapc_pk_obj *type;  /* the GLOBAL that was called; NULL if unknown */
        } opaque;
        struct {
            const sleapc_pk_obj *type;  /* GLOBAL of the storage class */
            sleapc_pk_dtype dtype;      /* from type; UNKNOWN for other classes */
            const sleapc_pk_obj *key;   /* STR: the zip entry is <prefix>/data/<key> */
            int64_t numel;              /* elements in the whole storage, >= 0 */
        } storage;
        struct {
            const sleapc_pk_obj *storage;  /* STORAGE */
            int64_t offset;                /* storage_offset in elements, >= 0 */
            const sleapc_pk_obj *size;     /* TUPLE of INT, same length as stride */
            const sleapc_pk_obj *stride;   /* TUPLE of INT */
        } tensor;
    } u;
};

typedef struct sleapc_pickle sleapc_pickle;

/* Run the pickle in data[0..n). data is borrowed and must outlive *out
 * (strings point into it). On success *out owns every decoded object; on
 * failure *out is NULL. Returns SLEAPC_ERR_FORMAT for malformed input
 * ("unknown pickle opcode 0x.. at offset K", truncation, stack or memo misuse,
 * bad torch rebuild arguments), SLEAPC_ERR_UNSUPPORTED for a valid construct
 * this decoder refuses (out-of-band buffers, nesting beyond its limits) or
 * SLEAPC_ERR_NOMEM. Messages do not name the file; callers add that. */
sleapc_status sleapc__pickle_load(const uint8_t *data, size_t n, sleapc_pickle **out);

/* The object STOP returned; valid until sleapc__pickle_destroy. */
const sleapc_pk_obj *sleapc__pickle_root(const sleapc_pickle *pk);

/* Free everything; accepts NULL. */
void sleapc__pickle_destroy(sleapc_pickle *pk);

/* Value for a STR key in a DICT (the last one wins, as in Python); NULL when
 * dict is not a DICT or has no such key. */
const sleapc_pk_obj *sleapc__pk_dict_get(const sleapc_pk_obj *dict, const char *key);

#endif
