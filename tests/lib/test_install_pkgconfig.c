/* The library as a user gets it: `cmake --install` into a fresh prefix, a
 * small C program (tests/lib/installed_example.c, public headers only) built
 * with `pkg-config --cflags --libs sleapc` against the installed
 * libsleapc.so, and its predictions on the first frames of a real video (the
 * top-down pair on centered_pair_small.mp4) compared with what `sleapc
 * predict` writes for the same frames. Both run the same code on the same
 * decoded frames with the same batches and thread count, so the results must
 * be bit-identical (the CLI's .json round-trips float32 exactly). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test_util.h"

#ifdef SLEAPC_SANITIZED
#define N_FRAMES 4
#else
#define N_FRAMES 8
#endif
#define BATCH 4
#define MAX_LINES 256
#define MAX_NODES 16

typedef struct prediction {
    int frame, instance;
    double score;
    double xy[2 * MAX_NODES];
} prediction;

static int shell(const char *cmd)
{
    int status = system(cmd);
    if (status != 0)
        fprintf(stderr, "failed (%d): %s\n", status, cmd);
    return status == -1 || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
}

/* The example's lines; returns how many, -1 when unreadable. */
static int read_example(const char *path, int n_nodes, prediction *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    while (n < MAX_LINES && fscanf(f, "%d %d %lf", &out[n].frame, &out[n].instance,
                                   &out[n].score) == 3) {
        for (int j = 0; j < 2 * n_nodes; j++)
            if (fscanf(f, "%lf", &out[n].xy[j]) != 1)
                out[n].xy[j] = -1e30;  /* unreadable: cannot match */
        n++;
    }
    fclose(f);
    return n;
}

/* The CLI's .json, flattened to the same lines. */
static int read_cli_json(const char *path, int *n_nodes, prediction *out)
{
    size_t size = 0;
    char *text = (char *)test_read_file(path, &size);
    cJSON *root = text ? cJSON_ParseWithLength(text, size) : NULL;
    free(text);
    if (!root)
        return -1;
    *n_nodes = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "skeleton"), "nodes"));
    int n = 0;
    const cJSON *fr;
    cJSON_ArrayForEach(fr, cJSON_GetObjectItem(root, "frames")) {
        int i = 0;
        const cJSON *in;
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(fr, "instances")) {
            if (n == MAX_LINES)
                break;
            out[n].frame = cJSON_GetObjectItem(fr, "frame_idx")->valueint;
            out[n].instance = i++;
            out[n].score = cJSON_GetObjectItem(in, "score")->valuedouble;
            int j = 0;
            const cJSON *pt;
            cJSON_ArrayForEach(pt, cJSON_GetObjectItem(in, "points")) {
                bool missing = cJSON_IsNull(pt);
                out[n].xy[j++] = missing ? NAN : cJSON_GetArrayItem(pt, 0)->valuedouble;
                out[n].xy[j++] = missing ? NAN : cJSON_GetArrayItem(pt, 1)->valuedouble;
            }
            n++;
        }
    }
    cJSON_Delete(root);
    return n;
}

static bool same(double a, double b)
{
    return (isnan(a) && isnan(b)) || (float)a == (float)b;
}

int main(void)
{
    test_require_data();
    if (shell("pkg-config --version >/dev/null") != 0) {
        printf("pkg-config is not installed: skipped\n");
        return 77;
    }
    const char *tmp = test_tmp_dir();
    char m1[2048], m2[2048], video[2048], cmd[16384];
    snprintf(m1, sizeof m1, "%s", test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(m2, sizeof m2, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));

    snprintf(cmd, sizeof cmd, "'%s' --install '%s' --prefix '%s/prefix' >/dev/null",
             SLEAPC_CMAKE_COMMAND, SLEAPC_BUILD_DIR, tmp);
    CHECK(shell(cmd) == 0);
    /* Only what the installed prefix provides: its pkg-config file, its
     * headers and its libsleapc.so (found at run time through the rpath). */
    snprintf(cmd, sizeof cmd,
             "PKG_CONFIG_PATH='%s/prefix/lib/pkgconfig' && export PKG_CONFIG_PATH && "
             "'%s' -std=c11 -Wall -Wextra -Werror %s '%s/tests/lib/installed_example.c' "
             "-o '%s/example' $(pkg-config --cflags --libs sleapc) "
             "-Wl,-rpath,$(pkg-config --variable=libdir sleapc)",
             tmp, SLEAPC_C_COMPILER, SLEAPC_EXTRA_CFLAGS, SLEAPC_SOURCE_DIR, tmp);
    CHECK(shell(cmd) == 0);
    snprintf(cmd, sizeof cmd, "ldd '%s/example' | grep 'libsleapc\\.so' | grep -q '%s/prefix/'", tmp, tmp);
    CHECK_MSG(shell(cmd) == 0, "the example is not linked to the installed libsleapc.so");

    snprintf(cmd, sizeof cmd, "'%s/example' '%s' %d %d '%s' '%s' > '%s/example.txt'", tmp, video,
             N_FRAMES, BATCH, m1, m2, tmp);
    CHECK(shell(cmd) == 0);
    snprintf(cmd, sizeof cmd, "predict -m '%s' -m '%s' -i '%s' -o '%s/cli.json' --frames 0-%d "
             "--batch_size %d --quiet", m1, m2, video, tmp, N_FRAMES - 1, BATCH);
    CHECK_MSG(test_run_cli(cmd) == 0, "%s", test_cli_output());

    static prediction want[MAX_LINES], got[MAX_LINES];
    char path[2048];
    int n_nodes = 0;
    snprintf(path, sizeof path, "%s/cli.json", tmp);
    int n_want = read_cli_json(path, &n_nodes, want);
    snprintf(path, sizeof path, "%s/example.txt", tmp);
    int n_got = n_nodes > 0 && n_nodes <= MAX_NODES ? read_example(path, n_nodes, got) : -1;
    /* Two animals in every frame of this clip. */
    CHECK_MSG(n_want >= N_FRAMES, "the CLI found %d instances in %d frames", n_want, N_FRAMES);
    CHECK_MSG(n_got == n_want, "%d instances from the installed library, %d from the CLI", n_got,
              n_want);
    int mismatches = 0;
    for (int k = 0; k < n_got && k < n_want; k++) {
        bool ok = got[k].frame == want[k].frame && got[k].instance == want[k].instance &&
                  same(got[k].score, want[k].score);
        for (int j = 0; j < 2 * n_nodes; j++)
            ok = ok && same(got[k].xy[j], want[k].xy[j]);
        if (!ok && mismatches++ < 5)
            fprintf(stderr, "frame %d instance %d differs (x0 %.9g vs %.9g)\n", want[k].frame,
                    want[k].instance, got[k].xy[0], want[k].xy[0]);
    }
    CHECK_MSG(mismatches == 0, "%d of %d instances differ", mismatches, n_want);
    printf("%d instances in %d frames: installed library = CLI\n", n_want, N_FRAMES);
    return test_finish();
}
