/* Internals shared by the pickle machine's three files: the machine state
 * and its stack, memo, arena and argument readers (ckpt_pickle.c), the values
 * and stand-ins the opcodes build (ckpt_pickle_values.c) and the opcode
 * dispatch (ckpt_pickle_ops.c). Nothing outside src/io/ckpt/ckpt_pickle*.c
 * includes this. */
#ifndef SLEAPC_IO_CKPT_PICKLE_IMPL_H
#define SLEAPC_IO_CKPT_PICKLE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "io/ckpt/ckpt_pickle.h"

typedef struct arena_block arena_block;

struct sleapc_pickle {
    arena_block *blocks;
    sleapc_pk_obj *root;
};

typedef struct sleapc_pkvm {
    sleapc_pickle *pk;
    const uint8_t *p;
    size_t n;
    size_t pos;
    size_t op_pos; /* offset of the opcode being run, for messages */
    sleapc_pk_obj **stack;
    size_t sp, stack_cap;
    size_t *marks; /* stack heights at each MARK */
    size_t n_marks, marks_cap;
    sleapc_pk_obj **memo;
    size_t memo_cap, memo_count, memo_limit;
    sleapc_pk_obj *none, *yes, *no;
} sleapc_pkvm;

/* ---- ckpt_pickle.c: errors (each returns its status), arena, stack, memo ---- */

sleapc_status sleapc__pkvm_bad(const sleapc_pkvm *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
sleapc_status sleapc__pkvm_refuse(const sleapc_pkvm *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
sleapc_status sleapc__pkvm_nomem(void);

void *sleapc__pkvm_alloc(sleapc_pickle *pk, size_t n);
sleapc_pk_obj *sleapc__pkvm_new_obj(sleapc_pkvm *v, sleapc_pk_kind kind);
sleapc_status sleapc__pkvm_seq_extend(sleapc_pkvm *v, sleapc_pk_obj *s, sleapc_pk_obj *const *items,
                                      size_t k);
sleapc_status sleapc__pkvm_new_str(sleapc_pkvm *v, sleapc_pk_kind kind, const uint8_t *p, size_t n,
                                   sleapc_pk_obj **out);
int sleapc__pkvm_str_eq(const sleapc_pk_obj *o, const char *s);

size_t sleapc__pkvm_fence(const sleapc_pkvm *v);
sleapc_status sleapc__pkvm_push(sleapc_pkvm *v, sleapc_pk_obj *o);
sleapc_status sleapc__pkvm_pop(sleapc_pkvm *v, sleapc_pk_obj **out);
sleapc_status sleapc__pkvm_peek(sleapc_pkvm *v, sleapc_pk_obj **out);
sleapc_status sleapc__pkvm_push_mark(sleapc_pkvm *v);
sleapc_status sleapc__pkvm_pop_mark(sleapc_pkvm *v, size_t *start);
sleapc_status sleapc__pkvm_collect(sleapc_pkvm *v, sleapc_pk_kind kind, sleapc_pk_obj **out);
sleapc_status sleapc__pkvm_memo_put(sleapc_pkvm *v, uint64_t idx);
sleapc_status sleapc__pkvm_memo_get(sleapc_pkvm *v, uint64_t idx);

sleapc_status sleapc__pkvm_take(sleapc_pkvm *v, size_t k, const uint8_t **out);
sleapc_status sleapc__pkvm_take_uint(sleapc_pkvm *v, int k, uint64_t *out);
sleapc_status sleapc__pkvm_take_line(sleapc_pkvm *v, const uint8_t **s, size_t *len);

/* ---- ckpt_pickle_values.c: scalars, strings, globals, calls, storages ---- */

sleapc_status sleapc__pkvm_push_int(sleapc_pkvm *v, int64_t x);
sleapc_status sleapc__pkvm_push_long_bytes(sleapc_pkvm *v, const uint8_t *p, size_t n);
sleapc_status sleapc__pkvm_push_text_int(sleapc_pkvm *v, int allow_bool);
sleapc_status sleapc__pkvm_take_text_index(sleapc_pkvm *v, uint64_t *idx);
sleapc_status sleapc__pkvm_push_text_float(sleapc_pkvm *v);
sleapc_status sleapc__pkvm_push_binfloat(sleapc_pkvm *v);
sleapc_status sleapc__pkvm_push_counted(sleapc_pkvm *v, int k, int is_signed, sleapc_pk_kind kind);
sleapc_status sleapc__pkvm_push_text_string(sleapc_pkvm *v);
sleapc_status sleapc__pkvm_push_text_unicode(sleapc_pkvm *v);

sleapc_status sleapc__pkvm_make_global(sleapc_pkvm *v, const uint8_t *mod, size_t n_mod,
                                       const uint8_t *name, size_t n_name, sleapc_pk_obj **out);
sleapc_status sleapc__pkvm_call(sleapc_pkvm *v, const sleapc_pk_obj *fn, const sleapc_pk_obj *args,
                                int depth, sleapc_pk_obj **out);
sleapc_status sleapc__pkvm_instantiate(sleapc_pkvm *v, const sleapc_pk_obj *cls,
                                       sleapc_pk_obj **out);
sleapc_status sleapc__pkvm_persistent_load(sleapc_pkvm *v, const sleapc_pk_obj *pid,
                                           sleapc_pk_obj **out);

/* ---- ckpt_pickle_ops.c ---- */

/* Run one opcode; *done is set by STOP. */
sleapc_status sleapc__pkvm_step(sleapc_pkvm *v, uint8_t op, int *done);

#endif
