/* A small tree of Python values (dicts, ints, floats, numpy scalars and
 * arrays, lists), the shape of the metrics dicts sleap-nn returns, so one
 * result can be written as JSON and as the pickled .npz sleap-nn saves. */
#ifndef SLEAPC_IO_PYOBJ_PYOBJ_H
#define SLEAPC_IO_PYOBJ_PYOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef enum sleapc_pyobj_kind {
    SLEAPC_PYOBJ_DICT,       /* keys and values, in insertion order */
    SLEAPC_PYOBJ_INT,        /* Python int */
    SLEAPC_PYOBJ_FLOAT,      /* Python float */
    SLEAPC_PYOBJ_NP_F64,     /* numpy.float64 scalar */
    SLEAPC_PYOBJ_NP_I64,     /* numpy.int64 scalar */
    SLEAPC_PYOBJ_ARRAY_F64,  /* ndarray float64, C order */
    SLEAPC_PYOBJ_ARRAY_BOOL, /* ndarray bool, C order */
    SLEAPC_PYOBJ_LIST_INT,   /* list of Python ints */
    SLEAPC_PYOBJ_LIST_STR,   /* list of str */
    SLEAPC_PYOBJ_STR,        /* str (strs[0]) */
    SLEAPC_PYOBJ_BOOL,       /* Python bool (i: 0 or 1) */
    SLEAPC_PYOBJ_NONE,       /* None (JSON null) */
} sleapc_pyobj_kind;

typedef struct sleapc_pyobj sleapc_pyobj;
struct sleapc_pyobj {
    sleapc_pyobj_kind kind;
    int64_t i;           /* INT, NP_I64 */
    double f;            /* FLOAT, NP_F64 */
    int ndim;            /* arrays: 1..3 */
    int64_t shape[3];    /* arrays */
    int64_t n;           /* element count of arrays and lists; items of dicts */
    double *f64;         /* ARRAY_F64 [n] */
    uint8_t *b;          /* ARRAY_BOOL [n] */
    int64_t *ints;       /* LIST_INT [n] */
    char **strs;         /* LIST_STR [n] */
    char **keys;         /* DICT [n] */
    sleapc_pyobj **vals; /* DICT [n] */
    int64_t cap;         /* DICT: room in keys/vals */
};

/* Constructors: NULL when out of memory (sleapc_last_error set). Arrays and
 * lists copy their data. */
sleapc_pyobj *sleapc__pyobj_dict(void);
sleapc_pyobj *sleapc__pyobj_int(int64_t v);
sleapc_pyobj *sleapc__pyobj_float(double v);
sleapc_pyobj *sleapc__pyobj_np_f64(double v);
sleapc_pyobj *sleapc__pyobj_np_i64(int64_t v);
sleapc_pyobj *sleapc__pyobj_array_f64(const double *data, int ndim, const int64_t *shape);
sleapc_pyobj *sleapc__pyobj_array_bool(const uint8_t *data, int ndim, const int64_t *shape);
sleapc_pyobj *sleapc__pyobj_list_int(const int64_t *data, int64_t n);
sleapc_pyobj *sleapc__pyobj_list_str(const char *const *data, int64_t n);
sleapc_pyobj *sleapc__pyobj_str(const char *s);
sleapc_pyobj *sleapc__pyobj_bool(bool v);
sleapc_pyobj *sleapc__pyobj_none(void);

/* Add key -> v to dict d, which takes v (also on failure, when v is freed).
 * A NULL v (a failed constructor) fails with SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__pyobj_set(sleapc_pyobj *d, const char *key, sleapc_pyobj *v);

/* The value of key in dict d, or NULL. */
const sleapc_pyobj *sleapc__pyobj_get(const sleapc_pyobj *d, const char *key);

/* Free the tree. Accepts NULL. */
void sleapc__pyobj_free(sleapc_pyobj *o);

/* The tree as JSON text: arrays as nested lists, NaN and infinities as the
 * strings "nan", "inf", "-inf", floats with 17 significant digits. *out is
 * a new NUL-terminated string (sleapc__free). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__pyobj_to_json(const sleapc_pyobj *o, char **out);

/* Write the tree as numpy writes np.savez_compressed(path, metrics=tree): a
 * zip holding metrics.npy, a 0-d object array whose pickle (protocol 2) is
 * the dict, readable by np.load(path, allow_pickle=True)["metrics"].item().
 * Atomic. SLEAPC_ERR_IO naming path; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__pyobj_write_npz(const sleapc_pyobj *o, const char *key, const char *path);

#endif
