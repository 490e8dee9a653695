/* The pickle opcodes: container building and mutation, memo and stack
 * opcodes, and the dispatch from opcode byte to handler (sleapc__pkvm_step). */
#include <string.h>

#include "io/ckpt/ckpt_pickle_impl.h"

#define HIGHEST_PROTOCOL 5

/* ---- container mutation ---- */

/* Add items to the object below them (APPEND(S), SETITEM(S), ADDITEMS).
 * Opaque targets (custom classes) swallow the items, as their own
 * append/__setitem__ would have done something we do not model. */
static sleapc_status add_items(sleapc_pkvm *v, sleapc_pk_obj *target, sleapc_pk_kind want,
                               sleapc_pk_obj *const *items, size_t k)
{
    if (target->kind == SLEAPC_PK_OPAQUE)
        return SLEAPC_OK;
    if (target->kind != want)
        return sleapc__pkvm_bad(v, "cannot add items to this object");
    return sleapc__pkvm_seq_extend(v, target, items, k);
}

static sleapc_status op_items_since_mark(sleapc_pkvm *v, sleapc_pk_kind want)
{
    size_t start;
    sleapc_status st = sleapc__pkvm_pop_mark(v, &start);
    if (st)
        return st;
    size_t k = v->sp - start;
    if (want == SLEAPC_PK_DICT && k % 2)
        return sleapc__pkvm_bad(v, "odd number of items for SETITEMS");
    sleapc_pk_obj *target;
    v->sp = start;
    st = sleapc__pkvm_peek(v, &target);
    if (st)
        return st;
    /* The items are still in stack memory above sp; nothing was overwritten. */
    return add_items(v, target, want, v->stack + start, k);
}

static sleapc_status op_single_item(sleapc_pkvm *v, sleapc_pk_kind want, int n_items)
{
    sleapc_pk_obj *items[2], *target;
    sleapc_status st = SLEAPC_OK;
    for (int i = n_items - 1; i >= 0 && !st; i--)
        st = sleapc__pkvm_pop(v, &items[i]);
    if (!st)
        st = sleapc__pkvm_peek(v, &target);
    return st ? st : add_items(v, target, want, items, (size_t)n_items);
}

/* ---- the opcodes ---- */

static sleapc_status op_pop_push_call(sleapc_pkvm *v, int kind)
{
    sleapc_pk_obj *a, *b, *c = NULL, *r = NULL;
    sleapc_status st = sleapc__pkvm_pop(v, &a);
    if (!st)
        st = sleapc__pkvm_pop(v, &b);
    if (!st && kind == 2)
        st = sleapc__pkvm_pop(v, &c);
    if (st)
        return st;
    switch (kind) {
    case 0: /* REDUCE: b = callable, a = args */
        st = sleapc__pkvm_call(v, b, a, 0, &r);
        break;
    case 1: /* NEWOBJ: b = cls, a = args */
        st = sleapc__pkvm_instantiate(v, b, &r);
        break;
    default: /* NEWOBJ_EX: c = cls, b = args, a = kwargs */
        st = sleapc__pkvm_instantiate(v, c, &r);
        break;
    }
    return st ? st : sleapc__pkvm_push(v, r);
}

static sleapc_status op_tuple_n(sleapc_pkvm *v, size_t k)
{
    sleapc_pk_obj *items[3];
    for (size_t i = k; i-- > 0;) {
        sleapc_status st = sleapc__pkvm_pop(v, &items[i]);
        if (st)
            return st;
    }
    sleapc_pk_obj *t = sleapc__pkvm_new_obj(v, SLEAPC_PK_TUPLE);
    if (!t)
        return sleapc__pkvm_nomem();
    sleapc_status st = sleapc__pkvm_seq_extend(v, t, items, k);
    return st ? st : sleapc__pkvm_push(v, t);
}

static sleapc_status op_collect(sleapc_pkvm *v, sleapc_pk_kind kind)
{
    sleapc_pk_obj *o;
    sleapc_status st = sleapc__pkvm_collect(v, kind, &o);
    return st ? st : sleapc__pkvm_push(v, o);
}

/* INST (module/name text + args since mark) and OBJ (class + args since mark). */
static sleapc_status op_inst(sleapc_pkvm *v, int has_text_class)
{
    sleapc_pk_obj *cls = NULL, *r;
    sleapc_status st = SLEAPC_OK;
    if (has_text_class) {
        const uint8_t *m, *nm;
        size_t n_m, n_nm;
        st = sleapc__pkvm_take_line(v, &m, &n_m);
        if (!st)
            st = sleapc__pkvm_take_line(v, &nm, &n_nm);
        if (!st)
            st = sleapc__pkvm_make_global(v, m, n_m, nm, n_nm, &cls);
        if (st)
            return st;
    }
    size_t start;
    st = sleapc__pkvm_pop_mark(v, &start);
    if (st)
        return st;
    if (!has_text_class) {
        if (v->sp == start)
            return sleapc__pkvm_bad(v, "OBJ without a class");
        cls = v->stack[start];
    }
    v->sp = start;
    st = sleapc__pkvm_instantiate(v, cls, &r);
    return st ? st : sleapc__pkvm_push(v, r);
}

static sleapc_status op_global(sleapc_pkvm *v, int from_stack)
{
    sleapc_pk_obj *g;
    sleapc_status st;
    if (from_stack) {
        sleapc_pk_obj *mod, *name;
        st = sleapc__pkvm_pop(v, &name);
        if (!st)
            st = sleapc__pkvm_pop(v, &mod);
        if (st)
            return st;
        if (mod->kind != SLEAPC_PK_STR || name->kind != SLEAPC_PK_STR)
            return sleapc__pkvm_bad(v, "STACK_GLOBAL requires two strings");
        st = sleapc__pkvm_make_global(v, (const uint8_t *)mod->u.str.p, mod->u.str.n,
                                      (const uint8_t *)name->u.str.p, name->u.str.n, &g);
    } else {
        const uint8_t *m, *nm;
        size_t n_m, n_nm;
        st = sleapc__pkvm_take_line(v, &m, &n_m);
        if (!st)
            st = sleapc__pkvm_take_line(v, &nm, &n_nm);
        if (!st)
            st = sleapc__pkvm_make_global(v, m, n_m, nm, n_nm, &g);
    }
    return st ? st : sleapc__pkvm_push(v, g);
}

static sleapc_status op_persid(sleapc_pkvm *v, int binary)
{
    sleapc_pk_obj *pid, *s;
    sleapc_status st;
    if (binary) {
        st = sleapc__pkvm_pop(v, &pid);
    } else {
        const uint8_t *p;
        size_t n;
        st = sleapc__pkvm_take_line(v, &p, &n);
        if (!st)
            st = sleapc__pkvm_new_str(v, SLEAPC_PK_STR, p, n, &pid);
    }
    if (!st)
        st = sleapc__pkvm_persistent_load(v, pid, &s);
    return st ? st : sleapc__pkvm_push(v, s);
}

static sleapc_status op_memo(sleapc_pkvm *v, int k, int text, int get)
{
    uint64_t idx;
    sleapc_status st =
        text ? sleapc__pkvm_take_text_index(v, &idx) : sleapc__pkvm_take_uint(v, k, &idx);
    if (st)
        return st;
    return get ? sleapc__pkvm_memo_get(v, idx) : sleapc__pkvm_memo_put(v, idx);
}

static sleapc_status op_pop(sleapc_pkvm *v)
{
    /* POP on an empty frame discards the mark itself (pickle.py load_pop). */
    if (v->sp == sleapc__pkvm_fence(v) && v->n_marks) {
        v->n_marks--;
        return SLEAPC_OK;
    }
    sleapc_pk_obj *o;
    return sleapc__pkvm_pop(v, &o);
}

static sleapc_status op_proto(sleapc_pkvm *v)
{
    uint64_t proto;
    sleapc_status st = sleapc__pkvm_take_uint(v, 1, &proto);
    if (st)
        return st;
    if (proto > HIGHEST_PROTOCOL)
        return sleapc__pkvm_bad(v, "unsupported pickle protocol %llu", (unsigned long long)proto);
    return SLEAPC_OK;
}

static sleapc_status op_frame(sleapc_pkvm *v)
{
    /* Frames only group opcodes for buffered reading; the data is inline. */
    uint64_t len;
    sleapc_status st = sleapc__pkvm_take_uint(v, 8, &len);
    if (!st && len > v->n - v->pos)
        st = sleapc__pkvm_bad(v, "pickle truncated (frame of %llu bytes, %zu left)",
                              (unsigned long long)len, v->n - v->pos);
    return st;
}

static sleapc_status op_long(sleapc_pkvm *v, int k)
{
    uint64_t len;
    sleapc_status st = sleapc__pkvm_take_uint(v, k, &len);
    if (st)
        return st;
    if (k == 4 && (len & 0x80000000u))
        return sleapc__pkvm_bad(v, "LONG4 with a negative byte count");
    const uint8_t *p;
    st = sleapc__pkvm_take(v, (size_t)len, &p);
    return st ? st : sleapc__pkvm_push_long_bytes(v, p, (size_t)len);
}

static sleapc_status op_ext(sleapc_pkvm *v, int k)
{
    /* copyreg's extension registry is empty unless a program fills it; keep
     * the code's object as an opaque class. */
    uint64_t code;
    sleapc_status st = sleapc__pkvm_take_uint(v, k, &code);
    if (st)
        return st;
    sleapc_pk_obj *g;
    st = sleapc__pkvm_make_global(v, (const uint8_t *)"copyreg", 7, (const uint8_t *)"extension", 9,
                                  &g);
    return st ? st : sleapc__pkvm_push(v, g);
}

static sleapc_status op_build(sleapc_pkvm *v)
{
    /* Attribute state (OrderedDict._metadata, plain objects' __dict__) does
     * not matter for reading tensors. */
    sleapc_pk_obj *state, *obj;
    sleapc_status st = sleapc__pkvm_pop(v, &state);
    return st ? st : sleapc__pkvm_peek(v, &obj);
}

sleapc_status sleapc__pkvm_step(sleapc_pkvm *v, uint8_t op, int *done)
{
    sleapc_pk_obj *o;
    sleapc_status st;
    uint64_t x;
    size_t mark;
    switch (op) {
    case 0x80: return op_proto(v);
    case 0x95: return op_frame(v);
    case '(': return sleapc__pkvm_push_mark(v);
    case '.':
        st = sleapc__pkvm_pop(v, &o);
        if (!st) {
            v->pk->root = o;
            *done = 1;
        }
        return st;
    case '0': return op_pop(v);
    case '1': /* POP_MARK discards the mark and everything above it */
        st = sleapc__pkvm_pop_mark(v, &mark);
        v->sp = mark;
        return st;
    case '2': st = sleapc__pkvm_peek(v, &o); return st ? st : sleapc__pkvm_push(v, o);
    case 'N': return sleapc__pkvm_push(v, v->none);
    case 0x88: return sleapc__pkvm_push(v, v->yes);
    case 0x89: return sleapc__pkvm_push(v, v->no);
    case 'I': return sleapc__pkvm_push_text_int(v, 1);
    case 'L': return sleapc__pkvm_push_text_int(v, 0);
    case 'J':
        st = sleapc__pkvm_take_uint(v, 4, &x);
        return st ? st : sleapc__pkvm_push_int(v, (int64_t)(int32_t)(uint32_t)x);
    case 'K':
        st = sleapc__pkvm_take_uint(v, 1, &x);
        return st ? st : sleapc__pkvm_push_int(v, (int64_t)x);
    case 'M':
        st = sleapc__pkvm_take_uint(v, 2, &x);
        return st ? st : sleapc__pkvm_push_int(v, (int64_t)x);
    case 0x8a: return op_long(v, 1);
    case 0x8b: return op_long(v, 4);
    case 'F': return sleapc__pkvm_push_text_float(v);
    case 'G': return sleapc__pkvm_push_binfloat(v);
    case 'S': return sleapc__pkvm_push_text_string(v);
    case 'T': return sleapc__pkvm_push_counted(v, 4, 1, SLEAPC_PK_STR);
    case 'U': return sleapc__pkvm_push_counted(v, 1, 0, SLEAPC_PK_STR);
    case 'V': return sleapc__pkvm_push_text_unicode(v);
    case 'X': return sleapc__pkvm_push_counted(v, 4, 0, SLEAPC_PK_STR);
    case 0x8c: return sleapc__pkvm_push_counted(v, 1, 0, SLEAPC_PK_STR);
    case 0x8d: return sleapc__pkvm_push_counted(v, 8, 0, SLEAPC_PK_STR);
    case 'B': return sleapc__pkvm_push_counted(v, 4, 0, SLEAPC_PK_BYTES);
    case 'C': return sleapc__pkvm_push_counted(v, 1, 0, SLEAPC_PK_BYTES);
    case 0x8e: return sleapc__pkvm_push_counted(v, 8, 0, SLEAPC_PK_BYTES);
    case 0x96: return sleapc__pkvm_push_counted(v, 8, 0, SLEAPC_PK_BYTES);
    case ')': return sleapc__pkvm_push(v, sleapc__pkvm_new_obj(v, SLEAPC_PK_TUPLE));
    case ']': return sleapc__pkvm_push(v, sleapc__pkvm_new_obj(v, SLEAPC_PK_LIST));
    case '}': return sleapc__pkvm_push(v, sleapc__pkvm_new_obj(v, SLEAPC_PK_DICT));
    case 0x8f: return sleapc__pkvm_push(v, sleapc__pkvm_new_obj(v, SLEAPC_PK_SET));
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
    case 0x94: return sleapc__pkvm_memo_put(v, v->memo_count);
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
        return sleapc__pkvm_refuse(v, "out-of-band pickle buffers (NEXT_BUFFER) are not supported");
    case 0x98: return sleapc__pkvm_peek(v, &o); /* READONLY_BUFFER: a no-op on our bytes */
    default:
        break;
    }
    return sleapc__pkvm_bad(v, "unknown pickle opcode 0x%02x", op);
}
