/* Minimal test harness: CHECK macros that count, a data-folder lookup, and a
 * closing "N passed, N failed" line. */
#ifndef SLEAPC_TEST_UTIL_H
#define SLEAPC_TEST_UTIL_H

#include <stdbool.h>
#include <stdio.h>

#include "sleapc/predictor.h"

extern int test_n_passed;
extern int test_n_failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            test_n_passed++;                                                          \
        } else {                                                                      \
            test_n_failed++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

#define CHECK_MSG(cond, ...)                                                          \
    do {                                                                              \
        if (cond) {                                                                   \
            test_n_passed++;                                                          \
        } else {                                                                      \
            test_n_failed++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
        }                                                                             \
    } while (0)

/* The status must be SLEAPC_OK; prints sleapc_last_error() otherwise. */
#define CHECK_OK(expr)                                                                \
    do {                                                                              \
        sleapc_status st_ = (expr);                                                   \
        CHECK_MSG(st_ == SLEAPC_OK, "%s: %s", sleapc_status_str(st_),                 \
                  sleapc_last_error());                                               \
    } while (0)

/* The shared data folder: $SLEAPC_DATA_DIR, else ../shared/data beside the
 * source tree. NULL when it does not exist. */
const char *test_data_dir(void);

/* Join data dir + relative path into a static buffer (one at a time). */
const char *test_data_path(const char *rel);

/* A fresh temporary directory for this test program, removed with all it
 * holds when the program exits (kept when SLEAPC_KEEP_TEMP is set). */
const char *test_tmp_dir(void);
/* name inside test_tmp_dir(), in one of four static buffers used in turn (so
 * up to four paths can be held at once). */
const char *test_tmp_path(const char *name);

/* Read a whole file; caller frees. NULL on failure. */
unsigned char *test_read_file(const char *path, size_t *size);
bool test_write_file(const char *path, const void *data, size_t size);
/* The JSON document in path (cJSON_Delete it), or NULL when unreadable. */
struct cJSON *test_load_json(const char *path);

/* Set one of the library's environment variables (value NULL: unset it) and
 * have the library read its settings again (core/settings.h reads the
 * environment once): for tests that change a setting after a first run.
 * Child processes (test_run_cli) inherit the variable as set. */
void test_setenv(const char *name, const char *value);

/* Run the sleapc command line with args (a shell fragment) and keep what it
 * printed, stdout and stderr (test_run_cli_stdout: stdout only), for
 * test_cli_output(). Returns the exit status, -1 when it did not exit. */
int test_run_cli(const char *args);
int test_run_cli_stdout(const char *args);
const char *test_cli_output(void);

/* Relative L2 distance of got from want: ||got - want|| / ||want|| (the
 * absolute distance when want is all zeros), accumulated in double. */
double test_rel_l2(const float *got, const float *want, int64_t n);

/* The sorted names in dir, hidden ones left out; at most max, each to be
 * freed. Returns how many. */
int test_list_dir(const char *dir, char **names, int max);

/* Print the closing line; return the process exit code. */
int test_finish(void);

/* n pseudo-random weights in [-scale/2, scale/2) from seed (a fixed LCG, so
 * a hand-built test graph is the same on every run and machine). */
void test_fill_weights(float *p, int n, unsigned seed, float scale);

/* Exit 77 (skipped) with a reason when the shared data is missing. */
void test_require_data(void);
/* SLEAPC_TEST_QUICK=1 (`make check`): the reference tests (ctest label
 * `model`) run one case per model type, the first of each in name order;
 * unset, empty or 0: every case, as ctest and `make test` run them. */
bool test_quick(void);
/* Whether case `id` runs: always without SLEAPC_TEST_QUICK; with it, only
 * when no case of its model type (the id up to "__", e.g. "topdown" of
 * "topdown__centered_pair_f0000") ran in this program yet. Call once per
 * case, in name order. */
bool test_quick_case(const char *id);
/* Whether backend `name` runs here only on a software GPU emulation (the
 * Vulkan backend on lavapipe: about 1 GFLOP/s). Tests that go over every
 * backend leave it to the Vulkan tests, which take small cases. */
bool test_backend_software_only(const char *name);

/* (instance_util.c) One instance of a predictor's last run, read through the
 * public bulk reader (sleapc_predictor_frame_results), for tests that look at instances
 * one by one. has_centroid: its centroid is not NaN. */
#define TEST_MAX_NODES 64
typedef struct test_instance {
    float points[2 * TEST_MAX_NODES];
    float point_scores[TEST_MAX_NODES];
    float score;
    int track;
    float tracking_score;
    bool has_centroid;
    float centroid[2];
    float centroid_score;
} test_instance;
/* Nodes of p's skeleton; the name of class i (NULL when none). */
int test_n_nodes(const sleapc_predictor *p);
const char *test_class_name(const sleapc_predictor *p, int i);
/* Instances in frame of the last run (0 when there is no such frame). */
int test_n_instances(const sleapc_predictor *p, int frame);
/* SLEAPC_ERR_INVALID_ARG when there is no such instance or the skeleton has
 * more than TEST_MAX_NODES nodes. */
sleapc_status test_read_instance(const sleapc_predictor *p, int frame, int i, test_instance *out);

/* The frames a uint8 array (H,W), (H,W,C) or (N,H,W,C) holds, C 1 (gray) or
 * 3 (RGB); another C gives a format the library rejects. */
sleapc_frame test_frames(const sleapc_tensor *t);
/* sleapc_predictor_run on the frames of such an array. */
sleapc_status test_run_array(sleapc_predictor *p, const sleapc_tensor *t);

#endif
