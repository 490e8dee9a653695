/* Pickle virtual machine (the opcode semantics of CPython's Lib/pickle.py
 * _Unpickler, with torch.serialization's persistent_load for storages).
 *
 * Safety model: the input is hostile. Every read is bounds-checked, the stack
 * may not be popped below the innermost MARK (CPython's "fence"), memo indices
 * are bounded by the input size, and nothing copies a container that the memo
 * could hand out again, so the work and memory stay linear in the input size.
 * Objects live in an arena freed in one go; they are never freed one by one,
 * which is why shared and cyclic references need no bookkeeping.
 *
 * This file holds the machine itself: errors, the arena, the stack, marks and
 * memo, the argument readers and the load loop. The opcodes are in
 * ckpt_pickle_ops.c and the objects they build in ckpt_pickle_values.c. */
#include "io/ckpt/ckpt_pickle.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ckpt/ckpt_pickle_impl.h"

#define ARENA_BLOCK_BYTES 65536u
#define MAX_STACK_ITEMS (1u << 24)
#define MAX_MARKS (1u << 24)

struct arena_block {
    struct arena_block *next;
    size_t used;
    size_t cap;
    max_align_t mem[];
};

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
static sleapc_status fail_at(const sleapc_pkvm *v, sleapc_status st, const char *fmt, va_list ap)
{
    char what[256];
    vsnprintf(what, sizeof what, fmt, ap);
    sleapc__fail(st, "%s at offset %zu", what, v->op_pos);
    return st;
}

sleapc_status sleapc__pkvm_bad(const sleapc_pkvm *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_at(v, SLEAPC_ERR_FORMAT, fmt, ap);
    va_end(ap);
    return SLEAPC_ERR_FORMAT;
}

sleapc_status sleapc__pkvm_refuse(const sleapc_pkvm *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_at(v, SLEAPC_ERR_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return SLEAPC_ERR_UNSUPPORTED;
}

sleapc_status sleapc__pkvm_nomem(void)
{
    sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    return SLEAPC_ERR_NOMEM;
}

/* ---- arena ---- */

void *sleapc__pkvm_alloc(sleapc_pickle *pk, size_t n)
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

sleapc_pk_obj *sleapc__pkvm_new_obj(sleapc_pkvm *v, sleapc_pk_kind kind)
{
    sleapc_pk_obj *o = sleapc__pkvm_alloc(v->pk, sizeof *o);
    if (o) {
        memset(o, 0, sizeof *o);
        o->kind = kind;
    }
    return o;
}

/* Append k items to a sequence; grows by doubling inside the arena (the old
 * array is abandoned, which at most doubles the space used). */
sleapc_status sleapc__pkvm_seq_extend(sleapc_pkvm *v, sleapc_pk_obj *s, sleapc_pk_obj *const *items,
                                      size_t k)
{
    if (k > s->u.seq.cap - s->u.seq.n) {
        size_t need = s->u.seq.n + k;
        size_t cap = s->u.seq.cap ? s->u.seq.cap : 4;
        while (cap < need) {
            if (cap > SIZE_MAX / 2 / sizeof *items)
                return sleapc__pkvm_nomem();
            cap *= 2;
        }
        sleapc_pk_obj **arr = sleapc__pkvm_alloc(v->pk, cap * sizeof *arr);
        if (!arr)
            return sleapc__pkvm_nomem();
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

sleapc_status sleapc__pkvm_new_str(sleapc_pkvm *v, sleapc_pk_kind kind, const uint8_t *p, size_t n,
                                   sleapc_pk_obj **out)
{
    *out = NULL;
    sleapc_pk_obj *o = sleapc__pkvm_new_obj(v, kind);
    if (!o)
        return sleapc__pkvm_nomem();
    o->u.str.p = (const char *)p;
    o->u.str.n = n;
    *out = o;
    return SLEAPC_OK;
}

int sleapc__pkvm_str_eq(const sleapc_pk_obj *o, const char *s)
{
    size_t n = strlen(s);
    return (o->kind == SLEAPC_PK_STR || o->kind == SLEAPC_PK_BYTES) && o->u.str.n == n &&
           memcmp(o->u.str.p, s, n) == 0;
}

/* ---- stack, marks, memo ---- */

size_t sleapc__pkvm_fence(const sleapc_pkvm *v)
{
    return v->n_marks ? v->marks[v->n_marks - 1] : 0;
}

sleapc_status sleapc__pkvm_push(sleapc_pkvm *v, sleapc_pk_obj *o)
{
    if (!o)
        return sleapc__pkvm_nomem();
    if (v->sp == v->stack_cap) {
        if (v->stack_cap >= MAX_STACK_ITEMS)
            return sleapc__pkvm_refuse(v, "pickle stack deeper than %u items", MAX_STACK_ITEMS);
        size_t cap = v->stack_cap ? v->stack_cap * 2 : 256;
        sleapc_pk_obj **s = sleapc__realloc(v->stack, cap * sizeof *s);
        if (!s)
            return sleapc__pkvm_nomem();
        v->stack = s;
        v->stack_cap = cap;
    }
    v->stack[v->sp++] = o;
    return SLEAPC_OK;
}

sleapc_status sleapc__pkvm_pop(sleapc_pkvm *v, sleapc_pk_obj **out)
{
    *out = NULL;
    if (v->sp <= sleapc__pkvm_fence(v))
        return sleapc__pkvm_bad(v, "pickle stack underflow");
    *out = v->stack[--v->sp];
    return SLEAPC_OK;
}

sleapc_status sleapc__pkvm_peek(sleapc_pkvm *v, sleapc_pk_obj **out)
{
    *out = NULL;
    if (v->sp <= sleapc__pkvm_fence(v))
        return sleapc__pkvm_bad(v, "pickle stack underflow");
    *out = v->stack[v->sp - 1];
    return SLEAPC_OK;
}

sleapc_status sleapc__pkvm_push_mark(sleapc_pkvm *v)
{
    if (v->n_marks == v->marks_cap) {
        if (v->marks_cap >= MAX_MARKS)
            return sleapc__pkvm_refuse(v, "pickle nests more than %u marks", MAX_MARKS);
        size_t cap = v->marks_cap ? v->marks_cap * 2 : 64;
        size_t *m = sleapc__realloc(v->marks, cap * sizeof *m);
        if (!m)
            return sleapc__pkvm_nomem();
        v->marks = m;
        v->marks_cap = cap;
    }
    v->marks[v->n_marks++] = v->sp;
    return SLEAPC_OK;
}

/* Remove the innermost mark; the items above it are stack[*start .. sp). */
sleapc_status sleapc__pkvm_pop_mark(sleapc_pkvm *v, size_t *start)
{
    *start = v->sp;
    if (!v->n_marks)
        return sleapc__pkvm_bad(v, "no MARK on the pickle stack");
    *start = v->marks[--v->n_marks];
    return SLEAPC_OK;
}

/* Items since the mark become a new sequence of the given kind. */
sleapc_status sleapc__pkvm_collect(sleapc_pkvm *v, sleapc_pk_kind kind, sleapc_pk_obj **out)
{
    *out = NULL;
    size_t start;
    sleapc_status st = sleapc__pkvm_pop_mark(v, &start);
    if (st)
        return st;
    sleapc_pk_obj *o = sleapc__pkvm_new_obj(v, kind);
    if (!o)
        return sleapc__pkvm_nomem();
    if (kind == SLEAPC_PK_DICT && (v->sp - start) % 2)
        return sleapc__pkvm_bad(v, "odd number of items for a dict");
    size_t k = v->sp - start;
    /* The stack array is still NULL when nothing was ever pushed. */
    st = sleapc__pkvm_seq_extend(v, o, k ? v->stack + start : NULL, k);
    v->sp = start;
    *out = o;
    return st;
}

sleapc_status sleapc__pkvm_memo_put(sleapc_pkvm *v, uint64_t idx)
{
    sleapc_pk_obj *o;
    sleapc_status st = sleapc__pkvm_peek(v, &o);
    if (st)
        return st;
    if (idx >= v->memo_limit)
        return sleapc__pkvm_bad(v, "memo index %llu is out of range", (unsigned long long)idx);
    if (idx >= v->memo_cap) {
        size_t cap = v->memo_cap ? v->memo_cap : 256;
        while (cap <= idx)
            cap *= 2;
        sleapc_pk_obj **m = sleapc__realloc(v->memo, cap * sizeof *m);
        if (!m)
            return sleapc__pkvm_nomem();
        memset(m + v->memo_cap, 0, (cap - v->memo_cap) * sizeof *m);
        v->memo = m;
        v->memo_cap = cap;
    }
    if (!v->memo[idx])
        v->memo_count++;
    v->memo[idx] = o;
    return SLEAPC_OK;
}

sleapc_status sleapc__pkvm_memo_get(sleapc_pkvm *v, uint64_t idx)
{
    if (idx >= v->memo_cap || !v->memo[idx])
        return sleapc__pkvm_bad(v, "memo index %llu was never stored", (unsigned long long)idx);
    return sleapc__pkvm_push(v, v->memo[idx]);
}

/* ---- reading arguments ---- */

sleapc_status sleapc__pkvm_take(sleapc_pkvm *v, size_t k, const uint8_t **out)
{
    *out = NULL;
    if (v->n - v->pos < k)
        return sleapc__pkvm_bad(v, "pickle truncated (argument needs %zu bytes, %zu left)", k,
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

sleapc_status sleapc__pkvm_take_uint(sleapc_pkvm *v, int k, uint64_t *out)
{
    *out = 0;
    const uint8_t *p;
    sleapc_status st = sleapc__pkvm_take(v, (size_t)k, &p);
    if (!st)
        *out = le(p, k);
    return st;
}

/* A newline-terminated text argument (protocol 0); the newline is dropped. */
sleapc_status sleapc__pkvm_take_line(sleapc_pkvm *v, const uint8_t **s, size_t *len)
{
    *s = NULL;
    *len = 0;
    const uint8_t *nl = memchr(v->p + v->pos, '\n', v->n - v->pos);
    if (!nl)
        return sleapc__pkvm_bad(v, "pickle truncated (text argument has no newline)");
    *s = v->p + v->pos;
    *len = (size_t)(nl - *s);
    v->pos += *len + 1;
    return SLEAPC_OK;
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
    sleapc_pkvm v;
    memset(&v, 0, sizeof v);
    v.p = data;
    v.n = n;
    /* Pickle writers number memo slots 0, 1, 2 ...; each store costs at least
     * two bytes, so no honest index reaches the input size. */
    v.memo_limit = n + 256;
    v.pk = sleapc__calloc(1, sizeof *v.pk);
    if (!v.pk)
        return sleapc__pkvm_nomem();
    sleapc_status st = SLEAPC_OK;
    v.none = sleapc__pkvm_new_obj(&v, SLEAPC_PK_NONE);
    v.yes = sleapc__pkvm_new_obj(&v, SLEAPC_PK_BOOL);
    v.no = sleapc__pkvm_new_obj(&v, SLEAPC_PK_BOOL);
    if (!v.none || !v.yes || !v.no)
        st = sleapc__pkvm_nomem();
    else
        v.yes->u.i = 1;
    int done = 0;
    while (!st && !done) {
        v.op_pos = v.pos;
        if (v.pos >= v.n) {
            st = sleapc__pkvm_bad(&v, "pickle ends without STOP");
            break;
        }
        st = sleapc__pkvm_step(&v, v.p[v.pos++], &done);
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
        if (k->kind == SLEAPC_PK_STR && sleapc__pkvm_str_eq(k, key))
            return dict->u.seq.items[i - 1];
    }
    return NULL;
}
