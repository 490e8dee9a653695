/* Internals shared by the legacy training_config.json reader's three files:
 * the reading context and the checked JSON accessors (config_legacy_json.c),
 * and the section readers of config_legacy_json_skeleton.c and
 * config_legacy_json_model.c that its entry point calls. */
#ifndef SLEAPC_IO_CONFIG_LEGACY_JSON_IMPL_H
#define SLEAPC_IO_CONFIG_LEGACY_JSON_IMPL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "io/config/model_config.h"

/* Skeletons and class lists are tens of names; the cap keeps the quadratic
 * name lookups of a hostile file cheap. */
#define NAMES_MAX 10000

typedef struct sleapc_cfgjson_reader {
    const char *path;
    sleapc_model_config *cfg;
} sleapc_cfgjson_reader;

enum sleapc_cfgjson_int_rule { INT_POSITIVE, INT_POW2 };

/* ---- config_legacy_json.c: errors and checked accessors (each is described
 * at its definition) ---- */

/* "read config: <file>: <key>: <reason>" */
sleapc_status sleapc__cfgjson_fail_at(const sleapc_cfgjson_reader *r, sleapc_status st,
                                      const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
sleapc_status sleapc__cfgjson_nomem(const sleapc_cfgjson_reader *r);
const char *sleapc__cfgjson_kind_name(const cJSON *v);
const cJSON *sleapc__cfgjson_get(const cJSON *obj, const char *key);
const char *sleapc__cfgjson_key_path(char *buf, size_t cap, const char *parent, const char *key);
sleapc_status sleapc__cfgjson_get_object(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                         const char *parent, const char *key, const cJSON **out);
sleapc_status sleapc__cfgjson_require_object(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                             const char *parent, const char *key,
                                             const cJSON **out);
sleapc_status sleapc__cfgjson_read_int(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                       const char *parent, const char *key,
                                       enum sleapc_cfgjson_int_rule rule, int *out);
sleapc_status sleapc__cfgjson_read_positive_double(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                                   const char *parent, const char *key,
                                                   double *out);
sleapc_status sleapc__cfgjson_read_bool(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                        const char *parent, const char *key, bool *out);
sleapc_status sleapc__cfgjson_read_str(const sleapc_cfgjson_reader *r, const cJSON *obj,
                                       const char *parent, const char *key, const char **out);
sleapc_status sleapc__cfgjson_dup_str(const sleapc_cfgjson_reader *r, const char *s, char **out);
sleapc_status sleapc__cfgjson_new_names(const sleapc_cfgjson_reader *r, int n, char ***out,
                                        int *n_out);
sleapc_status sleapc__cfgjson_new_pairs(const sleapc_cfgjson_reader *r, int n, int (**out)[2],
                                        int *n_out);
int sleapc__cfgjson_find_name(char *const *names, int n, const char *name);
sleapc_status sleapc__cfgjson_check_list(const sleapc_cfgjson_reader *r, const cJSON *v,
                                         const char *kp);
sleapc_status sleapc__cfgjson_read_names(const sleapc_cfgjson_reader *r, const cJSON *list,
                                         const char *kp, char ***out, int *n_out);

/* ---- the sections ---- */

sleapc_status sleapc__cfgjson_read_skeleton(const sleapc_cfgjson_reader *r, const cJSON *root,
                                            sleapc_skeleton_config *sk);
sleapc_status sleapc__cfgjson_read_preprocessing(const sleapc_cfgjson_reader *r, const cJSON *root,
                                                 sleapc_model_config *cfg);
sleapc_status sleapc__cfgjson_read_backbone(const sleapc_cfgjson_reader *r, const cJSON *model,
                                            sleapc_model_config *cfg);
sleapc_status sleapc__cfgjson_read_heads(const sleapc_cfgjson_reader *r, const cJSON *model,
                                         sleapc_model_config *cfg);

#endif
