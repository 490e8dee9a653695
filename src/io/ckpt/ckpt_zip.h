/* Read-only view of a ZIP archive held in memory, as torch.save writes it:
 * stored (uncompressed) entries, optional zip64 end records. Only what a
 * checkpoint reader needs; every offset and size is checked against the
 * buffer before use. */
#ifndef SLEAPC_IO_CKPT_ZIP_H
#define SLEAPC_IO_CKPT_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_zip_entry {
    const char *name;        /* points into the archive bytes; NOT NUL-terminated */
    size_t name_len;
    uint16_t method;         /* 0 = stored; anything else is refused by _entry_data */
    uint16_t flags;          /* general-purpose flags from the central directory */
    uint32_t crc32;          /* CRC-32 recorded in the central directory */
    uint64_t size;           /* uncompressed size in bytes */
    uint64_t comp_size;      /* bytes actually stored */
    uint64_t header_offset;  /* local header position */
    uint64_t data_offset;    /* payload position; data_offset + comp_size <= archive size */
} sleapc_zip_entry;

typedef struct sleapc_zip {
    const uint8_t *buf;         /* borrowed archive bytes; must outlive the view */
    size_t size;
    sleapc_zip_entry *entries;  /* owned; sorted by name (bytewise), names unique */
    int n;
} sleapc_zip;

/* Parse the central directory of the archive in buf[0..size). buf is borrowed
 * and must stay valid until sleapc__zip_close. out is filled on success and
 * zeroed on failure. Returns SLEAPC_OK, SLEAPC_ERR_FORMAT (not a zip, truncated,
 * inconsistent offsets, duplicate names), SLEAPC_ERR_UNSUPPORTED (multi-disk
 * archive) or SLEAPC_ERR_NOMEM; the message names the problem, not the file
 * (callers add that). */
sleapc_status sleapc__zip_open(const uint8_t *buf, size_t size, sleapc_zip *out);

/* Exact-name lookup (name need not be NUL-terminated); NULL when absent. The
 * pointer is valid until sleapc__zip_close. */
const sleapc_zip_entry *sleapc__zip_find(const sleapc_zip *z, const char *name, size_t len);

/* The payload bytes of a stored entry (a pointer into the archive buffer),
 * after checking them against the entry's recorded CRC-32. Returns
 * SLEAPC_ERR_UNSUPPORTED for a compressed or encrypted entry and
 * SLEAPC_ERR_FORMAT for a CRC mismatch (damaged bytes). */
sleapc_status sleapc__zip_entry_data(const sleapc_zip *z, const sleapc_zip_entry *e,
                                     const uint8_t **data, size_t *size);

/* Free what sleapc__zip_open allocated; accepts a zeroed struct. */
void sleapc__zip_close(sleapc_zip *z);

/* Update a CRC-32 (ISO-HDLC, the ZIP polynomial) with n bytes. Start with
 * crc = 0; feed chunks in order. */
uint32_t sleapc__zip_crc32(uint32_t crc, const void *data, size_t n);

#endif
