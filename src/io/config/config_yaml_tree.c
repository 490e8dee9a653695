#include "io/config/config_yaml_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

/* Training configs are a few KiB. libyaml's document tree takes up to ~250
 * bytes per input byte (a line of "- - - ..."), so a larger file would only
 * let a hostile one take memory. */
#define YAML_FILE_MAX ((size_t)1 << 20)
#define YAML_FLOW_DEPTH_MAX 256

sleapc_status sleapc__yaml_fail(const sleapc_yaml_tree *t, const sleapc_yaml_ref *r,
                                sleapc_status st, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (r && r->key[0])
        return sleapc__fail(st, "%s: %s: %s: %s", t->action, t->path, r->key, reason);
    return sleapc__fail(st, "%s: %s: %s", t->action, t->path, reason);
}

static sleapc_status read_whole_file(sleapc_yaml_tree *t, unsigned char **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    int fd = open(t->path, O_RDONLY);
    if (fd < 0)
        return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_IO, "%s", strerror(errno));
    sleapc_status st = SLEAPC_OK;
    unsigned char *buf = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_IO, "%s", strerror(errno));
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_IO, "is a directory");
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_IO, "not a regular file");
        goto done;
    }
    if (sb.st_size < 0 || (uintmax_t)sb.st_size > YAML_FILE_MAX) {
        st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT,
                               "larger than 1 MiB: not a training config");
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    buf = sleapc__malloc(n + 1);
    if (!buf) {
        st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_IO, "%s", strerror(errno));
            goto done;
        }
        if (k == 0) {
            st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_IO, "file shrank while being read");
            goto done;
        }
        got += (size_t)k;
    }
    buf[n] = '\0';
    *out = buf;
    *n_out = n;
    buf = NULL;
done:
    sleapc__free(buf);
    close(fd);
    return st;
}

/* libyaml's parser takes time quadratic in the depth of flow collections
 * ([[[[...), so a small hostile file could stall it for minutes. Counting
 * brackets without regard to quoting may refuse a file whose strings hold
 * hundreds of unmatched brackets; no training config does. */
static bool flow_depth_ok(const unsigned char *buf, size_t n)
{
    long depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '[' || buf[i] == '{') {
            if (++depth > YAML_FLOW_DEPTH_MAX)
                return false;
        } else if ((buf[i] == ']' || buf[i] == '}') && depth > 0) {
            depth--;
        }
    }
    return true;
}

sleapc_status sleapc__yaml_tree_load(sleapc_yaml_tree *t, const char *action, const char *path)
{
    memset(t, 0, sizeof *t);
    t->action = action;
    t->path = path;
    unsigned char *buf = NULL;
    size_t n = 0;
    sleapc_status st = read_whole_file(t, &buf, &n);
    if (st)
        return st;

    if (!flow_depth_ok(buf, n)) {
        sleapc__free(buf);
        return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT, "brackets nested over %d deep",
                                 YAML_FLOW_DEPTH_MAX);
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        sleapc__free(buf);
        return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_NOMEM, "out of memory");
    }
    yaml_parser_set_input_string(&parser, buf, n);
    /* libyaml deletes the document itself when loading fails. */
    if (!yaml_parser_load(&parser, &t->doc)) {
        if (parser.error == YAML_MEMORY_ERROR) {
            st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_NOMEM, "out of memory");
        } else if (parser.error == YAML_READER_ERROR) {
            /* Bad encoding: libyaml knows the byte offset, not a line. */
            st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT, "YAML error at byte %zu: %s",
                                   parser.problem_offset,
                                   parser.problem ? parser.problem : "unreadable text");
        } else {
            const char *problem = parser.problem ? parser.problem : "unknown problem";
            if (parser.context)
                st = sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT,
                                       "YAML syntax error at line %zu, column %zu: %s %s",
                                       parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                                       problem, parser.context);
            else
                st = sleapc__yaml_fail(
                    t, NULL, SLEAPC_ERR_FORMAT, "YAML syntax error at line %zu, column %zu: %s",
                    parser.problem_mark.line + 1, parser.problem_mark.column + 1, problem);
        }
        yaml_parser_delete(&parser);
        sleapc__free(buf);
        return st;
    }
    t->loaded = true;
    yaml_parser_delete(&parser);
    sleapc__free(buf);
    if (!yaml_document_get_root_node(&t->doc)) {
        sleapc__yaml_tree_free(t);
        return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT, "empty file");
    }
    return SLEAPC_OK;
}

void sleapc__yaml_tree_free(sleapc_yaml_tree *t)
{
    if (!t)
        return;
    if (t->loaded)
        yaml_document_delete(&t->doc);
    t->loaded = false;
}

sleapc_yaml_ref sleapc__yaml_root(sleapc_yaml_tree *t)
{
    sleapc_yaml_ref r;
    memset(&r, 0, sizeof r);
    r.node = t->loaded ? yaml_document_get_root_node(&t->doc) : NULL;
    return r;
}

static const char *scalar_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static bool is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

bool sleapc__yaml_is_null(const sleapc_yaml_ref *r)
{
    const yaml_node_t *n = r->node;
    if (!n)
        return true;
    if (n->type != YAML_SCALAR_NODE)
        return false;
    if (n->tag && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
        return true;
    if (!is_plain(n))
        return false;
    /* The YAML core schema's null spellings, as PyYAML resolves them. */
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (strcmp(scalar_text(n), nulls[i]) == 0)
            return true;
    return false;
}

bool sleapc__yaml_is_map(const sleapc_yaml_ref *r)
{
    return r->node && r->node->type == YAML_MAPPING_NODE;
}

bool sleapc__yaml_is_seq(const sleapc_yaml_ref *r)
{
    return r->node && r->node->type == YAML_SEQUENCE_NODE;
}

/* dst = a + sep + b, cut to fit: keys only serve messages. */
static void key_join(char *dst, const char *a, const char *sep, const char *b, size_t b_len)
{
    int k = snprintf(dst, SLEAPC_YAML_KEY_CAP, "%s%s%.*s", a, a[0] ? sep : "", (int)b_len, b);
    if (k < 0)
        dst[0] = '\0';
}

/* A short printable rendering of a value for "got ..." in messages. */
static void describe(const yaml_node_t *n, char *buf, size_t cap)
{
    if (!n) {
        snprintf(buf, cap, "nothing");
        return;
    }
    if (n->type == YAML_MAPPING_NODE) {
        snprintf(buf, cap, "a mapping");
        return;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        snprintf(buf, cap, "a list");
        return;
    }
    char text[48];
    size_t len = n->data.scalar.length, j = 0;
    for (size_t i = 0; i < len && j + 4 < sizeof text; i++) {
        unsigned char c = n->data.scalar.value[i];
        text[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (j < len) {
        text[j++] = '.';
        text[j++] = '.';
        text[j++] = '.';
    }
    text[j] = '\0';
    snprintf(buf, cap, "'%s'%s", text, is_plain(n) ? "" : " (quoted)");
}

static sleapc_status expected(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, const char *what)
{
    char got[64];
    describe(r->node, got, sizeof got);
    return sleapc__yaml_fail(t, r, SLEAPC_ERR_FORMAT, "expected %s, got %s", what, got);
}

/* One mapping step: the value under key name (length len) of map. */
static sleapc_status get_one(sleapc_yaml_tree *t, const sleapc_yaml_ref *map, const char *name,
                             size_t len, sleapc_yaml_ref *out)
{
    sleapc_yaml_ref r;
    r.node = NULL;
    key_join(r.key, map->key, ".", name, len);
    if (sleapc__yaml_is_null(map)) {
        *out = r;
        return SLEAPC_OK;
    }
    if (!sleapc__yaml_is_map(map))
        return expected(t, map, "a mapping");
    yaml_node_pair_t *p = map->node->data.mapping.pairs.start;
    yaml_node_pair_t *end = map->node->data.mapping.pairs.top;
    for (; p < end; p++) {
        yaml_node_t *k = yaml_document_get_node(&t->doc, p->key);
        if (!k || k->type != YAML_SCALAR_NODE || k->data.scalar.length != len ||
            memcmp(k->data.scalar.value, name, len) != 0)
            continue;
        if (r.node)
            return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "key written twice");
        r.node = yaml_document_get_node(&t->doc, p->value);
    }
    *out = r;
    return SLEAPC_OK;
}

sleapc_status sleapc__yaml_get(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                               sleapc_yaml_ref *out)
{
    sleapc_yaml_ref cur = *parent;
    while (rel && *rel) {
        const char *dot = strchr(rel, '.');
        size_t len = dot ? (size_t)(dot - rel) : strlen(rel);
        sleapc_yaml_ref next;
        sleapc_status st = get_one(t, &cur, rel, len, &next);
        if (st)
            return st;
        cur = next;
        rel = dot ? dot + 1 : NULL;
    }
    *out = cur;
    return SLEAPC_OK;
}

sleapc_status sleapc__yaml_require(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                   const char *rel, sleapc_yaml_ref *out)
{
    sleapc_status st = sleapc__yaml_get(t, parent, rel, out);
    if (st)
        return st;
    if (sleapc__yaml_is_null(out))
        return sleapc__yaml_fail(t, NULL, SLEAPC_ERR_FORMAT, "missing key %s", out->key);
    return SLEAPC_OK;
}

int sleapc__yaml_seq_len(const sleapc_yaml_ref *r)
{
    if (!sleapc__yaml_is_seq(r))
        return 0;
    ptrdiff_t n = r->node->data.sequence.items.top - r->node->data.sequence.items.start;
    return n > INT_MAX ? INT_MAX : (int)n;
}

sleapc_yaml_ref sleapc__yaml_seq_item(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, int i)
{
    sleapc_yaml_ref item;
    item.node = NULL;
    if (snprintf(item.key, sizeof item.key, "%s[%d]", r->key, i) < 0)
        item.key[0] = '\0';
    if (i >= 0 && i < sleapc__yaml_seq_len(r))
        item.node = yaml_document_get_node(&t->doc, r->node->data.sequence.items.start[i]);
    return item;
}

int sleapc__yaml_map_len(const sleapc_yaml_ref *r)
{
    if (!sleapc__yaml_is_map(r))
        return 0;
    ptrdiff_t n = r->node->data.mapping.pairs.top - r->node->data.mapping.pairs.start;
    return n > INT_MAX ? INT_MAX : (int)n;
}

sleapc_yaml_ref sleapc__yaml_map_entry(sleapc_yaml_tree *t, const sleapc_yaml_ref *r, int i,
                                       const char **name)
{
    sleapc_yaml_ref e;
    e.node = NULL;
    *name = NULL;
    if (i < 0 || i >= sleapc__yaml_map_len(r)) {
        key_join(e.key, r->key, ".", "?", 1);
        return e;
    }
    const yaml_node_pair_t *p = &r->node->data.mapping.pairs.start[i];
    yaml_node_t *k = yaml_document_get_node(&t->doc, p->key);
    if (k && k->type == YAML_SCALAR_NODE)
        *name = scalar_text(k);
    const char *shown = *name ? *name : "?";
    key_join(e.key, r->key, ".", shown, strlen(shown));
    e.node = yaml_document_get_node(&t->doc, p->value);
    return e;
}

/* [+-]?digits: PyYAML's decimal int (no 0x/0o/underscores: not written by sleap-nn). */
static bool parse_int_text(const char *s, long long *out)
{
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!*p)
        return false;
    long long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        int d = *p - '0';
        if (v > (LLONG_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? -v : v;
    return true;
}

/* Decimal number syntax only, so that strtod's extras (hex, inf, nan) cannot slip in. */
static bool is_decimal_text(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    int n_digits = 0;
    while (*p >= '0' && *p <= '9') {
        p++;
        n_digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            n_digits++;
        }
    }
    if (n_digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* strtod in the "C" locale: the caller's LC_NUMERIC may use a decimal comma. */
static double strtod_c(const char *s)
{
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c == (locale_t)0)
        return strtod(s, NULL);
    locale_t old = uselocale(c);
    double v = strtod(s, NULL);
    uselocale(old);
    freelocale(c);
    return v;
}

sleapc_status sleapc__yaml_int(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                               int dflt, int *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (st)
        return st;
    if (sleapc__yaml_is_null(&r)) {
        *out = dflt;
        return SLEAPC_OK;
    }
    long long v;
    if (!is_plain(r.node) || !parse_int_text(scalar_text(r.node), &v))
        return expected(t, &r, "an integer");
    if (v < INT_MIN || v > INT_MAX)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "integer %s out of range",
                                 scalar_text(r.node));
    *out = (int)v;
    return SLEAPC_OK;
}

sleapc_status sleapc__yaml_double(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent,
                                  const char *rel, double dflt, double *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (st)
        return st;
    if (sleapc__yaml_is_null(&r)) {
        *out = dflt;
        return SLEAPC_OK;
    }
    if (!is_plain(r.node) || !is_decimal_text(scalar_text(r.node)))
        return expected(t, &r, "a number");
    double v = strtod_c(scalar_text(r.node));
    if (!isfinite(v))
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "number %s out of range",
                                 scalar_text(r.node));
    *out = v;
    return SLEAPC_OK;
}

sleapc_status sleapc__yaml_bool(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                                bool dflt, bool *out)
{
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (st)
        return st;
    if (sleapc__yaml_is_null(&r)) {
        *out = dflt;
        return SLEAPC_OK;
    }
    /* YAML 1.1 booleans, as PyYAML (and so sleap-nn) reads them. */
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    if (is_plain(r.node)) {
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
            if (strcmp(scalar_text(r.node), yes[i]) == 0) {
                *out = true;
                return SLEAPC_OK;
            }
            if (strcmp(scalar_text(r.node), no[i]) == 0) {
                *out = false;
                return SLEAPC_OK;
            }
        }
    }
    return expected(t, &r, "true or false");
}

sleapc_status sleapc__yaml_str(sleapc_yaml_tree *t, const sleapc_yaml_ref *parent, const char *rel,
                               const char **out)
{
    *out = NULL;
    sleapc_yaml_ref r;
    sleapc_status st = sleapc__yaml_get(t, parent, rel, &r);
    if (st)
        return st;
    if (sleapc__yaml_is_null(&r))
        return SLEAPC_OK;
    if (r.node->type != YAML_SCALAR_NODE)
        return expected(t, &r, "a string");
    /* A NUL inside the value would silently cut the name short. */
    if (strlen(scalar_text(r.node)) != r.node->data.scalar.length)
        return sleapc__yaml_fail(t, &r, SLEAPC_ERR_FORMAT, "string contains a NUL character");
    *out = scalar_text(r.node);
    return SLEAPC_OK;
}
