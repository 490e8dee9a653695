/* The real AMX tile instructions behind native_amx_ops, and the choice
 * between them and the model. Compiled with -mamx-tile -mamx-bf16 where the
 * compiler takes them (CMakeLists.txt defines SLEAPC_HAVE_AMX_TILES); the
 * instructions are reached only through sleapc__native_amx_hw_ops, which
 * hands them out only where cpuid, XCR0 and the kernel allow them. */
#define _GNU_SOURCE /* syscall */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "backends/native/native_amx.h"
#include "core/cpu_id.h"
#include "core/settings.h"

#if defined(SLEAPC_HAVE_AMX_TILES) && defined(__x86_64__) && defined(__linux__)

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux keeps AMX's tile data (XFEATURE_XTILEDATA, component 18) off until
 * the process asks; the first tile instruction would fault otherwise. */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* LDTILECFG's 64 bytes: palette 1, every tile 16 rows x 64 bytes. */
typedef struct tile_config {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved0[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

static void hw_config(void *ctx)
{
    (void)ctx;
    tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = NATIVE_AMX_ROWS;
    }
    _tile_loadconfig(&cfg);
}

/* The intrinsics take tile numbers as constants: one case per tile. */
static void hw_zero_c(void *ctx, int c)
{
    (void)ctx;
    switch (c) {
    case 0:
        _tile_zero(0);
        break;
    case 1:
        _tile_zero(1);
        break;
    case 2:
        _tile_zero(2);
        break;
    default:
        _tile_zero(3);
        break;
    }
}

static void hw_load_a(void *ctx, int i, const void *base, int64_t stride)
{
    (void)ctx;
    if (i == 0)
        _tile_loadd(4, base, stride);
    else
        _tile_loadd(5, base, stride);
}

static void hw_load_b(void *ctx, int j, const void *base, int64_t stride)
{
    (void)ctx;
    if (j == 0)
        _tile_loadd(6, base, stride);
    else
        _tile_loadd(7, base, stride);
}

static void hw_dot(void *ctx, int c)
{
    (void)ctx;
    switch (c) {
    case 0:
        _tile_dpbf16ps(0, 4, 6);
        break;
    case 1:
        _tile_dpbf16ps(1, 4, 7);
        break;
    case 2:
        _tile_dpbf16ps(2, 5, 6);
        break;
    default:
        _tile_dpbf16ps(3, 5, 7);
        break;
    }
}

static void hw_store_c(void *ctx, int c, void *base, int64_t stride)
{
    (void)ctx;
    switch (c) {
    case 0:
        _tile_stored(0, base, stride);
        break;
    case 1:
        _tile_stored(1, base, stride);
        break;
    case 2:
        _tile_stored(2, base, stride);
        break;
    default:
        _tile_stored(3, base, stride);
        break;
    }
}

static void hw_release(void *ctx)
{
    (void)ctx;
    _tile_release();
}

static const native_amx_ops hw_ops = {
    .name = "amx",
    .config = hw_config,
    .zero_c = hw_zero_c,
    .load_a = hw_load_a,
    .load_b = hw_load_b,
    .dot = hw_dot,
    .store_c = hw_store_c,
    .release = hw_release,
};

/* 0 not asked yet, 1 granted, 2 refused (or no AMX). The request is
 * idempotent, so two threads asking at once do no harm. */
static atomic_int granted;

const native_amx_ops *sleapc__native_amx_hw_ops(void)
{
    int g = atomic_load(&granted);
    if (g == 0) {
        g = sleapc__cpu_has_amx_bf16() &&
                    syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0
                ? 1
                : 2;
        atomic_store(&granted, g);
    }
    return g == 1 ? &hw_ops : NULL;
}

#else

const native_amx_ops *sleapc__native_amx_hw_ops(void)
{
    return NULL;
}

#endif

const native_amx_ops *sleapc__native_amx_ops(void)
{
    if (sleapc__settings_amx_model())
        return sleapc__native_amx_model_ops();
    /* The real tiles have not yet run on AMX hardware with this code: they
     * serve bf16 only when asked for (amx=1); test_amx_tiles checks them
     * against the model wherever the CPU has them. */
    return sleapc__settings_amx() ? sleapc__native_amx_hw_ops() : NULL;
}
