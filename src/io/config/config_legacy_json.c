/* Legacy SLEAP 1.x training_config.json -> sleapc_model_config. The mapping
 * follows sleap-nn's TrainingJobConfig.load_sleap_config (config/model_config.py
 * model_mapper, config/data_config.py data_mapper); the skeleton decoding
 * follows sleap-io's SkeletonDecoder (formats.md C.6).
 *
 * This file holds the checked JSON accessors both halves use and the entry
 * point; the skeleton is decoded in config_legacy_json_skeleton.c and the
 * model, data and head sections in config_legacy_json_model.c. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/config/config_legacy_json_impl.h"
#include "io/config/model_config.h"

/* A training config is tens of KB; the cap only stops a hostile file from
 * making us read gigabytes. */
#define JSON_MAX_BYTES (64u << 20)

/* "read config: <file>: <key>: <reason>" */
sleapc_status sleapc__cfgjson_fail_at(const sleapc_cfgjson_reader *r, sleapc_status st,
                                      const char *key, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return sleapc__fail(st, "read config: %s: %s: %s", r->path, key, why);
}

sleapc_status sleapc__cfgjson_nomem(const sleapc_cfgjson_reader *r)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read config: %s: out of memory", r->path);
}

const char *sleapc__cfgjson_kind_name(const cJSON *v)
{
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "a list";
    if (cJSON_IsObject(v))
        return "an object";
    return "null";
}

/* obj[key], or NULL when absent or null. obj may be NULL. */
const cJSON *sleapc__cfgjson_get(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* The "a.b" spelling of a key for messages. */
const char *sleapc__cfgjson_key_path(char *buf, size_t cap, const char *parent, const char *key)
{
    if (parent && parent[0])
        snprintf(buf, cap, "%s.%s", parent, key);
    else
        snprintf(buf, cap, "%s", key);
    return buf;
}

/* An optional object member: absent/null -> *out NULL. */
sleapc_status sleapc__cfgjson_get_object(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                         const char *parent, const char *key, const cJSON **out)
{
    char kp[256];
    *out = sleapc__cfgjson_get(obj, key);
    if (*out && !cJSON_IsObject(*out))
        return sleapc__cfgjson_fail_at(
            r, SLEAPC_ERR_FORMAT, sleapc__cfgjson_key_path(kp, sizeof kp, parent, key),
            "expected an object, got %s", sleapc__cfgjson_kind_name(*out));
    return SLEAPC_OK;
}

sleapc_status sleapc__cfgjson_require_object(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                             const char *parent, const char *key, const cJSON **out)
{
    char kp[256];
    sleapc_status st = sleapc__cfgjson_get_object(r, obj, parent, key, out);
    if (!st && !*out)
        return sleapc__cfgjson_fail_at(
            r, SLEAPC_ERR_FORMAT, sleapc__cfgjson_key_path(kp, sizeof kp, parent, key), "missing");
    return st;
}

/* obj[key] as an int (absent or null: *out unchanged). JSON numbers are
 * doubles; an integer must be integral and in range. */
sleapc_status sleapc__cfgjson_read_int(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                       const char *parent, const char *key,
                                       enum sleapc_cfgjson_int_rule rule, int *out)
{
    char kp[256];
    const cJSON *v = sleapc__cfgjson_get(obj, key);
    if (!v)
        return SLEAPC_OK;
    sleapc__cfgjson_key_path(kp, sizeof kp, parent, key);
    double d = v->valuedouble;
    if (!cJSON_IsNumber(v) || d != floor(d) || !(fabs(d) < 1e9))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected an integer, got %s",
                                       cJSON_IsNumber(v) ? "a fraction or a huge number"
                                                         : sleapc__cfgjson_kind_name(v));
    int i = (int)d;
    if (i <= 0)
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "must be positive, got %d", i);
    if (rule == INT_POW2 && (i & (i - 1)) != 0)
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "must be a power of two, got %d",
                                       i);
    *out = i;
    return SLEAPC_OK;
}

sleapc_status sleapc__cfgjson_read_positive_double(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                                   const char *parent, const char *key, double *out)
{
    char kp[256];
    const cJSON *v = sleapc__cfgjson_get(obj, key);
    if (!v)
        return SLEAPC_OK;
    sleapc__cfgjson_key_path(kp, sizeof kp, parent, key);
    if (!cJSON_IsNumber(v))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected a number, got %s",
                                       sleapc__cfgjson_kind_name(v));
    if (!(v->valuedouble > 0.0) || !isfinite(v->valuedouble))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "must be positive, got %g",
                                       v->valuedouble);
    *out = v->valuedouble;
    return SLEAPC_OK;
}

sleapc_status sleapc__cfgjson_read_bool(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                        const char *parent, const char *key, bool *out)
{
    char kp[256];
    const cJSON *v = sleapc__cfgjson_get(obj, key);
    if (!v)
        return SLEAPC_OK;
    if (!cJSON_IsBool(v))
        return sleapc__cfgjson_fail_at(
            r, SLEAPC_ERR_FORMAT, sleapc__cfgjson_key_path(kp, sizeof kp, parent, key),
            "expected true or false, got %s", sleapc__cfgjson_kind_name(v));
    *out = cJSON_IsTrue(v);
    return SLEAPC_OK;
}

/* obj[key] as a string; absent or null -> *out NULL. */
sleapc_status sleapc__cfgjson_read_str(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                       const char *parent, const char *key, const char **out)
{
    char kp[256];
    const cJSON *v = sleapc__cfgjson_get(obj, key);
    *out = NULL;
    if (!v)
        return SLEAPC_OK;
    if (!cJSON_IsString(v))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT,
                                       sleapc__cfgjson_key_path(kp, sizeof kp, parent, key),
                                       "expected a string, got %s", sleapc__cfgjson_kind_name(v));
    *out = v->valuestring;
    return SLEAPC_OK;
}

sleapc_status sleapc__cfgjson_dup_str(const sleapc_cfgjson_reader *r, const char *s, char **out)
{
    *out = sleapc__strdup(s);
    return *out ? SLEAPC_OK : sleapc__cfgjson_nomem(r);
}

/* Zeroed arrays; *n_out is set only with the array so that
 * sleapc__model_config_clear can always free what is there. */
sleapc_status sleapc__cfgjson_new_names(const sleapc_cfgjson_reader *r, int n, char ***out,
                                        int *n_out)
{
    *out = sleapc__calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return sleapc__cfgjson_nomem(r);
    *n_out = n;
    return SLEAPC_OK;
}

sleapc_status sleapc__cfgjson_new_pairs(const sleapc_cfgjson_reader *r, int n, int (**out)[2],
                                        int *n_out)
{
    *out = sleapc__calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out)
        return sleapc__cfgjson_nomem(r);
    *n_out = n;
    return SLEAPC_OK;
}

int sleapc__cfgjson_find_name(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

sleapc_status sleapc__cfgjson_check_list(const sleapc_cfgjson_reader *r, const cJSON *v,
                                         const char *kp)
{
    if (!cJSON_IsArray(v))
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "expected a list, got %s",
                                       sleapc__cfgjson_kind_name(v));
    if (cJSON_GetArraySize(v) > NAMES_MAX)
        return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "more than %d entries", NAMES_MAX);
    return SLEAPC_OK;
}

/* A list of distinct strings into an owned array. */
sleapc_status sleapc__cfgjson_read_names(const sleapc_cfgjson_reader *r, const cJSON *list,
                                         const char *kp, char ***out, int *n_out)
{
    sleapc_status st = sleapc__cfgjson_check_list(r, list, kp);
    int n = cJSON_GetArraySize(list), i = 0;
    if (!st)
        st = sleapc__cfgjson_new_names(r, n, out, n_out);
    const cJSON *item;
    cJSON_ArrayForEach(item, list)
    {
        if (st)
            break;
        if (!cJSON_IsString(item))
            return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp,
                                           "entry %d: expected a string, got %s", i,
                                           sleapc__cfgjson_kind_name(item));
        if (sleapc__cfgjson_find_name(*out, i, item->valuestring) >= 0)
            return sleapc__cfgjson_fail_at(r, SLEAPC_ERR_FORMAT, kp, "'%s' listed twice",
                                           item->valuestring);
        st = sleapc__cfgjson_dup_str(r, item->valuestring, &(*out)[i++]);
    }
    return st;
}

static sleapc_status read_config(const sleapc_cfgjson_reader *r, const cJSON *root,
                                 sleapc_model_config *cfg)
{
    const cJSON *model;
    if (!cJSON_IsObject(root))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read config: %s: expected a JSON object at the top",
                            r->path);
    sleapc_status st = sleapc__cfgjson_require_object(r, root, NULL, "model", &model);
    if (!st)
        st = sleapc__cfgjson_read_backbone(r, model, cfg);
    if (!st)
        st = sleapc__cfgjson_read_preprocessing(r, root, cfg);
    if (!st)
        st = sleapc__cfgjson_read_skeleton(r, root, &cfg->skeleton);
    if (!st)
        st = sleapc__cfgjson_read_heads(r, model, cfg);
    return st;
}

/* The whole file as a NUL-terminated buffer. */
static sleapc_status read_text(const char *path, char **out, size_t *n_out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "read config: %s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = sleapc__malloc(cap);
    sleapc_status st = SLEAPC_OK;
    if (!buf)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read config: %s: out of memory", path);
    while (!st) {
        if (n + 1 == cap) {
            if (cap >= JSON_MAX_BYTES) {
                st = sleapc__fail(SLEAPC_ERR_FORMAT, "read config: %s: larger than %u MB", path,
                                  JSON_MAX_BYTES >> 20);
                break;
            }
            char *p = sleapc__realloc(buf, cap * 2);
            if (!p) {
                st = sleapc__fail(SLEAPC_ERR_NOMEM, "read config: %s: out of memory", path);
                break;
            }
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                st = sleapc__fail(SLEAPC_ERR_IO, "read config: %s: read error", path);
            break;
        }
    }
    fclose(f);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    buf[n] = '\0';
    *out = buf;
    *n_out = n;
    return SLEAPC_OK;
}

/* 1-based line of byte offset `at` in text. */
static int line_of(const char *text, size_t at)
{
    int line = 1;
    for (size_t i = 0; i < at && text[i]; i++)
        line += text[i] == '\n';
    return line;
}

sleapc_status sleapc__config_read_legacy_json(const char *path, sleapc_model_config *cfg)
{
    if (!cfg)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read config: cfg is required");
    sleapc__model_config_defaults(cfg);
    if (!path)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read config: path is required");
    char *text = NULL;
    size_t n = 0;
    sleapc_status st = read_text(path, &text, &n);
    if (st) {
        sleapc__model_config_clear(cfg);
        return st;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, n + 1, &end, true);
    sleapc_cfgjson_reader r = {.path = path, .cfg = cfg};
    if (!root) {
        size_t at = end && end >= text && end <= text + n ? (size_t)(end - text) : 0;
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read config: %s: not valid JSON (line %d, byte %zu)",
                          path, line_of(text, at), at);
    }
    cfg->legacy = true;
    if (!st)
        st = sleapc__cfgjson_dup_str(&r, path, &cfg->source_path);
    if (!st)
        st = read_config(&r, root, cfg);
    cJSON_Delete(root);
    sleapc__free(text);
    if (st)
        sleapc__model_config_clear(cfg);
    return st;
}
