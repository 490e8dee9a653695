/* Pickle virtual machine (the opcode semantics of CPython's Lib/pickle.py
 * _Unpickler, with torch.serialization's persistent_load for storages).
 *
 * Safety model: the input is hostile. Every read is bounds-checked, the stack
 * may not be popped below the innermost MARK (CPython's "fence"), memo indices
 * are bounded by the input size, and nothing copies a container that the memo
 * could hand out again, so the work and memory stay linear in the input size.
 * Objects live in an arena freed in one go; they are never freed one by one,
 * which is why shared and cyclic references need no bookkeeping. */
#include "io/ckpt/ckpt_pickle.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

#define ARENA_BLOCK_BYTES 65536u
#define MAX_STACK_ITEMS (1u << 24)
#define MAX_MARKS (1u << 24)
#define MAX_TEXT_NUMBER 128u /* longest INT/LONG/FLOAT/GET/PUT text argument */
#define MAX_CALL_DEPTH 8     /* _rebuild_from_type_v2 may wrap another call */
#define HIGHEST_PROTOCOL 5

/* What calling (or instantiating) a GLOBAL does. */
enum {
    FN_OPAQUE = 0,
    FN_DICT,           /* collections.OrderedDict, dict: empty dict when called with () */
    FN_DEFAULTDICT,    /* collections.defaultdict: an empty dict, factory ignored */
    FN_LIST,           /* list: empty list when called with () */
    FN_REBUILD_V2,     /* torch._utils._rebuild_tensor_v2 */
    FN_REBUILD_V1,     /* torch._utils._rebuild_tensor */
    FN_REBUILD_PARAM,  /* torch._utils._rebuild_parameter(_with_state): the tensor itself */
    FN_FROM_TYPE_V2,   /* torch._tensor._rebuild_from_type_v2(func, type, args, state) */
    FN_STORAGE_TYPE,   /* torch.<X>Storage */
};

typedef struct arena_block {
    struct arena_block *next;
    size_t used;
    size_t cap;
    max_align_t mem[];
} arena_block;

struct sleapc_pickle {
    arena_block *blocks;
    sleapc_pk_obj *root;
};

typedef struct vm {
    sleapc_pickle *pk;
    const uint8_t *p;
    size_t n;
    size_t pos;
    size_t op_pos;  /* offset of the opcode being run, for messages */
    sleapc_pk_obj **stack;
    size_t sp, stack_cap;
    size_t *marks;  /* stack heights at each MARK */
    size_t n_marks, marks_cap;
    sleapc_pk_obj **memo;
    size_t memo_cap, memo_count, memo_limit;
    sleapc_pk_obj *none, *yes, *no;
} vm;

size_t sleapc__pk_dtype_size(sleapc_pk_dtype dtype)
{
    switch (dtype) {
    case SLEAPC_PK_DTYPE_F64:
    case SLEAPC_PK_DTYPE_I64:
        return 8;
    case SLEAPC_PK_DTYPE_F32:
    case SLEAPC_PK_DTYPE_I32:
        return 4;
    case SLEAPC_PK_DTYPE_F16:
    case SLEAPC_PK_DTYPE_BF16:
    case SLEAPC_PK_DTYPE_I16:
        return 2;
    case SLEAPC_PK_DTYPE_I8:
    case SLEAPC_PK_DTYPE_U8:
    case SLEAPC_PK_DTYPE_BOOL:
        return 1;
    case SLEAPC_PK_DTYPE_UNKNOWN:
        break;
    }
    return 0;
}

/* ---- errors ---- */

/* The helpers return the status constant rather than sleapc__fail's result
 * so the compiler can see that a failing read leaves no output to use. */
static sleapc_status fail_at(const vm *v, sleapc_status st, const char *fmt, va_list ap)
{
    char what[256];
    vsnprintf(what, sizeof what, fmt, ap);
    sleapc__fail(st, "%s at offset %zu", what, v->op_pos);
    return st;
}

static sleapc_status bad(const vm *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static sleapc_status bad(const vm *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_at(v, SLEAPC_ERR_FORMAT, fmt, ap);
    va_end(ap);
    return SLEAPC_ERR_FORMAT;
}

static sleapc_status refuse(const vm *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static sleapc_status refuse(const vm *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_at(v, SLEAPC_ERR_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return SLEAPC_ERR_UNSUPPORTED;
}

static sleapc_status nomem(void)
{
    sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    return SLEAPC_ERR_NOMEM;
}

/* ---- arena ---- */

static void *arena_alloc(sleapc_pickle *pk, size_t n)
{
    const size_t align = alignof(max_align_t);
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + align - 1) / align * align;
    arena_block *b = pk->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK_BYTES ? n : ARENA_BLOCK_BYTES;
        arena_block *nb = sleapc__malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        /* An oversized request gets its own block behind the current one, so
         * the room left in the current block is not wasted. */
        if (b && n > ARENA_BLOCK_BYTES) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            pk->blocks = nb;
        }
        b = nb;
    }
    void *p = (unsigned char *)b->mem + b->used;
    b->used += n;
    return p;
}

static sleapc_pk_obj *new_obj(vm *v, sleapc_pk_kind kind)
{
    sleapc_pk_obj *o = arena_alloc(v->pk, sizeof *o);
    if (o) {
        memset(o, 0, sizeof *o);
        o->kind = kind;
    }
    return o;
}

/* Append k items to a sequence; grows by doubling inside the arena (the old
 * array is abandoned, which at most doubles the space used). */
static sleapc_status seq_extend(vm *v, sleapc_pk_obj *s, sleapc_pk_obj *const *items, size_t k)
{
    if (k > s->u.seq.cap - s->u.seq.n) {
        size_t need = s->u.seq.n + k;
        size_t cap = s->u.seq.cap ? s->u.seq.cap : 4;
        while (cap < need) {
            if (cap > SIZE_MAX / 2 / sizeof *items)
                return nomem();
            cap *= 2;
        }
        sleapc_pk_obj **arr = arena_alloc(v->pk, cap * sizeof *arr);
        if (!arr)
            return nomem();
        if (s->u.seq.n)
            memcpy(arr, s->u.seq.items, s->u.seq.n * sizeof *arr);
        s->u.seq.items = arr;
        s->u.seq.cap = cap;
    }
    if (k)
        memcpy(s->u.seq.items + s->u.seq.n, items, k * sizeof *items);
    s->u.seq.n += k;
    return SLEAPC_OK;
}

static sleapc_status new_str(vm *v, sleapc_pk_kind kind, const uint8_t *p, size_t n,
                             sleapc_pk_obj **out)
{
    *out = NULL;
    sleapc_pk_obj *o = new_obj(v, kind);
    if (!o)
        return nomem();
    o->u.str.p = (const char *)p;
    o->u.str.n = n;
    *out = o;
    return SLEAPC_OK;
}

static int str_eq(const sleapc_pk_obj *o, const char *s)
{
    size_t n = strlen(s);
    return (o->kind == SLEAPC_PK_STR || o->kind == SLEAPC_PK_BYTES) && o->u.str.n == n &&
           memcmp(o->u.str.p, s, n) == 0;
}

/* ---- stack, marks, memo ---- */

static size_t fence(const vm *v)
{
    return v->n_marks ? v->marks[v->n_marks - 1] : 0;
}

static sleapc_status push(vm *v, sleapc_pk_obj *o)
{
    if (!o)
        return nomem();
    if (v->sp == v->stack_cap) {
        if (v->stack_cap >= MAX_STACK_ITEMS)
            return refuse(v, "pickle stack deeper than %u items", MAX_STACK_ITEMS);
        size_t cap = v->stack_cap ? v->stack_cap * 2 : 256;
        sleapc_pk_obj **s = sleapc__realloc(v->stack, cap * sizeof *s);
        if (!s)
            return nomem();
        v->stack = s;
        v->stack_cap = cap;
    }
    v->stack[v->sp++] = o;
    return SLEAPC_OK;
}

static sleapc_status pop(vm *v, sleapc_pk_obj **out)
{
    *out = NULL;
    if (v->sp <= fence(v))
        return bad(v, "pickle stack underflow");
    *out = v->stack[--v->sp];
    return SLEAPC_OK;
}

static sleapc_status peek(vm *v, sleapc_pk_obj **out)
{
    *out = NULL;
    if (v->sp <= fence(v))
        return bad(v, "pickle stack underflow");
    *out = v->stack[v->sp - 1];
    return SLEAPC_OK;
}

static sleapc_status push_mark(vm *v)
{
    if (v->n_marks == v->marks_cap) {
        if (v->marks_cap >= MAX_MARKS)
            return refuse(v, "pickle nests more than %u marks", MAX_MARKS);
        size_t cap = v->marks_cap ? v->marks_cap * 2 : 64;
        size_t *m = sleapc__realloc(v->marks, cap * sizeof *m);
        if (!m)
            return nomem();
        v->marks = m;
        v->marks_cap = cap;
    }
    v->marks[v->n_marks++] = v->sp;
    return SLEAPC_OK;
}

/* Remove the innermost mark; the items above it are stack[*start .. sp). */
static sleapc_status pop_mark(vm *v, size_t *start)
{
    *start = v->sp;
    if (!v->n_marks)
        return bad(v, "no MARK on the pickle stack");
    *start = v->marks[--v->n_marks];
    return SLEAPC_OK;
}

/* Items since the mark become a new sequence of the given kind. */
static sleapc_status collect(vm *v, sleapc_pk_kind kind, sleapc_pk_obj **out)
{
    *out = NULL;
    size_t start;
    sleapc_status st = pop_mark(v, &start);
    if (st)
        return st;
    sleapc_pk_obj *o = new_obj(v, kind);
    if (!o)
        return nomem();
    if (kind == SLEAPC_PK_DICT && (v->sp - start) % 2)
        return bad(v, "odd number of items for a dict");
    size_t k = v->sp - start;
    /* The stack array is still NULL when nothing was ever pushed. */
    st = seq_extend(v, o, k ? v->stack + start : NULL, k);
    v->sp = start;
    *out = o;
    return st;
}

static sleapc_status memo_put(vm *v, uint64_t idx)
{
    sleapc_pk_obj *o;
    sleapc_status st = peek(v, &o);
    if (st)
        return st;
    if (idx >= v->memo_limit)
        return bad(v, "memo index %llu is out of range", (unsigned long long)idx);
    if (idx >= v->memo_cap) {
        size_t cap = v->memo_cap ? v->memo_cap : 256;
        while (cap <= idx)
            cap *= 2;
        sleapc_pk_obj **m = sleapc__realloc(v->memo, cap * sizeof *m);
        if (!m)
            return nomem();
        memset(m + v->memo_cap, 0, (cap - v->memo_cap) * sizeof *m);
        v->memo = m;
        v->memo_cap = cap;
    }
    if (!v->memo[idx])
        v->memo_count++;
    v->memo[idx] = o;
    return SLEAPC_OK;
}

static sleapc_status memo_get(vm *v, uint64_t idx)
{
    if (idx >= v->memo_cap || !v->memo[idx])
        return bad(v, "memo index %llu was never stored", (unsigned long long)idx);
    return push(v, v->memo[idx]);
}

/* ---- reading arguments ---- */

static sleapc_status take(vm *v, size_t k, const uint8_t **out)
{
    *out = NULL;
    if (v->n - v->pos < k)
        return bad(v, "pickle truncated (argument needs %zu bytes, %zu left)", k,
                   v->n - v->pos);
    *out = v->p + v->pos;
    v->pos += k;
    return SLEAPC_OK;
}

static uint64_t le(const uint8_t *p, int k)
{
    uint64_t x = 0;
    for (int i = k - 1; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}

static sleapc_status take_uint(vm *v, int k, uint64_t *out)
{
    *out = 0;
    const uint8_t *p;
    sleapc_status st = take(v, (size_t)k, &p);
    if (!st)
        *out = le(p, k);
    return st;
}

/* A newline-terminated text argument (protocol 0); the newline is dropped. */
static sleapc_status take_line(vm *v, const uint8_t **s, size_t *len)
{
    *s = NULL;
    *len = 0;
    const uint8_t *nl = memchr(v->p + v->pos, '\n', v->n - v->pos);
    if (!nl)
        return bad(v, "pickle truncated (text argument has no newline)");
    *s = v->p + v->pos;
    *len = (size_t)(nl - *s);
    v->pos += *len + 1;
    return SLEAPC_OK;
}

/* Decimal integer text as pickle protocol 0 writes it ("-12", "12L"). *big is
 * set when the value does not fit in 64 bits. */
static sleapc_status parse_int_text(vm *v, const uint8_t *s, size_t n, int64_t *out, int *big)
{
    *out = 0;
    *big = 0;
    if (n && s[n - 1] == 'L')
        n--;
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return bad(v, "malformed integer text");
    uint64_t mag = 0;
    *big = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return bad(v, "malformed integer text");
        unsigned d = (unsigned)(s[i] - '0');
        if (mag > (UINT64_MAX - d) / 10)
            *big = 1;
        else
            mag = mag * 10 + d;
    }
    if (!*big && mag > (uint64_t)INT64_MAX + (uint64_t)neg)
        *big = 1;
    *out = *big ? 0 : neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return SLEAPC_OK;
}

static sleapc_status push_int(vm *v, int64_t x)
{
    sleapc_pk_obj *o = new_obj(v, SLEAPC_PK_INT);
    if (o)
        o->u.i = x;
    return push(v, o);
}

/* LONG1/LONG4: little-endian two's complement of any width. */
static sleapc_status push_long_bytes(vm *v, const uint8_t *p, size_t n)
{
    if (n > 8) {
        /* Wider than 64 bits unless it is a sign extension of a 64-bit value. */
        uint8_t ext = (p[n - 1] & 0x80) ? 0xff : 0x00;
        for (size_t i = 8; i < n; i++)
            if (p[i] != ext || ((p[7] & 0x80) != (ext & 0x80)))
                return push(v, new_obj(v, SLEAPC_PK_BIGINT));
        n = 8;
    }
    uint64_t x = 0;
    for (size_t i = n; i-- > 0;)
        x = (x << 8) | p[i];
    if (n > 0 && n < 8 && (p[n - 1] & 0x80))
        x |= UINT64_MAX << (8 * n);
    return push_int(v, (int64_t)x);
}

static sleapc_status push_text_int(vm *v, int allow_bool)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = take_line(v, &s, &n);
    if (st)
        return st;
    /* Protocol 0 spells True and False as "I01" and "I00". */
    if (allow_bool && n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1'))
        return push(v, s[1] == '1' ? v->yes : v->no);
    int64_t x;
    int big;
    st = parse_int_text(v, s, n, &x, &big);
    if (st)
        return st;
    return big ? push(v, new_obj(v, SLEAPC_PK_BIGINT)) : push_int(v, x);
}

static sleapc_status take_text_index(vm *v, uint64_t *idx)
{
    *idx = 0;
    const uint8_t *s;
    size_t n;
    sleapc_status st = take_line(v, &s, &n);
    if (st)
        return st;
    int64_t x;
    int big;
    st = parse_int_text(v, s, n, &x, &big);
    if (st)
        return st;
    if (big || x < 0)
        return bad(v, "memo index out of range");
    *idx = (uint64_t)x;
    return SLEAPC_OK;
}

static sleapc_status push_text_float(vm *v)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = take_line(v, &s, &n);
    if (st)
        return st;
    char buf[MAX_TEXT_NUMBER + 1];
    if (n == 0 || n > MAX_TEXT_NUMBER)
        return bad(v, "malformed float text");
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double x = strtod(buf, &end);
    if (*end != '\0')
        return bad(v, "malformed float text");
    sleapc_pk_obj *o = new_obj(v, SLEAPC_PK_FLOAT);
    if (o)
        o->u.f = x;
    return push(v, o);
}

static sleapc_status push_binfloat(vm *v)
{
    const uint8_t *p;
    sleapc_status st = take(v, 8, &p);
    if (st)
        return st;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) /* big-endian, unlike every other number here */
        bits = (bits << 8) | p[i];
    sleapc_pk_obj *o = new_obj(v, SLEAPC_PK_FLOAT);
    if (o)
        memcpy(&o->u.f, &bits, sizeof bits);
    return push(v, o);
}

/* A length-prefixed byte string: k-byte length, then the bytes. */
static sleapc_status push_counted(vm *v, int k, int is_signed, sleapc_pk_kind kind)
{
    uint64_t len;
    sleapc_status st = take_uint(v, k, &len);
    if (st)
        return st;
    if (is_signed && (len & 0x80000000u))
        return bad(v, "negative string length");
    if (len > v->n - v->pos)
        return bad(v, "pickle truncated (string of %llu bytes, %zu left)",
                   (unsigned long long)len, v->n - v->pos);
    const uint8_t *p = v->p + v->pos;
    v->pos += (size_t)len;
    sleapc_pk_obj *o;
    st = new_str(v, kind, p, (size_t)len, &o);
    return st ? st : push(v, o);
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static size_t put_utf8(uint8_t *d, uint32_t cp)
{
    if (cp < 0x80) {
        d[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (uint8_t)(0xc0 | (cp >> 6));
        d[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (uint8_t)(0xe0 | (cp >> 12));
        d[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        d[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    d[0] = (uint8_t)(0xf0 | (cp >> 18));
    d[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    d[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    d[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}

/* STRING: a quoted Python 2 repr, decoded like codecs.escape_decode. */
static sleapc_status push_text_string(vm *v)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = take_line(v, &s, &n);
    if (st)
        return st;
    if (n < 2 || s[0] != s[n - 1] || (s[0] != '\'' && s[0] != '"'))
        return bad(v, "the STRING opcode argument must be quoted");
    s++;
    n -= 2;
    uint8_t *d = arena_alloc(v->pk, n + 1);
    if (!d)
        return nomem();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            d[k++] = s[i];
            continue;
        }
        uint8_t c = s[++i];
        static const char from[] = "\\'\"abfnrtv";
        static const char to[] = "\\'\"\a\b\f\n\r\t\v";
        const char *hit = c ? strchr(from, c) : NULL;
        if (hit) {
            d[k++] = (uint8_t)to[hit - from];
        } else if (c == 'x' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            d[k++] = (uint8_t)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else if (c >= '0' && c <= '7') {
            unsigned x = (unsigned)(c - '0');
            for (int j = 0; j < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; j++)
                x = x * 8 + (unsigned)(s[++i] - '0');
            d[k++] = (uint8_t)x;
        } else {
            d[k++] = '\\';
            d[k++] = c;
        }
    }
    sleapc_pk_obj *o;
    st = new_str(v, SLEAPC_PK_STR, d, k, &o);
    return st ? st : push(v, o);
}

/* UNICODE: raw-unicode-escape text; \uXXXX and \UXXXXXXXX are the only
 * escapes and every other byte is a Latin-1 code point. */
static sleapc_status push_text_unicode(vm *v)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = take_line(v, &s, &n);
    if (st)
        return st;
    uint8_t *d = arena_alloc(v->pk, 2 * n + 1);
    if (!d)
        return nomem();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int digits = 0;
        if (s[i] == '\\' && i + 1 < n)
            digits = s[i + 1] == 'u' ? 4 : s[i + 1] == 'U' ? 8 : 0;
        if (digits && n - i - 2 >= (size_t)digits) {
            uint32_t cp = 0;
            int ok = 1;
            for (int j = 0; j < digits; j++) {
                int h = hexval(s[i + 2 + (size_t)j]);
                ok &= h >= 0;
                cp = cp * 16 + (uint32_t)(h < 0 ? 0 : h);
            }
            if (!ok || cp > 0x10ffff)
                return bad(v, "malformed \\u escape in UNICODE text");
            k += put_utf8(d + k, cp);
            i += 1 + (size_t)digits;
        } else {
            k += put_utf8(d + k, s[i]);
        }
    }
    sleapc_pk_obj *o;
    st = new_str(v, SLEAPC_PK_STR, d, k, &o);
    return st ? st : push(v, o);
}

/* ---- globals and calls ---- */

static sleapc_pk_dtype storage_dtype(const char *name)
{
    static const struct {
        const char *name;
        sleapc_pk_dtype dtype;
    } table[] = {
        {"FloatStorage", SLEAPC_PK_DTYPE_F32}, {"DoubleStorage", SLEAPC_PK_DTYPE_F64},
        {"HalfStorage", SLEAPC_PK_DTYPE_F16},  {"BFloat16Storage", SLEAPC_PK_DTYPE_BF16},
        {"LongStorage", SLEAPC_PK_DTYPE_I64},  {"IntStorage", SLEAPC_PK_DTYPE_I32},
        {"ShortStorage", SLEAPC_PK_DTYPE_I16}, {"CharStorage", SLEAPC_PK_DTYPE_I8},
        {"ByteStorage", SLEAPC_PK_DTYPE_U8},   {"BoolStorage", SLEAPC_PK_DTYPE_BOOL},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0)
            return table[i].dtype;
    return SLEAPC_PK_DTYPE_UNKNOWN;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Classify a global; Python 2 spells the builtins module "__builtin__". */
static void classify_global(sleapc_pk_obj *g)
{
    const char *m = g->u.global.module, *name = g->u.global.name;
    int builtins = strcmp(m, "builtins") == 0 || strcmp(m, "__builtin__") == 0;
    g->u.global.fn = FN_OPAQUE;
    if ((strcmp(m, "collections") == 0 && strcmp(name, "OrderedDict") == 0) ||
        (builtins && strcmp(name, "dict") == 0))
        g->u.global.fn = FN_DICT;
    else if (strcmp(m, "collections") == 0 && strcmp(name, "defaultdict") == 0)
        g->u.global.fn = FN_DEFAULTDICT;
    else if (builtins && strcmp(name, "list") == 0)
        g->u.global.fn = FN_LIST;
    else if (strcmp(m, "torch._utils") == 0 && strcmp(name, "_rebuild_tensor_v2") == 0)
        g->u.global.fn = FN_REBUILD_V2;
    else if (strcmp(m, "torch._utils") == 0 && strcmp(name, "_rebuild_tensor") == 0)
        g->u.global.fn = FN_REBUILD_V1;
    else if (strcmp(m, "torch._utils") == 0 && (strcmp(name, "_rebuild_parameter") == 0 ||
                                                  strcmp(name, "_rebuild_parameter_with_state") ==
                                                      0))
        g->u.global.fn = FN_REBUILD_PARAM;
    else if (strcmp(m, "torch._tensor") == 0 && strcmp(name, "_rebuild_from_type_v2") == 0)
        g->u.global.fn = FN_FROM_TYPE_V2;
    else if (strcmp(m, "torch") == 0 && ends_with(name, "Storage")) {
        g->u.global.fn = FN_STORAGE_TYPE;
        g->u.global.dtype = storage_dtype(name);
    }
}

static sleapc_status make_global(vm *v, const uint8_t *mod, size_t n_mod, const uint8_t *name,
                                 size_t n_name, sleapc_pk_obj **out)
{
    *out = NULL;
    if (memchr(mod, '\0', n_mod) || memchr(name, '\0', n_name))
        return bad(v, "NUL byte in a global name");
    char *m = arena_alloc(v->pk, n_mod + 1);
    char *nm = arena_alloc(v->pk, n_name + 1);
    sleapc_pk_obj *g = new_obj(v, SLEAPC_PK_GLOBAL);
    if (!m || !nm || !g)
        return nomem();
    memcpy(m, mod, n_mod);
    m[n_mod] = '\0';
    memcpy(nm, name, n_name);
    nm[n_name] = '\0';
    g->u.global.module = m;
    g->u.global.name = nm;
    classify_global(g);
    *out = g;
    return SLEAPC_OK;
}

static sleapc_status opaque(vm *v, const sleapc_pk_obj *type, sleapc_pk_obj **out)
{
    sleapc_pk_obj *o = new_obj(v, SLEAPC_PK_OPAQUE);
    if (!o)
        return nomem();
    o->u.opaque.type = type && type->kind == SLEAPC_PK_GLOBAL ? type : NULL;
    *out = o;
    return SLEAPC_OK;
}

static int is_int_seq(const sleapc_pk_obj *o)
{
    if (o->kind != SLEAPC_PK_TUPLE && o->kind != SLEAPC_PK_LIST)
        return 0;
    for (size_t i = 0; i < o->u.seq.n; i++)
        if (o->u.seq.items[i]->kind != SLEAPC_PK_INT)
            return 0;
    return 1;
}

/* _rebuild_tensor(storage, storage_offset, size, stride) and _v2, which adds
 * requires_grad, backward_hooks and optional metadata (all ignored here). */
static sleapc_status rebuild_tensor(vm *v, const sleapc_pk_obj *args, int is_v2,
                                    sleapc_pk_obj **out)
{
    *out = NULL;
    const char *fn = is_v2 ? "_rebuild_tensor_v2" : "_rebuild_tensor";
    size_t n = args->u.seq.n;
    if (is_v2 ? (n < 6 || n > 7) : n != 4)
        return bad(v, "%s called with %zu arguments", fn, n);
    sleapc_pk_obj *const *a = args->u.seq.items;
    if (a[0]->kind != SLEAPC_PK_STORAGE)
        return bad(v, "%s: argument 1 is not a storage", fn);
    if (a[1]->kind != SLEAPC_PK_INT || a[1]->u.i < 0)
        return bad(v, "%s: storage offset is not a non-negative int", fn);
    if (!is_int_seq(a[2]) || !is_int_seq(a[3]) || a[2]->u.seq.n != a[3]->u.seq.n)
        return bad(v, "%s: size and stride are not int tuples of equal length", fn);
    sleapc_pk_obj *t = new_obj(v, SLEAPC_PK_TENSOR);
    if (!t)
        return nomem();
    t->u.tensor.storage = a[0];
    t->u.tensor.offset = a[1]->u.i;
    t->u.tensor.size = a[2];
    t->u.tensor.stride = a[3];
    *out = t;
    return SLEAPC_OK;
}

/* REDUCE: callable(*args). Known torch and container callables are modelled;
 * anything else yields an opaque object. */
static sleapc_status call(vm *v, const sleapc_pk_obj *fn, const sleapc_pk_obj *args, int depth,
                          sleapc_pk_obj **out)
{
    *out = NULL;
    if (depth > MAX_CALL_DEPTH)
        return refuse(v, "calls nested deeper than %d", MAX_CALL_DEPTH);
    if (fn->kind == SLEAPC_PK_OPAQUE)
        return opaque(v, fn->u.opaque.type, out);
    if (fn->kind != SLEAPC_PK_GLOBAL)
        return bad(v, "call of a non-callable object");
    if (args->kind != SLEAPC_PK_TUPLE)
        return bad(v, "call arguments are not a tuple");
    size_t n = args->u.seq.n;
    switch (fn->u.global.fn) {
    case FN_DICT:
    case FN_LIST:
        /* Only the empty form: copying an argument could repeat a memoized
         * container's cost for every call. */
        if (n == 0) {
            *out = new_obj(v, fn->u.global.fn == FN_DICT ? SLEAPC_PK_DICT : SLEAPC_PK_LIST);
            return *out ? SLEAPC_OK : nomem();
        }
        break;
    case FN_DEFAULTDICT:
        *out = new_obj(v, SLEAPC_PK_DICT);
        return *out ? SLEAPC_OK : nomem();
    case FN_REBUILD_V2:
    case FN_REBUILD_V1:
        return rebuild_tensor(v, args, fn->u.global.fn == FN_REBUILD_V2, out);
    case FN_REBUILD_PARAM:
        /* torch.nn.Parameter(data): for reading weights it is the tensor. */
        if (n < 1)
            return bad(v, "_rebuild_parameter called without arguments");
        *out = args->u.seq.items[0];
        return SLEAPC_OK;
    case FN_FROM_TYPE_V2:
        /* Tensor subclasses: func(*args) builds the plain tensor first. */
        if (n != 4)
            return bad(v, "_rebuild_from_type_v2 called with %zu arguments", n);
        return call(v, args->u.seq.items[0], args->u.seq.items[2], depth + 1, out);
    default:
        break;
    }
    return opaque(v, fn, out);
}

/* NEWOBJ / NEWOBJ_EX / INST / OBJ: cls.__new__(cls, ...), state set later. */
static sleapc_status instantiate(vm *v, const sleapc_pk_obj *cls, sleapc_pk_obj **out)
{
    *out = NULL;
    if (cls->kind == SLEAPC_PK_OPAQUE)
        return opaque(v, cls->u.opaque.type, out);
    if (cls->kind != SLEAPC_PK_GLOBAL)
        return bad(v, "instantiation of a non-class object");
    int fn = cls->u.global.fn;
    if (fn == FN_DICT || fn == FN_DEFAULTDICT || fn == FN_LIST) {
        *out = new_obj(v, fn == FN_LIST ? SLEAPC_PK_LIST : SLEAPC_PK_DICT);
        return *out ? SLEAPC_OK : nomem();
    }
    return opaque(v, cls, out);
}

/* torch.serialization's persistent_load for the zip format: the id is
 * ('storage', storage_type, key, location, numel). */
static sleapc_status persistent_load(vm *v, const sleapc_pk_obj *pid, sleapc_pk_obj **out)
{
    *out = NULL;
    if (pid->kind != SLEAPC_PK_TUPLE || pid->u.seq.n != 5 || !str_eq(pid->u.seq.items[0],
                                                                     "storage"))
        return bad(v, "persistent id is not a ('storage', type, key, location, numel) tuple");
    sleapc_pk_obj *const *a = pid->u.seq.items;
    if (a[1]->kind != SLEAPC_PK_GLOBAL)
        return bad(v, "storage type is not a class");
    if (a[2]->kind != SLEAPC_PK_STR)
        return bad(v, "storage key is not a string");
    if (a[4]->kind != SLEAPC_PK_INT || a[4]->u.i < 0)
        return bad(v, "storage size is not a non-negative int");
    sleapc_pk_obj *s = new_obj(v, SLEAPC_PK_STORAGE);
    if (!s)
        return nomem();
    s->u.storage.type = a[1];
    s->u.storage.dtype =
        a[1]->u.global.fn == FN_STORAGE_TYPE ? a[1]->u.global.dtype : SLEAPC_PK_DTYPE_UNKNOWN;
    s->u.storage.key = a[2];
    s->u.storage.numel = a[4]->u.i;
    *out = s;
    return SLEAPC_OK;
}

/* ---- container mutation ---- */

/* Add items to the object below them (APPEND(S), SETITEM(S), ADDITEMS).
 * Opaque targets (custom classes) swallow the items, as their own
 * append/__setitem__ would have done something we do not model. */
static sleapc_status add_items(vm *v, sleapc_pk_obj *target, sleapc_pk_kind want,
                               sleapc_pk_obj *const *items, size_t k)
{
    if (target->kind == SLEAPC_PK_OPAQUE)
        return SLEAPC_OK;
    if (target->kind != want)
        return bad(v, "cannot add items to this object");
    return seq_extend(v, target, items, k);
}

static sleapc_status op_items_since_mark(vm *v, sleapc_pk_kind want)
{
    size_t start;
    sleapc_status st = pop_mark(v, &start);
    if (st)
        return st;
    size_t k = v->sp - start;
    if (want == SLEAPC_PK_DICT && k % 2)
        return bad(v, "odd number of items for SETITEMS");
    sleapc_pk_obj *target;
    v->sp = start;
    st = peek(v, &target);
    if (st)
        return st;
    /* The items are still in stack memory above sp; nothing was overwritten. */
    return add_items(v, target, want, v->stack + start, k);
}

static sleapc_status op_single_item(vm *v, sleapc_pk_kind want, int n_items)
{
    sleapc_pk_obj *items[2], *target;
    sleapc_status st = SLEAPC_OK;
    for (int i = n_items - 1; i >= 0 && !st; i--)
        st = pop(v, &items[i]);
    if (!st)
        st = peek(v, &target);
    return st ? st : add_items(v, target, want, items, (size_t)n_items);
}

/* ---- the opcodes ---- */

static sleapc_status op_pop_push_call(vm *v, int kind)
{
    sleapc_pk_obj *a, *b, *c = NULL, *r = NULL;
    sleapc_status st = pop(v, &a);
    if (!st)
        st = pop(v, &b);
    if (!st && kind == 2)
        st = pop(v, &c);
    if (st)
        return st;
    switch (kind) {
    case 0: /* REDUCE: b = callable, a = args */
        st = call(v, b, a, 0, &r);
        break;
    case 1: /* NEWOBJ: b = cls, a = args */
        st = instantiate(v, b, &r);
        break;
    default: /* NEWOBJ_EX: c = cls, b = args, a = kwargs */
        st = instantiate(v, c, &r);
        break;
    }
    return st ? st : push(v, r);
}

static sleapc_status op_tuple_n(vm *v, size_t k)
{
    sleapc_pk_obj *items[3];
    for (size_t i = k; i-- > 0;) {
        sleapc_status st = pop(v, &items[i]);
        if (st)
            return st;
    }
    sleapc_pk_obj *t = new_obj(v, SLEAPC_PK_TUPLE);
    if (!t)
        return nomem();
    sleapc_status st = seq_extend(v, t, items, k);
    return st ? st : push(v, t);
}

static sleapc_status op_collect(vm *v, sleapc_pk_kind kind)
{
    sleapc_pk_obj *o;
    sleapc_status st = collect(v, kind, &o);
    return st ? st : push(v, o);
}

/* INST (module/name text + args since mark) and OBJ (class + args since mark). */
static sleapc_status op_inst(vm *v, int has_text_class)
{
    sleapc_pk_obj *cls = NULL, *r;
    sleapc_status st = SLEAPC_OK;
    if (has_text_class) {
        const uint8_t *m, *nm;
        size_t n_m, n_nm;
        st = take_line(v, &m, &n_m);
        if (!st)
            st = take_line(v, &nm, &n_nm);
        if (!st)
            st = make_global(v, m, n_m, nm, n_nm, &cls);
        if (st)
            return st;
    }
    size_t start;
    st = pop_mark(v, &start);
    if (st)
        return st;
    if (!has_text_class) {
        if (v->sp == start)
            return bad(v, "OBJ without a class");
        cls = v->stack[start];
    }
    v->sp = start;
    st = instantiate(v, cls, &r);
    return st ? st : push(v, r);
}

static sleapc_status op_global(vm *v, int from_stack)
{
    sleapc_pk_obj *g;
    sleapc_status st;
    if (from_stack) {
        sleapc_pk_obj *mod, *name;
        st = pop(v, &name);
        if (!st)
            st = pop(v, &mod);
        if (st)
            return st;
        if (mod->kind != SLEAPC_PK_STR || name->kind != SLEAPC_PK_STR)
            return bad(v, "STACK_GLOBAL requires two strings");
        st = make_global(v, (const uint8_t *)mod->u.str.p, mod->u.str.n,
                         (const uint8_t *)name->u.str.p, name->u.str.n, &g);
    } else {
        const uint8_t *m, *nm;
        size_t n_m, n_nm;
        st = take_line(v, &m, &n_m);
        if (!st)
            st = take_line(v, &nm, &n_nm);
        if (!st)
            st = make_global(v, m, n_m, nm, n_nm, &g);
    }
    return st ? st : push(v, g);
}

static sleapc_status op_persid(vm *v, int binary)
{
    sleapc_pk_obj *pid, *s;
    sleapc_status st;
    if (binary) {
        st = pop(v, &pid);
    } else {
        const uint8_t *p;
        size_t n;
        st = take_line(v, &p, &n);
        if (!st)
            st = new_str(v, SLEAPC_PK_STR, p, n, &pid);
    }
    if (!st)
        st = persistent_load(v, pid, &s);
    return st ? st : push(v, s);
}

static sleapc_status op_memo(vm *v, int k, int text, int get)
{
    uint64_t idx;
    sleapc_status st = text ? take_text_index(v, &idx) : take_uint(v, k, &idx);
    if (st)
        return st;
    return get ? memo_get(v, idx) : memo_put(v, idx);
}

static sleapc_status op_pop(vm *v)
{
    /* POP on an empty frame discards the mark itself (pickle.py load_pop). */
    if (v->sp == fence(v) && v->n_marks) {
        v->n_marks--;
        return SLEAPC_OK;
    }
    sleapc_pk_obj *o;
    return pop(v, &o);
}

static sleapc_status op_proto(vm *v)
{
    uint64_t proto;
    sleapc_status st = take_uint(v, 1, &proto);
    if (st)
        return st;
    if (proto > HIGHEST_PROTOCOL)
        return bad(v, "unsupported pickle protocol %llu", (unsigned long long)proto);
    return SLEAPC_OK;
}

static sleapc_status op_frame(vm *v)
{
    /* Frames only group opcodes for buffered reading; the data is inline. */
    uint64_t len;
    sleapc_status st = take_uint(v, 8, &len);
    if (!st && len > v->n - v->pos)
        st = bad(v, "pickle truncated (frame of %llu bytes, %zu left)", (unsigned long long)len,
                 v->n - v->pos);
    return st;
}

static sleapc_status op_long(vm *v, int k)
{
    uint64_t len;
    sleapc_status st = take_uint(v, k, &len);
    if (st)
        return st;
    if (k == 4 && (len & 0x80000000u))
        return bad(v, "LONG4 with a negative byte count");
    const uint8_t *p;
    st = take(v, (size_t)len, &p);
    return st ? st : push_long_bytes(v, p, (size_t)len);
}

static sleapc_status op_ext(vm *v, int k)
{
    /* copyreg's extension registry is empty unless a program fills it; keep
     * the code's object as an opaque class. */
    uint64_t code;
    sleapc_status st = take_uint(v, k, &code);
    if (st)
        return st;
    sleapc_pk_obj *g;
    st = make_global(v, (const uint8_t *)"copyreg", 7, (const uint8_t *)"extension", 9, &g);
    return st ? st : push(v, g);
}

static sleapc_status op_build(vm *v)
{
    /* Attribute state (OrderedDict._metadata, plain objects' __dict__) does
     * not matter for reading tensors. */
    sleapc_pk_obj *state, *obj;
    sleapc_status st = pop(v, &state);
    return st ? st : peek(v, &obj);
}

static sleapc_status step(vm *v, uint8_t op, int *done)
{
    sleapc_pk_obj *o;
    sleapc_status st;
    uint64_t x;
    size_t mark;
    switch (op) {
    case 0x80: return op_proto(v);
    case 0x95: return op_frame(v);
    case '(': return push_mark(v);
    case '.':
        st = pop(v, &o);
        if (!st) {
            v->pk->root = o;
            *done = 1;
        }
        return st;
    case '0': return op_pop(v);
    case '1': /* POP_MARK discards the mark and everything above it */
        st = pop_mark(v, &mark);
        v->sp = mark;
        return st;
    case '2': st = peek(v, &o); return st ? st : push(v, o);
    case 'N': return push(v, v->none);
    case 0x88: return push(v, v->yes);
    case 0x89: return push(v, v->no);
    case 'I': return push_text_int(v, 1);
    case 'L': return push_text_int(v, 0);
    case 'J':
        st = take_uint(v, 4, &x);
        return st ? st : push_int(v, (int64_t)(int32_t)(uint32_t)x);
    case 'K': st = take_uint(v, 1, &x); return st ? st : push_int(v, (int64_t)x);
    case 'M': st = take_uint(v, 2, &x); return st ? st : push_int(v, (int64_t)x);
    case 0x8a: return op_long(v, 1);
    case 0x8b: return op_long(v, 4);
    case 'F': return push_text_float(v);
    case 'G': return push_binfloat(v);
    case 'S': return push_text_string(v);
    case 'T': return push_counted(v, 4, 1, SLEAPC_PK_STR);
    case 'U': return push_counted(v, 1, 0, SLEAPC_PK_STR);
    case 'V': return push_text_unicode(v);
    case 'X': return push_counted(v, 4, 0, SLEAPC_PK_STR);
    case 0x8c: return push_counted(v, 1, 0, SLEAPC_PK_STR);
    case 0x8d: return push_counted(v, 8, 0, SLEAPC_PK_STR);
    case 'B': return push_counted(v, 4, 0, SLEAPC_PK_BYTES);
    case 'C': return push_counted(v, 1, 0, SLEAPC_PK_BYTES);
    case 0x8e: return push_counted(v, 8, 0, SLEAPC_PK_BYTES);
    case 0x96: return push_counted(v, 8, 0, SLEAPC_PK_BYTES);
    case ')': return push(v, new_obj(v, SLEAPC_PK_TUPLE));
    case ']': return push(v, new_obj(v, SLEAPC_PK_LIST));
    case '}': return push(v, new_obj(v, SLEAPC_PK_DICT));
    case 0x8f: return push(v, new_obj(v, SLEAPC_PK_SET));
    case 't': return op_collect(v, SLEAPC_PK_TUPLE);
    case 'l': return op_collect(v, SLEAPC_PK_LIST);
    case 'd': return op_collect(v, SLEAPC_PK_DICT);
    case 0x91: return op_collect(v, SLEAPC_PK_SET);
    case 0x85: return op_tuple_n(v, 1);
    case 0x86: return op_tuple_n(v, 2);
    case 0x87: return op_tuple_n(v, 3);
    case 'a': return op_single_item(v, SLEAPC_PK_LIST, 1);
    case 'e': return op_items_since_mark(v, SLEAPC_PK_LIST);
    case 's': return op_single_item(v, SLEAPC_PK_DICT, 2);
    case 'u': return op_items_since_mark(v, SLEAPC_PK_DICT);
    case 0x90: return op_items_since_mark(v, SLEAPC_PK_SET);
    case 'g': return op_memo(v, 0, 1, 1);
    case 'h': return op_memo(v, 1, 0, 1);
    case 'j': return op_memo(v, 4, 0, 1);
    case 'p': return op_memo(v, 0, 1, 0);
    case 'q': return op_memo(v, 1, 0, 0);
    case 'r': return op_memo(v, 4, 0, 0);
    case 0x94: return memo_put(v, v->memo_count);
    case 'c': return op_global(v, 0);
    case 0x93: return op_global(v, 1);
    case 'R': return op_pop_push_call(v, 0);
    case 0x81: return op_pop_push_call(v, 1);
    case 0x92: return op_pop_push_call(v, 2);
    case 'i': return op_inst(v, 1);
    case 'o': return op_inst(v, 0);
    case 'b': return op_build(v);
    case 'P': return op_persid(v, 0);
    case 'Q': return op_persid(v, 1);
    case 0x82: return op_ext(v, 1);
    case 0x83: return op_ext(v, 2);
    case 0x84: return op_ext(v, 4);
    case 0x97:
        return refuse(v, "out-of-band pickle buffers (NEXT_BUFFER) are not supported");
    case 0x98: return peek(v, &o); /* READONLY_BUFFER: a no-op on our bytes */
    default:
        break;
    }
    return bad(v, "unknown pickle opcode 0x%02x", op);
}

void sleapc__pickle_destroy(sleapc_pickle *pk)
{
    if (!pk)
        return;
    arena_block *b = pk->blocks;
    while (b) {
        arena_block *next = b->next;
        sleapc__free(b);
        b = next;
    }
    sleapc__free(pk);
}

sleapc_status sleapc__pickle_load(const uint8_t *data, size_t n, sleapc_pickle **out)
{
    *out = NULL;
    vm v;
    memset(&v, 0, sizeof v);
    v.p = data;
    v.n = n;
    /* Pickle writers number memo slots 0, 1, 2 ...; each store costs at least
     * two bytes, so no honest index reaches the input size. */
    v.memo_limit = n + 256;
    v.pk = sleapc__calloc(1, sizeof *v.pk);
    if (!v.pk)
        return nomem();
    sleapc_status st = SLEAPC_OK;
    v.none = new_obj(&v, SLEAPC_PK_NONE);
    v.yes = new_obj(&v, SLEAPC_PK_BOOL);
    v.no = new_obj(&v, SLEAPC_PK_BOOL);
    if (!v.none || !v.yes || !v.no)
        st = nomem();
    else
        v.yes->u.i = 1;
    int done = 0;
    while (!st && !done) {
        v.op_pos = v.pos;
        if (v.pos >= v.n) {
            st = bad(&v, "pickle ends without STOP");
            break;
        }
        st = step(&v, v.p[v.pos++], &done);
    }
    sleapc__free(v.stack);
    sleapc__free(v.marks);
    sleapc__free(v.memo);
    if (st) {
        sleapc__pickle_destroy(v.pk);
        return st;
    }
    *out = v.pk;
    return SLEAPC_OK;
}

const sleapc_pk_obj *sleapc__pickle_root(const sleapc_pickle *pk)
{
    return pk->root;
}

const sleapc_pk_obj *sleapc__pk_dict_get(const sleapc_pk_obj *dict, const char *key)
{
    if (!dict || dict->kind != SLEAPC_PK_DICT)
        return NULL;
    for (size_t i = dict->u.seq.n; i >= 2; i -= 2) {
        const sleapc_pk_obj *k = dict->u.seq.items[i - 2];
        if (k->kind == SLEAPC_PK_STR && str_eq(k, key))
            return dict->u.seq.items[i - 1];
    }
    return NULL;
}
