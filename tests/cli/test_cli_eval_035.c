/* sleapc eval and eval-tracking against sleap-nn 0.3.5's own results
 * (sleapnn-0.3.5/eval): each case's command is run through the CLI with
 * the data paths rewritten, and its JSON compared with sleap-nn's, key by
 * key. Floats within 1e-9 relative (+1e-12): both sides are float64, and
 * only summation order, exp and percentile interpolation may differ in the
 * last bits. Integers, strings, null and NaN exactly; video paths by
 * basename (they depend on where the files are). A case where sleap-nn
 * returned no metrics must write nothing and succeed; the error case must
 * fail with sleap-nn's message and write nothing. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static double worst;

static void compare(const cJSON *want, const cJSON *got, const char *where)
{
    if (cJSON_IsNumber(want) && cJSON_IsNumber(got)) {
        const double a = want->valuedouble, b = got->valuedouble;
        const double tol = 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12;
        CHECK_MSG(fabs(a - b) <= tol, "%s: %.17g, want %.17g", where, b, a);
        if (a != b)
            worst = fmax(worst, fabs(a - b) / fmax(fabs(a), fabs(b)));
        return;
    }
    if (cJSON_IsString(want) && cJSON_IsString(got)) {
        const bool path = strstr(where, "video_paths") != NULL;
        const char *a = path ? base(want->valuestring) : want->valuestring;
        const char *b = path ? base(got->valuestring) : got->valuestring;
        CHECK_MSG(!strcmp(a, b), "%s: \"%s\", want \"%s\"", where, b, a);
        return;
    }
    if (cJSON_IsObject(want)) {
        CHECK_MSG(cJSON_IsObject(got) && cJSON_GetArraySize(got) == cJSON_GetArraySize(want),
                  "%s: %d keys, want %d", where, cJSON_GetArraySize(got), cJSON_GetArraySize(want));
        const cJSON *g = got ? got->child : NULL;
        for (const cJSON *w = want->child; w; w = w->next, g = g ? g->next : NULL) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s.%s", where, w->string);
            CHECK_MSG(g && !strcmp(g->string, w->string), "%s: key %s, want %s (order)", where,
                      g ? g->string : "(none)", w->string);
            compare(w, cJSON_GetObjectItemCaseSensitive(got, w->string), sub);
        }
        return;
    }
    if (cJSON_IsArray(want)) {
        CHECK_MSG(cJSON_IsArray(got) && cJSON_GetArraySize(got) == cJSON_GetArraySize(want),
                  "%s: length %d, want %d", where, cJSON_GetArraySize(got),
                  cJSON_GetArraySize(want));
        if (!cJSON_IsArray(got) || cJSON_GetArraySize(got) != cJSON_GetArraySize(want))
            return;
        int k = 0;
        for (const cJSON *w = want->child, *g = got->child; w; w = w->next, g = g->next, k++) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s[%d]", where, k);
            compare(w, g, sub);
        }
        return;
    }
    CHECK_MSG(
        (cJSON_IsNull(want) && cJSON_IsNull(got)) ||
            (cJSON_IsBool(want) && cJSON_IsBool(got) && cJSON_IsTrue(want) == cJSON_IsTrue(got)),
        "%s: types differ", where);
}

/* The command, quoted, run as sleap-nn ran it from the data folder (video
 * paths, and so the pairing of frames, depend on it): pred.slp is the case
 * folder's, metrics go to out. */
static void build_args(const cJSON *cmd, const char *rel, const char *out, char *args, size_t n)
{
    size_t len =
        (size_t)snprintf(args, n, "%s -q -s '%s'", cJSON_GetArrayItem(cmd, 1)->valuestring, out);
    for (int k = 2; k < cJSON_GetArraySize(cmd); k++) {
        const char *a = cJSON_GetArrayItem(cmd, k)->valuestring;
        const char *prev = cJSON_GetArrayItem(cmd, k - 1)->valuestring;
        if (!strcmp(a, "-s") || !strcmp(prev, "-s"))
            continue;
        char path[1024];
        if (!strcmp(prev, "-p") && !strcmp(a, "pred.slp")) {
            snprintf(path, sizeof path, "%s/pred.slp", rel);
            a = path;
        }
        len += (size_t)snprintf(args + len, n - len, " '%s'", a);
    }
}

static void run_case(const char *root, const char *name)
{
    char dir[1024], path[1200], out[1200], args[8192];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *opts = test_load_json(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *exp = test_load_json(path);
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    cJSON *metrics = test_load_json(path);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(opts, "command");
    CHECK_MSG(cJSON_IsArray(cmd) && (exp || metrics), "%s: options or results missing", name);
    if (!cJSON_IsArray(cmd) || !(exp || metrics))
        goto done;
    snprintf(out, sizeof out, "%s/%s.json", test_tmp_dir(), name);
    remove(out);
    char rel[600];
    snprintf(rel, sizeof rel, "sleapnn-0.3.5/eval/%s", name);
    build_args(cmd, rel, out, args, sizeof args);
    const int rc = test_run_cli(args);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(exp, "error");
    const cJSON *want = metrics ? metrics : cJSON_GetObjectItemCaseSensitive(exp, "metrics");
    FILE *f = fopen(out, "rb");
    if (cJSON_IsObject(err)) {
        const char *msg = cJSON_GetObjectItemCaseSensitive(err, "message")->valuestring;
        CHECK_MSG(rc != 0 && strstr(test_cli_output(), msg), "%s: rc %d, want \"%s\": %s", name, rc,
                  msg, test_cli_output());
        CHECK_MSG(!f, "%s: wrote %s", name, out);
    } else if (cJSON_IsNull(want)) {
        CHECK_MSG(rc == 0, "%s: rc %d: %s", name, rc, test_cli_output());
        CHECK_MSG(!f, "%s: sleap-nn returned no metrics, sleapc wrote %s", name, out);
    } else {
        CHECK_MSG(rc == 0 && f, "%s: rc %d: %s", name, rc, test_cli_output());
        cJSON *got = f ? test_load_json(out) : NULL;
        worst = 0;
        if (got)
            compare(want, got, name);
        printf("%s: largest relative difference %.3g\n", name, worst);
        cJSON_Delete(got);
    }
    if (f)
        fclose(f);
done:
    cJSON_Delete(opts);
    cJSON_Delete(exp);
    cJSON_Delete(metrics);
}

int main(void)
{
    test_require_data();
    char root[1024];
    snprintf(root, sizeof root, "%s", test_data_path("sleapnn-0.3.5/eval"));
    char *names[64];
    const int n = test_list_dir(root, names, 64);
    if (n <= 0) {
        printf("no sleap-nn 0.3.5 eval cases in %s\n", root);
        return 77;
    }
    if (chdir(test_data_dir())) {
        printf("cannot enter %s\n", test_data_dir());
        return 1;
    }
    int cases = 0;
    for (int k = 0; k < n; k++) {
        if (!strncmp(names[k], "eval__", 6) || !strncmp(names[k], "evaltracking__", 14)) {
            run_case(root, names[k]);
            cases++;
        }
        free(names[k]);
    }
    CHECK_MSG(cases == 7, "%d cases, want 7", cases);
    return test_finish();
}
