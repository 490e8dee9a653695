/* What the pickle opcodes build: numbers and strings decoded from their
 * arguments (binary and protocol-0 text), and the stand-ins for globals,
 * calls, instantiations and torch storages. Calls are modelled, never run:
 * known containers and torch's tensor-rebuild functions get their result,
 * anything else an opaque object. */
#include <stdlib.h>
#include <string.h>

#include "core/suffix.h"
#include "io/ckpt/ckpt_pickle_impl.h"

#define MAX_TEXT_NUMBER 128u /* longest INT/LONG/FLOAT/GET/PUT text argument */
#define MAX_CALL_DEPTH 8     /* _rebuild_from_type_v2 may wrap another call */

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

/* Decimal integer text as pickle protocol 0 writes it ("-12", "12L"). *big is
 * set when the value does not fit in 64 bits. */
static sleapc_status parse_int_text(sleapc_pkvm *v, const uint8_t *s, size_t n, int64_t *out,
                                    int *big)
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
        return sleapc__pkvm_bad(v, "malformed integer text");
    uint64_t mag = 0;
    *big = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return sleapc__pkvm_bad(v, "malformed integer text");
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

sleapc_status sleapc__pkvm_push_int(sleapc_pkvm *v, int64_t x)
{
    sleapc_pk_obj *o = sleapc__pkvm_new_obj(v, SLEAPC_PK_INT);
    if (o)
        o->u.i = x;
    return sleapc__pkvm_push(v, o);
}

/* LONG1/LONG4: little-endian two's complement of any width. */
sleapc_status sleapc__pkvm_push_long_bytes(sleapc_pkvm *v, const uint8_t *p, size_t n)
{
    if (n > 8) {
        /* Wider than 64 bits unless it is a sign extension of a 64-bit value. */
        uint8_t ext = (p[n - 1] & 0x80) ? 0xff : 0x00;
        for (size_t i = 8; i < n; i++)
            if (p[i] != ext || ((p[7] & 0x80) != (ext & 0x80)))
                return sleapc__pkvm_push(v, sleapc__pkvm_new_obj(v, SLEAPC_PK_BIGINT));
        n = 8;
    }
    uint64_t x = 0;
    for (size_t i = n; i-- > 0;)
        x = (x << 8) | p[i];
    if (n > 0 && n < 8 && (p[n - 1] & 0x80))
        x |= UINT64_MAX << (8 * n);
    return sleapc__pkvm_push_int(v, (int64_t)x);
}

sleapc_status sleapc__pkvm_push_text_int(sleapc_pkvm *v, int allow_bool)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = sleapc__pkvm_take_line(v, &s, &n);
    if (st)
        return st;
    /* Protocol 0 spells True and False as "I01" and "I00". */
    if (allow_bool && n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1'))
        return sleapc__pkvm_push(v, s[1] == '1' ? v->yes : v->no);
    int64_t x;
    int big;
    st = parse_int_text(v, s, n, &x, &big);
    if (st)
        return st;
    return big ? sleapc__pkvm_push(v, sleapc__pkvm_new_obj(v, SLEAPC_PK_BIGINT))
               : sleapc__pkvm_push_int(v, x);
}

sleapc_status sleapc__pkvm_take_text_index(sleapc_pkvm *v, uint64_t *idx)
{
    *idx = 0;
    const uint8_t *s;
    size_t n;
    sleapc_status st = sleapc__pkvm_take_line(v, &s, &n);
    if (st)
        return st;
    int64_t x;
    int big;
    st = parse_int_text(v, s, n, &x, &big);
    if (st)
        return st;
    if (big || x < 0)
        return sleapc__pkvm_bad(v, "memo index out of range");
    *idx = (uint64_t)x;
    return SLEAPC_OK;
}

sleapc_status sleapc__pkvm_push_text_float(sleapc_pkvm *v)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = sleapc__pkvm_take_line(v, &s, &n);
    if (st)
        return st;
    char buf[MAX_TEXT_NUMBER + 1];
    if (n == 0 || n > MAX_TEXT_NUMBER)
        return sleapc__pkvm_bad(v, "malformed float text");
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double x = strtod(buf, &end);
    if (*end != '\0')
        return sleapc__pkvm_bad(v, "malformed float text");
    sleapc_pk_obj *o = sleapc__pkvm_new_obj(v, SLEAPC_PK_FLOAT);
    if (o)
        o->u.f = x;
    return sleapc__pkvm_push(v, o);
}

sleapc_status sleapc__pkvm_push_binfloat(sleapc_pkvm *v)
{
    const uint8_t *p;
    sleapc_status st = sleapc__pkvm_take(v, 8, &p);
    if (st)
        return st;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) /* big-endian, unlike every other number here */
        bits = (bits << 8) | p[i];
    sleapc_pk_obj *o = sleapc__pkvm_new_obj(v, SLEAPC_PK_FLOAT);
    if (o)
        memcpy(&o->u.f, &bits, sizeof bits);
    return sleapc__pkvm_push(v, o);
}

/* A length-prefixed byte string: k-byte length, then the bytes. */
sleapc_status sleapc__pkvm_push_counted(sleapc_pkvm *v, int k, int is_signed, sleapc_pk_kind kind)
{
    uint64_t len;
    sleapc_status st = sleapc__pkvm_take_uint(v, k, &len);
    if (st)
        return st;
    if (is_signed && (len & 0x80000000u))
        return sleapc__pkvm_bad(v, "negative string length");
    if (len > v->n - v->pos)
        return sleapc__pkvm_bad(v, "pickle truncated (string of %llu bytes, %zu left)",
                                (unsigned long long)len, v->n - v->pos);
    const uint8_t *p = v->p + v->pos;
    v->pos += (size_t)len;
    sleapc_pk_obj *o;
    st = sleapc__pkvm_new_str(v, kind, p, (size_t)len, &o);
    return st ? st : sleapc__pkvm_push(v, o);
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
sleapc_status sleapc__pkvm_push_text_string(sleapc_pkvm *v)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = sleapc__pkvm_take_line(v, &s, &n);
    if (st)
        return st;
    if (n < 2 || s[0] != s[n - 1] || (s[0] != '\'' && s[0] != '"'))
        return sleapc__pkvm_bad(v, "the STRING opcode argument must be quoted");
    s++;
    n -= 2;
    uint8_t *d = sleapc__pkvm_alloc(v->pk, n + 1);
    if (!d)
        return sleapc__pkvm_nomem();
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
    st = sleapc__pkvm_new_str(v, SLEAPC_PK_STR, d, k, &o);
    return st ? st : sleapc__pkvm_push(v, o);
}

/* UNICODE: raw-unicode-escape text; \uXXXX and \UXXXXXXXX are the only
 * escapes and every other byte is a Latin-1 code point. */
sleapc_status sleapc__pkvm_push_text_unicode(sleapc_pkvm *v)
{
    const uint8_t *s;
    size_t n;
    sleapc_status st = sleapc__pkvm_take_line(v, &s, &n);
    if (st)
        return st;
    uint8_t *d = sleapc__pkvm_alloc(v->pk, 2 * n + 1);
    if (!d)
        return sleapc__pkvm_nomem();
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
                return sleapc__pkvm_bad(v, "malformed \\u escape in UNICODE text");
            k += put_utf8(d + k, cp);
            i += 1 + (size_t)digits;
        } else {
            k += put_utf8(d + k, s[i]);
        }
    }
    sleapc_pk_obj *o;
    st = sleapc__pkvm_new_str(v, SLEAPC_PK_STR, d, k, &o);
    return st ? st : sleapc__pkvm_push(v, o);
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
    else if (strcmp(m, "torch") == 0 && sleapc__ends_with(name, "Storage")) {
        g->u.global.fn = FN_STORAGE_TYPE;
        g->u.global.dtype = storage_dtype(name);
    }
}

sleapc_status sleapc__pkvm_make_global(sleapc_pkvm *v, const uint8_t *mod, size_t n_mod,
                                       const uint8_t *name, size_t n_name, sleapc_pk_obj **out)
{
    *out = NULL;
    if (memchr(mod, '\0', n_mod) || memchr(name, '\0', n_name))
        return sleapc__pkvm_bad(v, "NUL byte in a global name");
    char *m = sleapc__pkvm_alloc(v->pk, n_mod + 1);
    char *nm = sleapc__pkvm_alloc(v->pk, n_name + 1);
    sleapc_pk_obj *g = sleapc__pkvm_new_obj(v, SLEAPC_PK_GLOBAL);
    if (!m || !nm || !g)
        return sleapc__pkvm_nomem();
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

static sleapc_status opaque(sleapc_pkvm *v, const sleapc_pk_obj *type, sleapc_pk_obj **out)
{
    sleapc_pk_obj *o = sleapc__pkvm_new_obj(v, SLEAPC_PK_OPAQUE);
    if (!o)
        return sleapc__pkvm_nomem();
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
static sleapc_status rebuild_tensor(sleapc_pkvm *v, const sleapc_pk_obj *args, int is_v2,
                                    sleapc_pk_obj **out)
{
    *out = NULL;
    const char *fn = is_v2 ? "_rebuild_tensor_v2" : "_rebuild_tensor";
    size_t n = args->u.seq.n;
    if (is_v2 ? (n < 6 || n > 7) : n != 4)
        return sleapc__pkvm_bad(v, "%s called with %zu arguments", fn, n);
    sleapc_pk_obj *const *a = args->u.seq.items;
    if (a[0]->kind != SLEAPC_PK_STORAGE)
        return sleapc__pkvm_bad(v, "%s: argument 1 is not a storage", fn);
    if (a[1]->kind != SLEAPC_PK_INT || a[1]->u.i < 0)
        return sleapc__pkvm_bad(v, "%s: storage offset is not a non-negative int", fn);
    if (!is_int_seq(a[2]) || !is_int_seq(a[3]) || a[2]->u.seq.n != a[3]->u.seq.n)
        return sleapc__pkvm_bad(v, "%s: size and stride are not int tuples of equal length", fn);
    sleapc_pk_obj *t = sleapc__pkvm_new_obj(v, SLEAPC_PK_TENSOR);
    if (!t)
        return sleapc__pkvm_nomem();
    t->u.tensor.storage = a[0];
    t->u.tensor.offset = a[1]->u.i;
    t->u.tensor.size = a[2];
    t->u.tensor.stride = a[3];
    *out = t;
    return SLEAPC_OK;
}

/* REDUCE: callable(*args). Known torch and container callables are modelled;
 * anything else yields an opaque object. */
sleapc_status sleapc__pkvm_call(sleapc_pkvm *v, const sleapc_pk_obj *fn, const sleapc_pk_obj *args,
                                int depth, sleapc_pk_obj **out)
{
    *out = NULL;
    if (depth > MAX_CALL_DEPTH)
        return sleapc__pkvm_refuse(v, "calls nested deeper than %d", MAX_CALL_DEPTH);
    if (fn->kind == SLEAPC_PK_OPAQUE)
        return opaque(v, fn->u.opaque.type, out);
    if (fn->kind != SLEAPC_PK_GLOBAL)
        return sleapc__pkvm_bad(v, "call of a non-callable object");
    if (args->kind != SLEAPC_PK_TUPLE)
        return sleapc__pkvm_bad(v, "call arguments are not a tuple");
    size_t n = args->u.seq.n;
    switch (fn->u.global.fn) {
    case FN_DICT:
    case FN_LIST:
        /* Only the empty form: copying an argument could repeat a memoized
         * container's cost for every call. */
        if (n == 0) {
            *out = sleapc__pkvm_new_obj(v, fn->u.global.fn == FN_DICT ? SLEAPC_PK_DICT
                                                                      : SLEAPC_PK_LIST);
            return *out ? SLEAPC_OK : sleapc__pkvm_nomem();
        }
        break;
    case FN_DEFAULTDICT:
        *out = sleapc__pkvm_new_obj(v, SLEAPC_PK_DICT);
        return *out ? SLEAPC_OK : sleapc__pkvm_nomem();
    case FN_REBUILD_V2:
    case FN_REBUILD_V1:
        return rebuild_tensor(v, args, fn->u.global.fn == FN_REBUILD_V2, out);
    case FN_REBUILD_PARAM:
        /* torch.nn.Parameter(data): for reading weights it is the tensor. */
        if (n < 1)
            return sleapc__pkvm_bad(v, "_rebuild_parameter called without arguments");
        *out = args->u.seq.items[0];
        return SLEAPC_OK;
    case FN_FROM_TYPE_V2:
        /* Tensor subclasses: func(*args) builds the plain tensor first. */
        if (n != 4)
            return sleapc__pkvm_bad(v, "_rebuild_from_type_v2 called with %zu arguments", n);
        return sleapc__pkvm_call(v, args->u.seq.items[0], args->u.seq.items[2], depth + 1, out);
    default:
        break;
    }
    return opaque(v, fn, out);
}

/* NEWOBJ / NEWOBJ_EX / INST / OBJ: cls.__new__(cls, ...), state set later. */
sleapc_status sleapc__pkvm_instantiate(sleapc_pkvm *v, const sleapc_pk_obj *cls,
                                       sleapc_pk_obj **out)
{
    *out = NULL;
    if (cls->kind == SLEAPC_PK_OPAQUE)
        return opaque(v, cls->u.opaque.type, out);
    if (cls->kind != SLEAPC_PK_GLOBAL)
        return sleapc__pkvm_bad(v, "instantiation of a non-class object");
    int fn = cls->u.global.fn;
    if (fn == FN_DICT || fn == FN_DEFAULTDICT || fn == FN_LIST) {
        *out = sleapc__pkvm_new_obj(v, fn == FN_LIST ? SLEAPC_PK_LIST : SLEAPC_PK_DICT);
        return *out ? SLEAPC_OK : sleapc__pkvm_nomem();
    }
    return opaque(v, cls, out);
}

/* torch.serialization's persistent_load for the zip format: the id is
 * ('storage', storage_type, key, location, numel). */
sleapc_status sleapc__pkvm_persistent_load(sleapc_pkvm *v, const sleapc_pk_obj *pid,
                                           sleapc_pk_obj **out)
{
    *out = NULL;
    if (pid->kind != SLEAPC_PK_TUPLE || pid->u.seq.n != 5 ||
        !sleapc__pkvm_str_eq(pid->u.seq.items[0], "storage"))
        return sleapc__pkvm_bad(
            v, "persistent id is not a ('storage', type, key, location, numel) tuple");
    sleapc_pk_obj *const *a = pid->u.seq.items;
    if (a[1]->kind != SLEAPC_PK_GLOBAL)
        return sleapc__pkvm_bad(v, "storage type is not a class");
    if (a[2]->kind != SLEAPC_PK_STR)
        return sleapc__pkvm_bad(v, "storage key is not a string");
    if (a[4]->kind != SLEAPC_PK_INT || a[4]->u.i < 0)
        return sleapc__pkvm_bad(v, "storage size is not a non-negative int");
    sleapc_pk_obj *s = sleapc__pkvm_new_obj(v, SLEAPC_PK_STORAGE);
    if (!s)
        return sleapc__pkvm_nomem();
    s->u.storage.type = a[1];
    s->u.storage.dtype =
        a[1]->u.global.fn == FN_STORAGE_TYPE ? a[1]->u.global.dtype : SLEAPC_PK_DTYPE_UNKNOWN;
    s->u.storage.key = a[2];
    s->u.storage.numel = a[4]->u.i;
    *out = s;
    return SLEAPC_OK;
}
