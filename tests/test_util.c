#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/settings.h"
#include "sleapc/runner.h"

int test_n_passed;
int test_n_failed;

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *test_data_dir(void)
{
    static char buf[4096];
    const char *env = getenv("SLEAPC_DATA_DIR");
    int n = env && *env ? snprintf(buf, sizeof buf, "%s", env)
                        : snprintf(buf, sizeof buf, "%s/../shared/data", SLEAPC_SOURCE_DIR);
    if (n < 0 || (size_t)n >= sizeof buf)
        return NULL;
    return is_dir(buf) ? buf : NULL;
}

const char *test_data_path(const char *rel)
{
    static char buf[4096];
    const char *dir = test_data_dir();
    int n = snprintf(buf, sizeof buf, "%s/%s", dir ? dir : ".", rel);
    return n < 0 || (size_t)n >= sizeof buf ? "" : buf;
}

/* Remove path and everything below it; links are removed, never followed. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            size_t n = strlen(path) + strlen(e->d_name) + 2;
            char *child = malloc(n);
            if (!child)
                break;
            snprintf(child, n, "%s/%s", path, e->d_name);
            remove_tree(child);
            free(child);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static char tmp_dir[256];
static pid_t tmp_dir_owner;

/* At exit of the process that made it (not of a forked child), unless
 * SLEAPC_KEEP_TEMP is set to look at what a test wrote. */
static void remove_tmp_dir(void)
{
    const char *keep = getenv("SLEAPC_KEEP_TEMP");
    if (!tmp_dir[0] || getpid() != tmp_dir_owner)
        return;
    if (keep && *keep && strcmp(keep, "0") != 0) {
        fprintf(stderr, "kept %s\n", tmp_dir);
        return;
    }
    remove_tree(tmp_dir);
}

const char *test_tmp_dir(void)
{
    if (!tmp_dir[0]) {
        const char *base = getenv("TMPDIR");
        int n = snprintf(tmp_dir, sizeof tmp_dir, "%s/sleapc_test_XXXXXX",
                         base && *base ? base : "/tmp");
        if (n < 0 || (size_t)n >= sizeof tmp_dir || !mkdtemp(tmp_dir)) {
            fprintf(stderr, "cannot create a temporary directory\n");
            exit(1);
        }
        tmp_dir_owner = getpid();
        atexit(remove_tmp_dir);
    }
    return tmp_dir;
}

unsigned char *test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf && size)
        *size = (size_t)n;
    return buf;
}

bool test_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

int test_finish(void)
{
    printf("%d passed, %d failed\n", test_n_passed, test_n_failed);
    return test_n_failed ? 1 : 0;
}

bool test_backend_software_only(const char *name)
{
    sleapc_device_info devs[16];
    int n = sleapc_devices_list(devs, 16), mine = 0, software = 0;
    for (int i = 0; i < n && i < 16; i++)
        if (strcmp(devs[i].backend, name) == 0) {
            mine++;
            software += strcmp(devs[i].kind, "software") == 0;
        }
    return mine > 0 && software == mine;
}

bool test_quick(void)
{
    const char *q = getenv("SLEAPC_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

bool test_quick_case(const char *id)
{
    static char seen[64][64];
    static int n_seen;
    if (!test_quick())
        return true;
    const char *end = strstr(id, "__");
    size_t n = end ? (size_t)(end - id) : strlen(id);
    if (n >= sizeof seen[0])
        n = sizeof seen[0] - 1;
    for (int i = 0; i < n_seen; i++)
        if (strlen(seen[i]) == n && strncmp(seen[i], id, n) == 0)
            return false;
    if (n_seen < 64) {
        memcpy(seen[n_seen], id, n);
        seen[n_seen++][n] = '\0';
    }
    return true;
}

void test_require_data(void)
{
    if (!test_data_dir()) {
        printf("skipped: shared data folder not found (set SLEAPC_DATA_DIR)\n");
        exit(77);
    }
    /* A run pinned to a backend this build or machine lacks (ctest's Vulkan
     * runs on a machine without a Vulkan device) is skipped, not failed. */
    const char *pinned = getenv("SLEAPC_BACKEND");
    if (pinned && *pinned && strcmp(pinned, "auto") != 0) {
        bool runs = false;
        for (int i = 0; i < sleapc_backend_count(); i++)
            if (strcmp(sleapc_backend_name(i), pinned) == 0)
                runs = sleapc_backend_available(i);
        if (!runs) {
            printf("skipped: backend %s is not built or cannot run here\n", pinned);
            exit(77);
        }
    }
}

static char cli_output[65536];

static int run_cli(const char *args, const char *redirect)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s' %s %s", SLEAPC_CLI_PATH, args, redirect);
    FILE *p = popen(cmd, "r");
    cli_output[0] = '\0';
    if (!p)
        return -1;
    size_t n = fread(cli_output, 1, sizeof cli_output - 1, p);
    cli_output[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *test_tmp_path(const char *name)
{
    static char path[4][4096];
    static int slot;
    slot = (slot + 1) % 4;
    snprintf(path[slot], sizeof path[slot], "%s/%s", test_tmp_dir(), name);
    return path[slot];
}

cJSON *test_load_json(const char *path)
{
    size_t n = 0;
    char *text = (char *)test_read_file(path, &n);
    cJSON *j = text ? cJSON_ParseWithLength(text, n) : NULL;
    free(text);
    return j;
}

int test_run_cli(const char *args)
{
    return run_cli(args, "2>&1");
}

int test_run_cli_stdout(const char *args)
{
    return run_cli(args, "2>/dev/null");
}

const char *test_cli_output(void)
{
    return cli_output;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int test_list_dir(const char *dir, char **names, int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    return n;
}

double test_rel_l2(const float *got, const float *want, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)got[i] - (double)want[i];
        num += d * d;
        den += (double)want[i] * (double)want[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

void test_setenv(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    sleapc__settings_reload();
}

void test_fill_weights(float *p, int n, unsigned seed, float scale)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = ((float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f) * scale;
    }
}
