/* The Python value tree (see pyobj.h): construction and JSON text. */
#include "io/pyobj/pyobj.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

static sleapc_pyobj *node(sleapc_pyobj_kind kind)
{
    sleapc_pyobj *o = sleapc__calloc(1, sizeof *o);
    if (!o)
        sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
    else
        o->kind = kind;
    return o;
}

sleapc_pyobj *sleapc__pyobj_dict(void)
{
    return node(SLEAPC_PYOBJ_DICT);
}

sleapc_pyobj *sleapc__pyobj_int(int64_t v)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_INT);
    if (o)
        o->i = v;
    return o;
}

sleapc_pyobj *sleapc__pyobj_float(double v)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_FLOAT);
    if (o)
        o->f = v;
    return o;
}

sleapc_pyobj *sleapc__pyobj_np_f64(double v)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_NP_F64);
    if (o)
        o->f = v;
    return o;
}

sleapc_pyobj *sleapc__pyobj_np_i64(int64_t v)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_NP_I64);
    if (o)
        o->i = v;
    return o;
}

sleapc_pyobj *sleapc__pyobj_bool(bool v)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_BOOL);
    if (o)
        o->i = v;
    return o;
}

sleapc_pyobj *sleapc__pyobj_none(void)
{
    return node(SLEAPC_PYOBJ_NONE);
}

static sleapc_pyobj *array(sleapc_pyobj_kind kind, const void *data, size_t elem, int ndim,
                           const int64_t *shape)
{
    sleapc_pyobj *o = node(kind);
    if (!o)
        return NULL;
    o->ndim = ndim;
    o->n = 1;
    for (int d = 0; d < ndim; d++) {
        o->shape[d] = shape[d];
        o->n *= shape[d];
    }
    void *copy = sleapc__malloc((size_t)o->n * elem + 1);
    if (!copy) {
        sleapc__free(o);
        sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
        return NULL;
    }
    if (o->n)
        memcpy(copy, data, (size_t)o->n * elem);
    if (kind == SLEAPC_PYOBJ_ARRAY_F64)
        o->f64 = copy;
    else
        o->b = copy;
    return o;
}

sleapc_pyobj *sleapc__pyobj_array_f64(const double *data, int ndim, const int64_t *shape)
{
    return array(SLEAPC_PYOBJ_ARRAY_F64, data, sizeof(double), ndim, shape);
}

sleapc_pyobj *sleapc__pyobj_array_bool(const uint8_t *data, int ndim, const int64_t *shape)
{
    return array(SLEAPC_PYOBJ_ARRAY_BOOL, data, 1, ndim, shape);
}

sleapc_pyobj *sleapc__pyobj_list_int(const int64_t *data, int64_t n)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_LIST_INT);
    if (!o)
        return NULL;
    o->n = n;
    o->ints = sleapc__malloc(sizeof(int64_t) * (size_t)n + 1);
    if (!o->ints) {
        sleapc__free(o);
        sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
        return NULL;
    }
    if (n)
        memcpy(o->ints, data, sizeof(int64_t) * (size_t)n);
    return o;
}

sleapc_pyobj *sleapc__pyobj_list_str(const char *const *data, int64_t n)
{
    sleapc_pyobj *o = node(SLEAPC_PYOBJ_LIST_STR);
    if (!o)
        return NULL;
    o->strs = sleapc__calloc((size_t)n + 1, sizeof(char *));
    if (!o->strs) {
        sleapc__free(o);
        sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
        return NULL;
    }
    for (int64_t k = 0; k < n; k++) {
        o->n = k + 1;
        if (!(o->strs[k] = sleapc__strdup(data[k] ? data[k] : ""))) {
            sleapc__pyobj_free(o);
            sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
            return NULL;
        }
    }
    return o;
}

sleapc_pyobj *sleapc__pyobj_str(const char *s)
{
    sleapc_pyobj *o = sleapc__pyobj_list_str(&s, 1);
    if (o)
        o->kind = SLEAPC_PYOBJ_STR;
    return o;
}

sleapc_status sleapc__pyobj_set(sleapc_pyobj *d, const char *key, sleapc_pyobj *v)
{
    if (!v)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
    if (d->n == d->cap) {
        const int64_t cap = d->cap ? d->cap * 2 : 16;
        char **keys = sleapc__realloc(d->keys, sizeof(char *) * (size_t)cap);
        if (keys)
            d->keys = keys;
        sleapc_pyobj **vals = keys ? sleapc__realloc(d->vals, sizeof(*vals) * (size_t)cap) : NULL;
        if (!vals) {
            sleapc__pyobj_free(v);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
        }
        d->vals = vals;
        d->cap = cap;
    }
    if (!(d->keys[d->n] = sleapc__strdup(key))) {
        sleapc__pyobj_free(v);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
    }
    d->vals[d->n++] = v;
    return SLEAPC_OK;
}

const sleapc_pyobj *sleapc__pyobj_get(const sleapc_pyobj *d, const char *key)
{
    if (!d || d->kind != SLEAPC_PYOBJ_DICT)
        return NULL;
    for (int64_t k = 0; k < d->n; k++)
        if (!strcmp(d->keys[k], key))
            return d->vals[k];
    return NULL;
}

void sleapc__pyobj_free(sleapc_pyobj *o)
{
    if (!o)
        return;
    if (o->kind == SLEAPC_PYOBJ_DICT) {
        for (int64_t k = 0; k < o->n; k++) {
            sleapc__free(o->keys[k]);
            sleapc__pyobj_free(o->vals[k]);
        }
    }
    if (o->kind == SLEAPC_PYOBJ_LIST_STR || o->kind == SLEAPC_PYOBJ_STR)
        for (int64_t k = 0; k < o->n; k++)
            sleapc__free(o->strs[k]);
    sleapc__free(o->keys);
    sleapc__free(o->vals);
    sleapc__free(o->strs);
    sleapc__free(o->ints);
    sleapc__free(o->f64);
    sleapc__free(o->b);
    sleapc__free(o);
}

/* A growing string. */
typedef struct text {
    char *s;
    size_t n, cap;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = true;
            return;
        }
        if (t->s && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->n + (size_t)k + 1)
            cap *= 2;
        char *s = sleapc__realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

static void put_float(text *t, double v)
{
    if (isnan(v))
        put(t, "\"nan\"");
    else if (isinf(v))
        put(t, v > 0 ? "\"inf\"" : "\"-inf\"");
    else {
        char buf[40];
        snprintf(buf, sizeof buf, "%.17g", v);
        /* a float stays a float when read back (1.0, not 1) */
        if (!strpbrk(buf, ".eE"))
            strcat(buf, ".0");
        put(t, "%s", buf);
    }
}

static void put_string(text *t, const char *s)
{
    put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            put(t, "\\%c", *p);
        else if (*p < 0x20)
            put(t, "\\u%04x", *p);
        else
            put(t, "%c", *p);
    }
    put(t, "\"");
}

/* Elements [off, off + shape[d]*...) of an array as nested lists. */
static void put_array(text *t, const sleapc_pyobj *o, int d, int64_t *off)
{
    put(t, "[");
    for (int64_t k = 0; k < o->shape[d]; k++) {
        if (k)
            put(t, ", ");
        if (d + 1 < o->ndim && d < 2) {
            put_array(t, o, d + 1, off);
        } else if (o->kind == SLEAPC_PYOBJ_ARRAY_F64) {
            put_float(t, o->f64[(*off)++]);
        } else {
            put(t, "%s", o->b[(*off)++] ? "true" : "false");
        }
    }
    put(t, "]");
}

static void put_obj(text *t, const sleapc_pyobj *o)
{
    switch (o->kind) {
    case SLEAPC_PYOBJ_DICT:
        put(t, "{");
        for (int64_t k = 0; k < o->n; k++) {
            if (k)
                put(t, ", ");
            put_string(t, o->keys[k]);
            put(t, ": ");
            put_obj(t, o->vals[k]);
        }
        put(t, "}");
        break;
    case SLEAPC_PYOBJ_INT:
    case SLEAPC_PYOBJ_NP_I64:
        put(t, "%lld", (long long)o->i);
        break;
    case SLEAPC_PYOBJ_FLOAT:
    case SLEAPC_PYOBJ_NP_F64:
        put_float(t, o->f);
        break;
    case SLEAPC_PYOBJ_ARRAY_F64:
    case SLEAPC_PYOBJ_ARRAY_BOOL: {
        int64_t off = 0;
        put_array(t, o, 0, &off);
        break;
    }
    case SLEAPC_PYOBJ_LIST_INT:
        put(t, "[");
        for (int64_t k = 0; k < o->n; k++)
            put(t, k ? ", %lld" : "%lld", (long long)o->ints[k]);
        put(t, "]");
        break;
    case SLEAPC_PYOBJ_STR:
        put_string(t, o->strs[0]);
        break;
    case SLEAPC_PYOBJ_BOOL:
        put(t, o->i ? "true" : "false");
        break;
    case SLEAPC_PYOBJ_NONE:
        put(t, "null");
        break;
    case SLEAPC_PYOBJ_LIST_STR:
        put(t, "[");
        for (int64_t k = 0; k < o->n; k++) {
            if (k)
                put(t, ", ");
            put_string(t, o->strs[k]);
        }
        put(t, "]");
        break;
    }
}

sleapc_status sleapc__pyobj_to_json(const sleapc_pyobj *o, char **out)
{
    text t = {0};
    put_obj(&t, o);
    put(&t, "\n");
    if (t.failed) {
        sleapc__free(t.s);
        *out = NULL;
        return sleapc__fail(SLEAPC_ERR_NOMEM, "metrics: out of memory");
    }
    *out = t.s;
    return SLEAPC_OK;
}
