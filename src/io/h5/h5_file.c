/* Opening, creating and closing HDF5 files; error messages; type mapping. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

/* The innermost reason of this thread's last libhdf5 failure. Captured by
 * the automatic error handler at the moment an API call fails, because the
 * error stack itself is cleared by the next API call (often a close on the
 * way to reporting). */
static _Thread_local char last_detail[256];

static herr_t first_desc(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    if (!buf[0] && e && e->desc && e->desc[0])
        snprintf(buf, sizeof last_detail, "%s", e->desc);
    (void)n;
    return 0;
}

/* Replaces HDF5's default handler (which prints to stderr): remember, never
 * print. Walking the stack upward starts where the error was detected, which
 * says the most ("truncated file: eof = ..."), not at the API wrapper. */
static herr_t capture(hid_t stack, void *data)
{
    (void)data;
    last_detail[0] = '\0';
    H5Ewalk2(stack, H5E_WALK_UPWARD, first_desc, last_detail);
    return 0;
}

void sleapc__h5_quiet(void)
{
    /* Before libhdf5's first call: no clean-up at exit. A file whose write
     * or close failed (a full disk) stays open inside libhdf5, and its
     * exit-time clean-up crashed on such a file; sleapc closes every file it
     * opens itself. */
    static atomic_flag started = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&started))
        H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, capture, NULL);
}

sleapc_status sleapc__h5_fail(sleapc_status st, const sleapc_h5 *f, const char *action,
                              const char *obj, const char *fmt, ...)
{
    char reason[512], detail[sizeof last_detail];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    memcpy(detail, last_detail, sizeof detail);
    last_detail[0] = '\0';
    /* A system call's failure comes as libhdf5's raw record ("unable to open
     * file: name = '<path>', errno = 2, error message = ..., flags = ...",
     * the path again and again); the errno says all of it. */
    const char *err = strstr(detail, "errno = ");
    if (err) {
        int e = atoi(err + 8);
        if (e > 0)
            snprintf(detail, sizeof detail, "%s", strerror(e));
    }
    H5Eclear2(H5E_DEFAULT);
    const char *path = f && f->path ? f->path : "?";
    /* An output: "write PATH: ...", as the callers name what they write. */
    if (f && f->atomic && detail[0])
        return sleapc__fail(st, "write %s: %s: %s (%s)", path, obj ? obj : "/", reason, detail);
    if (f && f->atomic)
        return sleapc__fail(st, "write %s: %s: %s", path, obj ? obj : "/", reason);
    if (detail[0])
        return sleapc__fail(st, "%s HDF5: %s: %s: %s (%s)", action, path, obj ? obj : "/", reason,
                            detail);
    return sleapc__fail(st, "%s HDF5: %s: %s: %s", action, path, obj ? obj : "/", reason);
}

size_t sleapc__h5_type_size(sleapc_h5_type t)
{
    switch (t) {
    case SLEAPC_H5_I8:
    case SLEAPC_H5_U8:
    case SLEAPC_H5_BOOL:
        return 1;
    case SLEAPC_H5_I16:
    case SLEAPC_H5_U16:
        return 2;
    case SLEAPC_H5_I32:
    case SLEAPC_H5_U32:
    case SLEAPC_H5_F32:
        return 4;
    case SLEAPC_H5_I64:
    case SLEAPC_H5_U64:
    case SLEAPC_H5_F64:
        return 8;
    default:
        return 0;
    }
}

static hid_t bool_enum(hid_t base)
{
    hid_t t = H5Tenum_create(base);
    if (t < 0)
        return H5I_INVALID_HID;
    /* Values are given in the base type's memory form: one byte either way. */
    int8_t no = 0, yes = 1;
    if (H5Tenum_insert(t, "FALSE", &no) < 0 || H5Tenum_insert(t, "TRUE", &yes) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

hid_t sleapc__h5_native_type(sleapc_h5_type t)
{
    switch (t) {
    case SLEAPC_H5_I8:
        return H5Tcopy(H5T_NATIVE_INT8);
    case SLEAPC_H5_U8:
        return H5Tcopy(H5T_NATIVE_UINT8);
    case SLEAPC_H5_I16:
        return H5Tcopy(H5T_NATIVE_INT16);
    case SLEAPC_H5_U16:
        return H5Tcopy(H5T_NATIVE_UINT16);
    case SLEAPC_H5_I32:
        return H5Tcopy(H5T_NATIVE_INT32);
    case SLEAPC_H5_U32:
        return H5Tcopy(H5T_NATIVE_UINT32);
    case SLEAPC_H5_I64:
        return H5Tcopy(H5T_NATIVE_INT64);
    case SLEAPC_H5_U64:
        return H5Tcopy(H5T_NATIVE_UINT64);
    case SLEAPC_H5_F32:
        return H5Tcopy(H5T_NATIVE_FLOAT);
    case SLEAPC_H5_F64:
        return H5Tcopy(H5T_NATIVE_DOUBLE);
    case SLEAPC_H5_BOOL:
        return bool_enum(H5T_NATIVE_UINT8);
    default:
        return H5I_INVALID_HID;
    }
}

hid_t sleapc__h5_disk_type(sleapc_h5_type t)
{
    switch (t) {
    case SLEAPC_H5_I8:
        return H5Tcopy(H5T_STD_I8LE);
    case SLEAPC_H5_U8:
        return H5Tcopy(H5T_STD_U8LE);
    case SLEAPC_H5_I16:
        return H5Tcopy(H5T_STD_I16LE);
    case SLEAPC_H5_U16:
        return H5Tcopy(H5T_STD_U16LE);
    case SLEAPC_H5_I32:
        return H5Tcopy(H5T_STD_I32LE);
    case SLEAPC_H5_U32:
        return H5Tcopy(H5T_STD_U32LE);
    case SLEAPC_H5_I64:
        return H5Tcopy(H5T_STD_I64LE);
    case SLEAPC_H5_U64:
        return H5Tcopy(H5T_STD_U64LE);
    case SLEAPC_H5_F32:
        return H5Tcopy(H5T_IEEE_F32LE);
    case SLEAPC_H5_F64:
        return H5Tcopy(H5T_IEEE_F64LE);
    /* numpy bool through h5py: enum over signed 8-bit (see formats D.9). */
    case SLEAPC_H5_BOOL:
        return bool_enum(H5T_STD_I8LE);
    default:
        return H5I_INVALID_HID;
    }
}

bool sleapc__h5_nbytes(int n, const int64_t *dims, size_t elem, size_t *out)
{
    size_t total = elem;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0)
            return false;
        if (dims[i] > 0 && total > SIZE_MAX / (size_t)dims[i])
            return false;
        total *= (size_t)dims[i];
    }
    *out = total;
    return true;
}

/* The HDF5 signature sits at offset 0 or, after a user block, at 512, 1024,
 * 2048, ... (powers of two). Checking it ourselves gives a clear "not an
 * HDF5 file" without depending on H5Fis_hdf5/H5Fis_accessible versions. */
static sleapc_status check_signature(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    /* O_NONBLOCK: a FIFO or device must not hang the open; it is refused
     * below as not a regular file before libhdf5 ever sees it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sleapc__fail(SLEAPC_ERR_IO, "open HDF5: %s: %s", path, strerror(errno));
    struct stat sb;
    sleapc_status st = SLEAPC_OK;
    if (fstat(fd, &sb) != 0)
        st = sleapc__fail(SLEAPC_ERR_IO, "open HDF5: %s: %s", path, strerror(errno));
    else if (S_ISDIR(sb.st_mode))
        st = sleapc__fail(SLEAPC_ERR_IO, "open HDF5: %s: is a directory", path);
    else if (!S_ISREG(sb.st_mode))
        st = sleapc__fail(SLEAPC_ERR_IO, "open HDF5: %s: not a regular file", path);
    bool found = false;
    for (off_t off = 0; !st && !found && off + 8 <= sb.st_size; off = off ? off * 2 : 512) {
        unsigned char buf[8];
        if (pread(fd, buf, 8, off) != 8)
            break;
        found = memcmp(buf, sig, 8) == 0;
    }
    close(fd);
    if (!st && !found)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "open HDF5: %s: not an HDF5 file", path);
    return st;
}

static sleapc_h5 *handle_new(const char *path)
{
    sleapc_h5 *f = sleapc__calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fid = H5I_INVALID_HID;
    f->path = sleapc__strdup(path);
    if (!f->path) {
        sleapc__free(f);
        return NULL;
    }
    return f;
}

static hid_t file_access_plist(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* Closing the file closes whatever an error path left open in it. */
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

sleapc_status sleapc__h5_open(const char *path, sleapc_h5 **out)
{
    *out = NULL;
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open HDF5: no path");
    sleapc__h5_quiet();
    last_detail[0] = '\0';
    sleapc_status st = check_signature(path);
    if (st)
        return st;
    sleapc_h5 *f = handle_new(path);
    if (!f)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open HDF5: %s: out of memory", path);
    hid_t fapl = file_access_plist();
    f->fid = fapl < 0 ? H5I_INVALID_HID : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f->fid < 0) {
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "open", "/", "libhdf5 cannot open the file");
        sleapc__h5_discard(f);
        return st;
    }
    *out = f;
    return SLEAPC_OK;
}

static sleapc_status create_at(sleapc_h5 *f, const char *name)
{
    hid_t fapl = file_access_plist();
    f->fid = fapl < 0 ? H5I_INVALID_HID : H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f->fid < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, f, "create", "/", "cannot create the file");
    f->writable = true;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_create(const char *path, sleapc_h5 **out)
{
    *out = NULL;
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create HDF5: no path");
    sleapc__h5_quiet();
    sleapc_h5 *f = handle_new(path);
    if (!f)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create HDF5: %s: out of memory", path);
    sleapc_status st = create_at(f, path);
    if (st) {
        sleapc__h5_discard(f);
        return st;
    }
    *out = f;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_create_atomic(const char *path, sleapc_h5 **out)
{
    *out = NULL;
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create HDF5: no path");
    sleapc__h5_quiet();
    sleapc_h5 *f = handle_new(path);
    if (!f)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create HDF5: %s: out of memory", path);
    /* The temporary file beside path exists from the start (a folder that
     * cannot take it fails here, before any work); libhdf5 writes into it
     * as datasets are written (memory stays flat however large the file),
     * and close renames it into place. */
    sleapc_status st = sleapc__atomic_open(path, &f->af);
    if (st) {
        sleapc__h5_discard(f);
        return st;
    }
    f->atomic = true;
    st = create_at(f, f->af.tmp);
    if (st) {
        sleapc__h5_discard(f);
        return st;
    }
    *out = f;
    return SLEAPC_OK;
}

const char *sleapc__h5_path(const sleapc_h5 *f)
{
    return f ? f->path : NULL;
}

static void release(sleapc_h5 *f)
{
    sleapc__free(f->path);
    sleapc__free(f);
}

sleapc_status sleapc__h5_close(sleapc_h5 *f)
{
    if (!f)
        return SLEAPC_OK;
    sleapc__h5_quiet();
    sleapc_status st = SLEAPC_OK;
    /* A full disk shows here at the latest, as the flush failing (the file
     * then stays open inside libhdf5: see sleapc__h5_quiet). */
    if (f->fid >= 0 && H5Fclose(f->fid) < 0 && !st)
        st = sleapc__h5_fail(SLEAPC_ERR_IO, f, "close", "/", "cannot flush and close the file");
    f->fid = H5I_INVALID_HID;
    H5Eclear2(H5E_DEFAULT);
    if (f->atomic) {
        if (st)
            sleapc__atomic_abort(&f->af);
        else
            st = sleapc__atomic_commit(&f->af);
        f->atomic = false;
    }
    release(f);
    return st;
}

void sleapc__h5_discard(sleapc_h5 *f)
{
    if (!f)
        return;
    sleapc__h5_quiet();
    if (f->fid >= 0)
        H5Fclose(f->fid);
    H5Eclear2(H5E_DEFAULT);
    if (f->atomic)
        sleapc__atomic_abort(&f->af);
    release(f);
}
