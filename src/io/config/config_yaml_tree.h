/* A YAML file as a tree (libyaml's document API) with lookups that carry their
 * dotted key path, so that every failure can name the file and the key:
 * "read config: path/training_config.yaml: model_config.backbone_config.unet.filters:
 * expected an integer, got 'abc'". Private to src/io/config. */
#ifndef SLEAPC_IO_CONFIG_CONFIG_YAML_TREE_H
#define SLEAPC_IO_CONFIG_CONFIG_YAML_TREE_H

#include <stdbool.h>

#include <yaml.h>

#include "sleapc/sleapc.h"

#define SLEAPC_YAML_KEY_CAP 192

typedef struct sleapc_yaml_tree {
    const char *action; /* borrowed; "read config", first part of every message */
    const char *path;   /* borrowed; the file, second part of every message */
    yaml_document_t doc;
    bool loaded; /* doc must be deleted */
} sleapc_yaml_tree;

/* A node found by key. node is NULL when the key is absent. key is the dotted
 * path from the root ("data_config.skeletons[0].nodes"), cut to fit. */
typedef struct sleapc_yaml_ref {
    yaml_node_t *node;
    char key[SLEAPC_YAML_KEY_CAP];
} sleapc_yaml_ref;

/* Read and parse the first document of path. action and path are kept
 * (borrowed) for messages. Returns SLEAPC_ERR_IO (missing, unreadable, a
 * directory), SLEAPC_ERR_FORMAT (syntax error with line/column, empty file,
 * over 1 MiB, brackets nested over 256 deep) or SLEAPC_ERR_NOMEM. On failure
 * t needs no freeing, but sleapc__yaml_tree_free(t) is harmless. */
sleapc_status sleapc__yaml_tree_load(sleapc_yaml_tree *t, const char *action, const char *path);

/* Release the document. Accepts a zeroed or failed tree. */
void sleapc__yaml_tree_free(sleapc_yaml_tree *t);

/* The root node, key "". */
sleapc_yaml_ref sleapc__yaml_root(sleapc_yaml_tree *t);

/* Fail with st and the message "action: path: key: <fmt>" (no key part when
 * r is NULL or its key is empty). Returns st. */
sleapc_status sleapc__yaml_fail(const sleapc_yaml_tree *t, const sleapc_yaml_ref *r,
                                sleapc_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* True when r is absent or an explicit null (~, null, empty value). */
bool sleapc__yaml_is_null(const sleapc_yaml_ref *r);
bool sleapc__yaml_is_map(const sleapc_yaml_ref *r);
bool sleapc__yaml_is_seq(const sleapc_yaml_ref *r);

/* Follow a dotted relative key ("backbone_config.unet") from parent. A step
 * through an absent or null value gives an absent *out; a step through a list
 * or a plain value, or a key written twice, is SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__yaml_get(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                               sleapc_yaml_ref *out);

/* As sleapc__yaml_get, but an absent or null result is SLEAPC_ERR_FORMAT
 * "missing key <key>". */
sleapc_status sleapc__yaml_require(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                   const char *rel, sleapc_yaml_ref *out);

/* Items of a list (0 when r is not a list) and item i, key "<key>[i]". */
int sleapc__yaml_seq_len(const sleapc_yaml_ref *r);
sleapc_yaml_ref sleapc__yaml_seq_item(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, int i);

/* Entries of a mapping in file order (0 when r is not a mapping); entry i's
 * value, key "<key>.<name>", and its name (NULL when the key is not a plain
 * value). */
int sleapc__yaml_map_len(const sleapc_yaml_ref *r);
sleapc_yaml_ref sleapc__yaml_map_entry(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, int i,
                                       const char **name);

/* Typed values of parent.rel (rel NULL: parent itself). Absent or null gives
 * dflt. Anything else that is not the type (quoted numbers included) is
 * SLEAPC_ERR_FORMAT "expected an integer, got 'abc'". Integers must fit an
 * int; numbers must be finite. Booleans follow YAML 1.1 as PyYAML reads it
 * (true/false, yes/no, on/off). */
sleapc_status sleapc__yaml_int(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                               int dflt, int *out);
sleapc_status sleapc__yaml_double(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                  const char *rel, double dflt, double *out);
sleapc_status sleapc__yaml_bool(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                                bool dflt, bool *out);

/* Text of a plain or quoted value; *out is NULL when absent or null, and
 * borrowed from the tree otherwise. A list or mapping is SLEAPC_ERR_FORMAT. */
sleapc_status sleapc__yaml_str(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                               const char **out);

/* backbone_config.convnext (swint false) or .swint at bb into *v, with
 * sleap-nn's defaults for what is absent (config_yaml_vit.c). */
struct sleapc_vit_config;
sleapc_status sleapc__config_read_vit(sleapc_yaml_tree *t, const sleapc_yaml_ref *bb, bool swint,
                                      struct sleapc_vit_config *v);

#endif
