/* Checkpoint writer: the archive layout of torch.save (PyTorchStreamWriter
 * over miniz) and the pickle that Lightning's checkpoint dict produces under
 * pickle protocol 2 (the protocol torch.save uses by default).
 *
 * The pickle is built in memory first (it is small and is the first entry);
 * storages are then streamed to the file with their CRC computed on the way,
 * which is what the data-descriptor flag (0x0808) is for. */
#include "io/ckpt/ckpt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "io/ckpt/ckpt_zip.h"

#define ARCHIVE_DIR "best/"
#define PAYLOAD_ALIGN 64u
#define PICKLE_BATCH 1000 /* pickle.py _BATCHSIZE: items per SETITEMS/APPENDS */
#define MEMO_UNSET UINT32_MAX
#define ZIP32_LIMIT 0xffffffffu
#define LIGHTNING_VERSION "2.5.1.post0"

/* ---- pickle emission ---- */

typedef enum src_kind {
    SRC_WEIGHT,      /* the tensor itself */
    SRC_EXP_AVG,     /* Adam first moment, made up from the weight */
    SRC_EXP_AVG_SQ,  /* Adam second moment, made up from the weight */
    SRC_STEP,        /* 0-d int64 step counter */
    SRC_SCORE,       /* 0-d float32 monitored score */
} src_kind;

typedef struct storage_src {
    src_kind kind;
    int weight;  /* index into w for the first three kinds */
} storage_src;

typedef struct pwriter {
    uint8_t *p;
    size_t n, cap;
    int oom;
    uint32_t n_memo;
    const sleapc_weights *w;
    storage_src *srcs;  /* storage key i is srcs[i] */
    int n_srcs, srcs_cap;
    /* Memo slots of objects pickle.py would emit once and then fetch. */
    uint32_t m_rebuild, m_float, m_long, m_odict, m_storage, m_cpu;
} pwriter;

static void put(pwriter *b, const void *src, size_t n)
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

static void op(pwriter *b, uint8_t code)
{
    put(b, &code, 1);
}

static void put_le(pwriter *b, uint64_t x, int k)
{
    uint8_t tmp[8];
    for (int i = 0; i < k; i++)
        tmp[i] = (uint8_t)(x >> (8 * i));
    put(b, tmp, (size_t)k);
}

/* The smallest encoding, as pickle.py's save_long picks it. */
static void emit_int(pwriter *b, int64_t x)
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

static void emit_float(pwriter *b, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)(bits >> (56 - 8 * i));
    op(b, 'G');
    put(b, be, 8);
}

static void emit_str(pwriter *b, const char *s)
{
    size_t n = strlen(s);
    op(b, 'X');
    put_le(b, (uint64_t)n, 4);
    put(b, s, n);
}

static void emit_bool(pwriter *b, int x)
{
    op(b, x ? 0x88 : 0x89);
}

static void memo_store(pwriter *b, uint32_t *slot)
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

static void memo_fetch(pwriter *b, uint32_t slot)
{
    if (slot <= 0xff) {
        op(b, 'h');
        put_le(b, slot, 1);
    } else {
        op(b, 'j');
        put_le(b, slot, 4);
    }
}

static void emit_global(pwriter *b, uint32_t *slot, const char *module, const char *name)
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

static void emit_str_memo(pwriter *b, uint32_t *slot, const char *s)
{
    if (*slot != MEMO_UNSET) {
        memo_fetch(b, *slot);
        return;
    }
    emit_str(b, s);
    memo_store(b, slot);
}

/* Tuples of up to three items use TUPLE1..3, longer ones MARK ... TUPLE. */
static void emit_int_tuple(pwriter *b, int n, const int64_t *v)
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
static void batch_open(pwriter *b, int i, int n)
{
    if (i % PICKLE_BATCH == 0 && n - i > 1)
        op(b, '(');
}

static void batch_close(pwriter *b, int i, int n, uint8_t one, uint8_t many)
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

static dict_ctx dict_begin(pwriter *b, int n)
{
    op(b, '}');
    batch_open(b, 0, n);
    return (dict_ctx){-1, n};
}

static void dict_key(pwriter *b, dict_ctx *d, const char *key)
{
    if (d->i >= 0) {
        batch_close(b, d->i, d->n, 's', 'u');
        batch_open(b, d->i + 1, d->n);
    }
    d->i++;
    emit_str(b, key);
}

static void dict_end(pwriter *b, dict_ctx *d)
{
    if (d->i >= 0)
        batch_close(b, d->i, d->n, 's', 'u');
}

static void kv_int(pwriter *b, dict_ctx *d, const char *key, int64_t x)
{
    dict_key(b, d, key);
    emit_int(b, x);
}

static void kv_float(pwriter *b, dict_ctx *d, const char *key, double x)
{
    dict_key(b, d, key);
    emit_float(b, x);
}

static void kv_bool(pwriter *b, dict_ctx *d, const char *key, int x)
{
    dict_key(b, d, key);
    emit_bool(b, x);
}

static void kv_none(pwriter *b, dict_ctx *d, const char *key)
{
    dict_key(b, d, key);
    op(b, 'N');
}

static void kv_str(pwriter *b, dict_ctx *d, const char *key, const char *value)
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
static void emit_tensor(pwriter *b, src_kind kind, int weight, int ndim, const int64_t *shape)
{
    if (b->n_srcs == b->srcs_cap) {
        int cap = b->srcs_cap ? b->srcs_cap * 2 : 64;
        storage_src *s = sleapc__realloc(b->srcs, (size_t)cap * sizeof *s);
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

static void emit_weight_tensor(pwriter *b, src_kind kind, int i)
{
    const sleapc_weight *t = &b->w->items[i];
    emit_tensor(b, kind, i, t->ndim, t->shape);
}

static void emit_scalar_tensor(pwriter *b, src_kind kind)
{
    emit_tensor(b, kind, -1, 0, NULL);
}

/* OrderedDict() via REDUCE, then its items; like the real files but without
 * the BUILD of the _metadata attribute, which loaders do not need. */
static void emit_state_dict(pwriter *b)
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
static void emit_optimizer_states(pwriter *b)
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

static void kv_float_list1(pwriter *b, dict_ctx *d, const char *key, double x)
{
    dict_key(b, d, key);
    op(b, ']');
    emit_float(b, x);
    op(b, 'a');
}

/* torch.optim.lr_scheduler.StepLR.state_dict(). */
static void emit_lr_schedulers(pwriter *b)
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
static void emit_callbacks(pwriter *b)
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

static void emit_loops(pwriter *b)
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
static void emit_hyper_parameters(pwriter *b)
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

static void emit_checkpoint(pwriter *b, bool with_training_state)
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

/* ---- zip emission ---- */

typedef struct zrecord {
    char name[48];
    uint32_t crc;
    uint64_t size;
    uint64_t offset;
} zrecord;

typedef struct zwriter {
    FILE *f;
    uint64_t pos;
    zrecord *recs;
    int n, cap;
    uint32_t crc;     /* of the entry being written */
    uint64_t size;    /* of the entry being written */
} zwriter;

static sleapc_status zw_raw(zwriter *z, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, z->f) != n)
        return sleapc__fail(SLEAPC_ERR_IO, "write failed: %s", strerror(errno));
    z->pos += n;
    return SLEAPC_OK;
}

static void le_bytes(uint8_t *dst, uint64_t x, int k)
{
    for (int i = 0; i < k; i++)
        dst[i] = (uint8_t)(x >> (8 * i));
}

static sleapc_status zw_begin(zwriter *z, const char *name)
{
    size_t name_len = strlen(name);
    if (z->pos >= ZIP32_LIMIT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "archive reaches 4 GiB (zip64 entries are "
                                                    "not written)");
    zrecord *r = &z->recs[z->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->offset = z->pos;
    /* torch's getPadding: an "FB" extra field pads the payload to 64 bytes. */
    uint64_t start = z->pos + 30 + name_len + 4;
    size_t pad = (size_t)((PAYLOAD_ALIGN - start % PAYLOAD_ALIGN) % PAYLOAD_ALIGN);
    uint8_t h[30 + 4 + PAYLOAD_ALIGN];
    memset(h, 0, sizeof h);
    le_bytes(h, 0x04034b50u, 4);
    le_bytes(h + 6, 0x0808, 2);  /* sizes in a data descriptor; UTF-8 names */
    le_bytes(h + 26, name_len, 2);
    le_bytes(h + 28, 4 + pad, 2);
    sleapc_status st = zw_raw(z, h, 30);
    if (!st)
        st = zw_raw(z, name, name_len);
    h[30] = 'F';
    h[31] = 'B';
    le_bytes(h + 32, pad, 2);
    memset(h + 34, 'Z', pad);
    if (!st)
        st = zw_raw(z, h + 30, 4 + pad);
    z->crc = 0;
    z->size = 0;
    return st;
}

static sleapc_status zw_data(zwriter *z, const void *p, size_t n)
{
    z->crc = sleapc__zip_crc32(z->crc, p, n);
    z->size += n;
    return zw_raw(z, p, n);
}

static sleapc_status zw_end(zwriter *z)
{
    if (z->size >= ZIP32_LIMIT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "entry of 4 GiB or more (zip64 entries are "
                                                    "not written)");
    zrecord *r = &z->recs[z->n - 1];
    r->crc = z->crc;
    r->size = z->size;
    uint8_t d[16];
    le_bytes(d, 0x08074b50u, 4);
    le_bytes(d + 4, r->crc, 4);
    le_bytes(d + 8, r->size, 4);
    le_bytes(d + 12, r->size, 4);
    return zw_raw(z, d, sizeof d);
}

static sleapc_status zw_entry(zwriter *z, const char *name, const void *p, size_t n)
{
    sleapc_status st = zw_begin(z, name);
    if (!st)
        st = zw_data(z, p, n);
    return st ? st : zw_end(z);
}

/* Central directory, then the zip64 end record and locator that miniz always
 * writes in torch's mode, then the classic end record. */
static sleapc_status zw_finish(zwriter *z)
{
    uint64_t cd_off = z->pos;
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; i < z->n && !st; i++) {
        const zrecord *r = &z->recs[i];
        size_t name_len = strlen(r->name);
        uint8_t c[46];
        memset(c, 0, sizeof c);
        le_bytes(c, 0x02014b50u, 4);
        le_bytes(c + 8, 0x0808, 2);
        le_bytes(c + 16, r->crc, 4);
        le_bytes(c + 20, r->size, 4);
        le_bytes(c + 24, r->size, 4);
        le_bytes(c + 28, name_len, 2);
        le_bytes(c + 42, r->offset, 4);
        st = zw_raw(z, c, sizeof c);
        if (!st)
            st = zw_raw(z, r->name, name_len);
    }
    if (st)
        return st;
    uint64_t cd_size = z->pos - cd_off, z64_off = z->pos;
    if (z64_off >= ZIP32_LIMIT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "archive reaches 4 GiB (zip64 entries are "
                                                    "not written)");
    uint8_t e[56 + 20 + 22];
    memset(e, 0, sizeof e);
    le_bytes(e, 0x06064b50u, 4);
    le_bytes(e + 4, 44, 8);
    le_bytes(e + 12, 0x031e, 2);
    le_bytes(e + 14, 0x002d, 2);
    le_bytes(e + 24, (uint64_t)z->n, 8);
    le_bytes(e + 32, (uint64_t)z->n, 8);
    le_bytes(e + 40, cd_size, 8);
    le_bytes(e + 48, cd_off, 8);
    uint8_t *loc = e + 56;
    le_bytes(loc, 0x07064b50u, 4);
    le_bytes(loc + 8, z64_off, 8);
    le_bytes(loc + 16, 1, 4);
    uint8_t *end = loc + 20;
    uint64_t n16 = z->n < 0xffff ? (uint64_t)z->n : 0xffff;
    le_bytes(end, 0x06054b50u, 4);
    le_bytes(end + 8, n16, 2);
    le_bytes(end + 10, n16, 2);
    le_bytes(end + 12, cd_size, 4);
    le_bytes(end + 16, cd_off, 4);
    return zw_raw(z, e, sizeof e);
}

/* ---- storages ---- */

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

static sleapc_status write_storage(zwriter *z, const sleapc_weights *w, const storage_src *s)
{
    if (s->kind == SRC_STEP) {
        int64_t step = 0;
        return zw_data(z, &step, sizeof step);
    }
    if (s->kind == SRC_SCORE) {
        float score = 0.0123f;
        return zw_data(z, &score, sizeof score);
    }
    const sleapc_weight *t = &w->items[s->weight];
    size_t numel = (size_t)sleapc__weight_numel(t);
    if (s->kind == SRC_WEIGHT)
        return zw_data(z, t->data, numel * sizeof(float));
    /* Made-up but deterministic Adam moments, so a reader sees real values. */
    float chunk[1024];
    sleapc_status st = SLEAPC_OK;
    for (size_t i = 0; i < numel && !st; i += 1024) {
        size_t k = numel - i < 1024 ? numel - i : 1024;
        for (size_t j = 0; j < k; j++) {
            float x = t->data[i + j];
            chunk[j] = s->kind == SRC_EXP_AVG ? 0.1f * x : 0.01f * x * x;
        }
        st = zw_data(z, chunk, k * sizeof(float));
    }
    return st;
}

/* torch.save writes storages sorted by key as strings: 0, 1, 10, 11, 2 ... */
static int cmp_key_text(const void *pa, const void *pb)
{
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", *(const int *)pa);
    snprintf(b, sizeof b, "%d", *(const int *)pb);
    return strcmp(a, b);
}

static sleapc_status write_archive(FILE *f, const pwriter *pk, const sleapc_weights *w)
{
    zwriter z;
    memset(&z, 0, sizeof z);
    z.f = f;
    z.cap = pk->n_srcs + 4;
    z.recs = sleapc__calloc((size_t)z.cap, sizeof *z.recs);
    int *order = sleapc__calloc((size_t)pk->n_srcs + 1, sizeof *order);
    if (!z.recs || !order) {
        sleapc__free(z.recs);
        sleapc__free(order);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < pk->n_srcs; i++)
        order[i] = i;
    qsort(order, (size_t)pk->n_srcs, sizeof *order, cmp_key_text);

    const char *byteorder = host_is_big_endian() ? "big" : "little";
    sleapc_status st = zw_entry(&z, ARCHIVE_DIR "data.pkl", pk->p, pk->n);
    if (!st)
        st = zw_entry(&z, ARCHIVE_DIR "byteorder", byteorder, strlen(byteorder));
    for (int i = 0; i < pk->n_srcs && !st; i++) {
        char name[48];
        snprintf(name, sizeof name, ARCHIVE_DIR "data/%d", order[i]);
        st = zw_begin(&z, name);
        if (!st)
            st = write_storage(&z, w, &pk->srcs[order[i]]);
        if (!st)
            st = zw_end(&z);
    }
    if (!st)
        st = zw_entry(&z, ARCHIVE_DIR "version", "3\n", 2);
    if (!st) {
        /* An opaque 40-digit id; derive it from the content so equal
         * inputs give equal files. */
        uint32_t h = 0;
        for (int i = 0; i < z.n; i++)
            h = sleapc__zip_crc32(h, &z.recs[i].crc, sizeof z.recs[i].crc);
        char id[48];
        snprintf(id, sizeof id, "%010u%010u%010u%010u", (unsigned)h, (unsigned)z.recs[0].crc,
                 (unsigned)(z.pos % 1000000007u), (unsigned)pk->n_srcs);
        st = zw_entry(&z, ARCHIVE_DIR ".data/serialization_id", id, 40);
    }
    if (!st)
        st = zw_finish(&z);
    sleapc__free(order);
    sleapc__free(z.recs);
    return st;
}

static sleapc_status check_weights(const sleapc_weights *w)
{
    if (!w || w->n < 0 || (w->n && !w->items))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "no weights given");
    for (int i = 0; i < w->n; i++) {
        const sleapc_weight *t = &w->items[i];
        if (!t->name || !t->name[0])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor %d has no name", i);
        if (t->ndim < 0 || t->ndim > SLEAPC_WEIGHT_MAX_DIMS)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor \"%s\" has %d dimensions",
                                t->name, t->ndim);
        int64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] < 0 || (t->shape[d] && numel > INT64_MAX / 4 / t->shape[d]))
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor \"%s\" has a bad shape",
                                    t->name);
            numel *= t->shape[d];
        }
        if (numel > 0 && !t->data)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor \"%s\" has no data", t->name);
        if ((uint64_t)numel * 4 >= ZIP32_LIMIT)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "tensor \"%s\" is 4 GiB or more",
                                t->name);
    }
    return SLEAPC_OK;
}

/* Written into a temporary file beside path, renamed into place when whole. */
static sleapc_status write_file(const char *path, const pwriter *pk, const sleapc_weights *w)
{
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    st = write_archive(af.f, pk, w);
    if (st) {
        sleapc__atomic_abort(&af);
        return st;
    }
    return sleapc__atomic_commit(&af);
}

sleapc_status sleapc__ckpt_write(const char *path, const sleapc_weights *w,
                                 bool with_training_state)
{
    if (!path || !path[0])
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write checkpoint: a path is required");
    sleapc_status st = check_weights(w);
    if (st)
        return sleapc__wrap(st, "write checkpoint: %s", path);
    pwriter pk;
    memset(&pk, 0, sizeof pk);
    pk.w = w;
    pk.m_rebuild = pk.m_float = pk.m_long = pk.m_odict = pk.m_storage = pk.m_cpu = MEMO_UNSET;
    emit_checkpoint(&pk, with_training_state);
    if (pk.oom)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    else
        st = write_file(path, &pk, w);
    sleapc__free(pk.p);
    sleapc__free(pk.srcs);
    if (st)
        return sleapc__wrap(st, "write checkpoint: %s", path);
    return SLEAPC_OK;
}
