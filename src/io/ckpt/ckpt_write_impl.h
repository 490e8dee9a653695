/* Internals shared by the checkpoint writer's two files: the pickle that
 * ckpt_write_pickle.c builds in memory, and the list of storages it names,
 * which ckpt_write.c then streams into the zip archive. */
#ifndef SLEAPC_IO_CKPT_WRITE_IMPL_H
#define SLEAPC_IO_CKPT_WRITE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/ckpt/ckpt.h"

typedef enum sleapc_ckptw_src_kind {
    SRC_WEIGHT,     /* the tensor itself */
    SRC_EXP_AVG,    /* Adam first moment, made up from the weight */
    SRC_EXP_AVG_SQ, /* Adam second moment, made up from the weight */
    SRC_STEP,       /* 0-d int64 step counter */
    SRC_SCORE,      /* 0-d float32 monitored score */
} sleapc_ckptw_src_kind;

typedef struct sleapc_ckptw_src {
    sleapc_ckptw_src_kind kind;
    int weight; /* index into w for the first three kinds */
} sleapc_ckptw_src;

typedef struct sleapc_ckptw_pickle {
    uint8_t *p;
    size_t n, cap;
    int oom;
    uint32_t n_memo;
    const sleapc_weights *w;
    sleapc_ckptw_src *srcs; /* storage key i is srcs[i] */
    int n_srcs, srcs_cap;
    /* Memo slots of objects pickle.py would emit once and then fetch. */
    uint32_t m_rebuild, m_float, m_long, m_odict, m_storage, m_cpu;
} sleapc_ckptw_pickle;

/* Fill *pk (any contents are overwritten) with the pickle of Lightning's
 * checkpoint dict for w; pk->oom is set when memory ran out. The caller frees
 * pk->p and pk->srcs. */
void sleapc__ckptw_pickle_build(sleapc_ckptw_pickle *pk, const sleapc_weights *w,
                                bool with_training_state);

#endif
