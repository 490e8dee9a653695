/* Checkpoint writer, pickle half: the bytes of data.pkl as pickle.py would
 * write Lightning's checkpoint dict under protocol 2 (the protocol torch.save
 * uses by default), with memoized globals and strings where pickle.py memoizes
 * them. Tensors are recorded as storage sources for ckpt_write.c to stream. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/ckpt/ckpt_write_impl.h"

#define PICKLE_BATCH 1000 /* pickle.py _BATCHSIZE: items per SETITEMS/APPENDS */
#define MEMO_UNSET UINT32_MAX
#define LIGHTNING_VERSION "2.5.1.post0"

static void put(sleapc_ckptw_pickle *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < n)
            cap *= 2;
        uint8_t *p = sleapc__realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void op(sleapc_ckptw_pickle *b, uint8_t code)
{
    put(b, &code, 1);
}

static void put_le(sleapc_ckptw_pickle *b, uint64_t x, int k)
{
    uint8_t tmp[8];
    for (int i = 0; i < k; i++)
        tmp[i] = (uint8_t)(x >> (8 * i));
    put(b, tmp, (size_t)k);
}

/* The smallest encoding, as pickle.py's save_long picks it. */
static void emit_int(sleapc_ckptw_pickle *b, int64_t x)
{
    if (x >= 0 && x <= 0xff) {
        op(b, 'K');
        put_le(b, (uint64_t)x, 1);
    } else if (x >= 0 && x <= 0xffff) {
        op(b, 'M');
        put_le(b, (uint64_t)x, 2);
    } else if (x >= INT32_MIN && x <= INT32_MAX) {
        op(b, 'J');
        put_le(b, (uint64_t)x, 4);
    } else {
        /* LONG1: minimal little-endian two's complement. */
        int k = 8;
        while (k > 1) {
            int64_t top = x >> (8 * (k - 1) - 1); /* the bits that would be dropped + sign */
            if (top != 0 && top != -1)
                break;
            k--;
        }
        op(b, 0x8a);
        put_le(b, (uint64_t)k, 1);
        put_le(b, (uint64_t)x, k);
    }
}

static void emit_float(sleapc_ckptw_pickle *b, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)(bits >> (56 - 8 * i));
    op(b, 'G');
    put(b, be, 8);
}

static void emit_str(sleapc_ckptw_pickle *b, const char *s)
{
    size_t n = strlen(s);
    op(b, 'X');
    put_le(b, (uint64_t)n, 4);
    put(b, s, n);
}

static void emit_bool(sleapc_ckptw_pickle *b, int x)
{
    op(b, x ? 0x88 : 0x89);
}

static void memo_store(sleapc_ckptw_pickle *b, uint32_t *slot)
{
    *slot = b->n_memo++;
    if (*slot <= 0xff) {
        op(b, 'q');
        put_le(b, *slot, 1);
    } else {
        op(b, 'r');
        put_le(b, *slot, 4);
    }
}

static void memo_fetch(sleapc_ckptw_pickle *b, uint32_t slot)
{
    if (slot <= 0xff) {
        op(b, 'h');
        put_le(b, slot, 1);
    } else {
        op(b, 'j');
        put_le(b, slot, 4);
    }
}

static void emit_global(sleapc_ckptw_pickle *b, uint32_t *slot, const char *module,
                        const char *name)
{
    if (slot && *slot != MEMO_UNSET) {
        memo_fetch(b, *slot);
        return;
    }
    op(b, 'c');
    put(b, module, strlen(module));
    op(b, '\n');
    put(b, name, strlen(name));
    op(b, '\n');
    if (slot)
        memo_store(b, slot);
}

static void emit_str_memo(sleapc_ckptw_pickle *b, uint32_t *slot, const char *s)
{
    if (*slot != MEMO_UNSET) {
        memo_fetch(b, *slot);
        return;
    }
    emit_str(b, s);
    memo_store(b, slot);
}

/* Tuples of up to three items use TUPLE1..3, longer ones MARK ... TUPLE. */
static void emit_int_tuple(sleapc_ckptw_pickle *b, int n, const int64_t *v)
{
    if (n == 0) {
        op(b, ')');
        return;
    }
    if (n > 3)
        op(b, '(');
    for (int i = 0; i < n; i++)
        emit_int(b, v[i]);
    op(b, n > 3 ? 't' : (uint8_t)(0x84 + n));
}

/* Containers: pickle.py writes one SETITEM/APPEND for a single item and
 * MARK ... SETITEMS/APPENDS for several, in batches of PICKLE_BATCH. Call
 * batch_open before item i and batch_close after it. */
static void batch_open(sleapc_ckptw_pickle *b, int i, int n)
{
    if (i % PICKLE_BATCH == 0 && n - i > 1)
        op(b, '(');
}

static void batch_close(sleapc_ckptw_pickle *b, int i, int n, uint8_t one, uint8_t many)
{
    if ((i + 1) % PICKLE_BATCH != 0 && i + 1 != n)
        return;
    int first = i - i % PICKLE_BATCH;
    op(b, n - first > 1 ? many : one);
}

/* A dict being written: dict_key closes the previous item (SETITEM or part
 * of a SETITEMS batch) before writing the next key; dict_end closes the last.
 * n, the number of items, must be known up front, as pickle.py batches. */
typedef struct dict_ctx {
    int i; /* index of the item being written; -1 before the first key */
    int n;
} dict_ctx;

static dict_ctx dict_begin(sleapc_ckptw_pickle *b, int n)
{
    op(b, '}');
    batch_open(b, 0, n);
    return (dict_ctx){-1, n};
}

static void dict_key(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key)
{
    if (d->i >= 0) {
        batch_close(b, d->i, d->n, 's', 'u');
        batch_open(b, d->i + 1, d->n);
    }
    d->i++;
    emit_str(b, key);
}

static void dict_end(sleapc_ckptw_pickle *b, dict_ctx *d)
{
    if (d->i >= 0)
        batch_close(b, d->i, d->n, 's', 'u');
}

static void kv_int(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key, int64_t x)
{
    dict_key(b, d, key);
    emit_int(b, x);
}

static void kv_float(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key, double x)
{
    dict_key(b, d, key);
    emit_float(b, x);
}

static void kv_bool(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key, int x)
{
    dict_key(b, d, key);
    emit_bool(b, x);
}

static void kv_none(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key)
{
    dict_key(b, d, key);
    op(b, 'N');
}

static void kv_str(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key, const char *value)
{
    dict_key(b, d, key);
    emit_str(b, value);
}

static int64_t shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

/* torch.Tensor.__reduce_ex__ under the zip serializer:
 * _rebuild_tensor_v2(persistent storage, 0, size, stride, False, OrderedDict()). */
static void emit_tensor(sleapc_ckptw_pickle *b, sleapc_ckptw_src_kind kind, int weight, int ndim,
                        const int64_t *shape)
{
    if (b->n_srcs == b->srcs_cap) {
        int cap = b->srcs_cap ? b->srcs_cap * 2 : 64;
        sleapc_ckptw_src *s = sleapc__realloc(b->srcs, (size_t)cap * sizeof *s);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->srcs = s;
        b->srcs_cap = cap;
    }
    int key = b->n_srcs++;
    b->srcs[key].kind = kind;
    b->srcs[key].weight = weight;

    /* Contiguous strides; torch treats zero-sized dims as 1 here. */
    int64_t stride[SLEAPC_WEIGHT_MAX_DIMS];
    int64_t acc = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        stride[i] = acc;
        acc *= shape[i] > 1 ? shape[i] : 1;
    }
    char key_text[16];
    snprintf(key_text, sizeof key_text, "%d", key);

    emit_global(b, &b->m_rebuild, "torch._utils", "_rebuild_tensor_v2");
    op(b, '(');
    op(b, '(');
    emit_str_memo(b, &b->m_storage, "storage");
    if (kind == SRC_STEP)
        emit_global(b, &b->m_long, "torch", "LongStorage");
    else
        emit_global(b, &b->m_float, "torch", "FloatStorage");
    emit_str(b, key_text);
    emit_str_memo(b, &b->m_cpu, "cpu");
    emit_int(b, shape_numel(ndim, shape));
    op(b, 't');
    op(b, 'Q');
    emit_int(b, 0);
    emit_int_tuple(b, ndim, shape);
    emit_int_tuple(b, ndim, stride);
    emit_bool(b, 0);
    emit_global(b, &b->m_odict, "collections", "OrderedDict");
    op(b, ')');
    op(b, 'R');
    op(b, 't');
    op(b, 'R');
}

static void emit_weight_tensor(sleapc_ckptw_pickle *b, sleapc_ckptw_src_kind kind, int i)
{
    const sleapc_weight *t = &b->w->items[i];
    emit_tensor(b, kind, i, t->ndim, t->shape);
}

static void emit_scalar_tensor(sleapc_ckptw_pickle *b, sleapc_ckptw_src_kind kind)
{
    emit_tensor(b, kind, -1, 0, NULL);
}

/* OrderedDict() via REDUCE, then its items; like the real files but without
 * the BUILD of the _metadata attribute, which loaders do not need. */
static void emit_state_dict(sleapc_ckptw_pickle *b)
{
    int n = b->w->n;
    emit_global(b, &b->m_odict, "collections", "OrderedDict");
    op(b, ')');
    op(b, 'R');
    for (int i = 0; i < n; i++) {
        batch_open(b, i, n);
        emit_str(b, b->w->items[i].name);
        emit_weight_tensor(b, SRC_WEIGHT, i);
        batch_close(b, i, n, 's', 'u');
    }
}

/* torch.optim.Adam.state_dict(): per-parameter moments and step counters,
 * and one param group. */
static void emit_optimizer_states(sleapc_ckptw_pickle *b)
{
    int n = b->w->n;
    op(b, ']');
    dict_ctx opt = dict_begin(b, 2);
    dict_key(b, &opt, "state");
    op(b, '}');
    for (int i = 0; i < n; i++) {
        batch_open(b, i, n);
        emit_int(b, i);
        dict_ctx st = dict_begin(b, 3);
        dict_key(b, &st, "step");
        emit_scalar_tensor(b, SRC_STEP);
        dict_key(b, &st, "exp_avg");
        emit_weight_tensor(b, SRC_EXP_AVG, i);
        dict_key(b, &st, "exp_avg_sq");
        emit_weight_tensor(b, SRC_EXP_AVG_SQ, i);
        dict_end(b, &st);
        batch_close(b, i, n, 's', 'u');
    }
    dict_key(b, &opt, "param_groups");
    op(b, ']');
    dict_ctx g = dict_begin(b, 11);
    kv_float(b, &g, "lr", 1e-4);
    dict_key(b, &g, "betas");
    emit_float(b, 0.9);
    emit_float(b, 0.999);
    op(b, 0x86);
    kv_float(b, &g, "eps", 1e-8);
    kv_float(b, &g, "weight_decay", 0.0);
    kv_bool(b, &g, "amsgrad", 0);
    kv_bool(b, &g, "maximize", 0);
    kv_bool(b, &g, "capturable", 0);
    kv_bool(b, &g, "differentiable", 0);
    kv_none(b, &g, "foreach");
    kv_none(b, &g, "fused");
    dict_key(b, &g, "params");
    op(b, ']');
    for (int i = 0; i < n; i++) {
        batch_open(b, i, n);
        emit_int(b, i);
        batch_close(b, i, n, 'a', 'e');
    }
    dict_end(b, &g);
    op(b, 'a'); /* the one param group into its list */
    dict_end(b, &opt);
    op(b, 'a'); /* the one optimizer into optimizer_states */
}

static void kv_float_list1(sleapc_ckptw_pickle *b, dict_ctx *d, const char *key, double x)
{
    dict_key(b, d, key);
    op(b, ']');
    emit_float(b, x);
    op(b, 'a');
}

/* torch.optim.lr_scheduler.StepLR.state_dict(). */
static void emit_lr_schedulers(sleapc_ckptw_pickle *b)
{
    op(b, ']');
    dict_ctx d = dict_begin(b, 8);
    kv_int(b, &d, "step_size", 10);
    kv_float(b, &d, "gamma", 0.5);
    kv_float_list1(b, &d, "base_lrs", 1e-4);
    kv_int(b, &d, "last_epoch", 0);
    kv_bool(b, &d, "verbose", 0);
    kv_int(b, &d, "_step_count", 1);
    kv_bool(b, &d, "_get_lr_called_within_step", 0);
    kv_float_list1(b, &d, "_last_lr", 1e-4);
    dict_end(b, &d);
    op(b, 'a');
}

/* Callback states, keyed by state_key as Lightning does. The EarlyStopping
 * entry carries a plain Python object (argparse.Namespace), which pickle
 * protocol 2 writes as NEWOBJ followed by BUILD with its __dict__. */
static void emit_callbacks(sleapc_ckptw_pickle *b)
{
    dict_ctx cb = dict_begin(b, 2);
    dict_key(b, &cb, "ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min', "
                     "'every_n_train_steps': 0, 'every_n_epochs': 1, "
                     "'train_time_interval': None}");
    dict_ctx mc = dict_begin(b, 5);
    kv_str(b, &mc, "monitor", "val_loss");
    dict_key(b, &mc, "best_model_score");
    emit_scalar_tensor(b, SRC_SCORE);
    kv_str(b, &mc, "best_model_path", "best.ckpt");
    kv_none(b, &mc, "dirpath");
    kv_float(b, &mc, "kth_value", INFINITY);
    dict_end(b, &mc);

    dict_key(b, &cb, "EarlyStopping{'monitor': 'val_loss', 'mode': 'min'}");
    dict_ctx es = dict_begin(b, 3);
    kv_int(b, &es, "wait_count", 0);
    dict_key(b, &es, "best_score");
    emit_scalar_tensor(b, SRC_SCORE);
    dict_key(b, &es, "args");
    emit_global(b, NULL, "argparse", "Namespace");
    op(b, ')');
    op(b, 0x81);
    dict_ctx ns = dict_begin(b, 3);
    kv_int(b, &ns, "patience", 5);
    kv_float(b, &ns, "min_delta", 1e-8);
    kv_bool(b, &ns, "check_finite", 1);
    dict_end(b, &ns);
    op(b, 'b');
    dict_end(b, &es);
    dict_end(b, &cb);
}

static void emit_loops(sleapc_ckptw_pickle *b)
{
    dict_ctx loops = dict_begin(b, 1);
    dict_key(b, &loops, "fit_loop");
    dict_ctx fit = dict_begin(b, 2);
    dict_key(b, &fit, "state_dict");
    op(b, '}');
    dict_key(b, &fit, "epoch_progress");
    dict_ctx prog = dict_begin(b, 2);
    for (int k = 0; k < 2; k++) {
        dict_key(b, &prog, k ? "current" : "total");
        dict_ctx c = dict_begin(b, 2);
        kv_int(b, &c, "ready", 1);
        kv_int(b, &c, "completed", 1);
        dict_end(b, &c);
    }
    dict_end(b, &prog);
    dict_end(b, &fit);
    dict_end(b, &loops);
}

/* Nested plain values, the shape of save_hyperparameters() output. */
static void emit_hyper_parameters(sleapc_ckptw_pickle *b)
{
    dict_ctx top = dict_begin(b, 1);
    dict_key(b, &top, "config");
    dict_ctx cfg = dict_begin(b, 3);
    kv_str(b, &cfg, "model_type", "single_instance");
    dict_key(b, &cfg, "backbone");
    dict_ctx bb = dict_begin(b, 4);
    kv_int(b, &bb, "filters", 16);
    kv_bool(b, &bb, "up_interpolate", 1);
    kv_none(b, &bb, "stem_stride");
    dict_key(b, &bb, "kernel_size");
    emit_int_tuple(b, 2, (const int64_t[]){3, 3});
    dict_end(b, &bb);
    dict_key(b, &cfg, "trainer");
    dict_ctx tr = dict_begin(b, 5);
    kv_float(b, &tr, "lr", 1e-4);
    dict_key(b, &tr, "devices");
    op(b, ']');
    op(b, '(');
    emit_int(b, 0);
    emit_int(b, 70000);
    emit_int(b, -7);
    op(b, 'e');
    kv_none(b, &tr, "seed");
    kv_int(b, &tr, "max_bytes", INT64_C(1) << 40);
    kv_float(b, &tr, "ratio", -0.25);
    dict_end(b, &tr);
    dict_end(b, &cfg);
    dict_end(b, &top);
}

static void emit_checkpoint(sleapc_ckptw_pickle *b, bool with_training_state)
{
    op(b, 0x80);
    op(b, 2);
    dict_ctx d = dict_begin(b, with_training_state ? 9 : 4);
    kv_int(b, &d, "epoch", 0);
    kv_int(b, &d, "global_step", 0);
    kv_str(b, &d, "pytorch-lightning_version", LIGHTNING_VERSION);
    dict_key(b, &d, "state_dict");
    emit_state_dict(b);
    if (with_training_state) {
        /* Lightning's order: state_dict, loops, callbacks, optimizer_states,
         * lr_schedulers, then the hyper-parameters. */
        dict_key(b, &d, "loops");
        emit_loops(b);
        dict_key(b, &d, "callbacks");
        emit_callbacks(b);
        dict_key(b, &d, "optimizer_states");
        emit_optimizer_states(b);
        dict_key(b, &d, "lr_schedulers");
        emit_lr_schedulers(b);
        dict_key(b, &d, "hyper_parameters");
        emit_hyper_parameters(b);
    }
    dict_end(b, &d);
    op(b, '.');
}

void sleapc__ckptw_pickle_build(sleapc_ckptw_pickle *pk, const sleapc_weights *w,
                                bool with_training_state)
{
    memset(pk, 0, sizeof *pk);
    pk->w = w;
    pk->m_rebuild = pk->m_float = pk->m_long = pk->m_odict = pk->m_storage = pk->m_cpu = MEMO_UNSET;
    emit_checkpoint(pk, with_training_state);
}
