/* libFuzzer target: the .slp labels reader over HDF5 files libhdf5 reads
 * correctly, built from the fuzz bytes by fuzz_h5_build.h (metadata JSON,
 * videos_json / tracks_json rows, the frames, instances and points tables):
 * the reader, then every video's path lookup, embedded frames and the
 * package a video may name (the scratch file itself). Every input
 * must end in a status with a message, never a crash, leak or abort.
 * Replayed on its committed corpus by test_fuzz_slp_replay.c. */
#include "fuzz_h5_build.h"
#include "core/alloc.h"
#include "io/slp/slp_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch("fuzz.slp", (const uint8_t *)"", 0);
    if (!path || !fuzz_h5_build(path, data, size))
        return 0;
    sleapc_slp *r = NULL;
    sleapc_status st = sleapc__slp_open(path, &r);
    fuzz_expect("fuzz_slp_read", st);
    for (int v = 0; r && v < r->n_videos && v < 8; v++) {
        char *vp = NULL;
        st = sleapc__slp_video_path(r, v, &vp);
        if (st != SLEAPC_OK && st != SLEAPC_ERR_IO)
            fuzz_expect("fuzz_slp_read: video path", st);
        sleapc__free(vp);
        const uint8_t *bytes = NULL;
        size_t n = 0;
        char fmt[16];
        st = sleapc__slp_embedded_frame(r, v, 0, &bytes, &n, fmt);
        if (st != SLEAPC_ERR_INVALID_ARG)
            fuzz_expect("fuzz_slp_read: embedded frame", st);
        /* Images in a package the labels name (a self-reference here). */
        sleapc_slp *pkg = NULL;
        int pv = -1;
        if (sleapc__slp_video_in_package(r, v)) {
            st = sleapc__slp_open_package_video(r, v, &pkg, &pv);
            if (st != SLEAPC_ERR_IO)
                fuzz_expect("fuzz_slp_read: package video", st);
            sleapc__slp_close(pkg);
        }
    }
    sleapc__slp_close(r);
    return 0;
}
