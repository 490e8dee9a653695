/* JSON text in Python's json.dumps spelling (see slp_json.h). */
#include "io/slp/slp_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

static bool reserve(sleapc_json_text *t, size_t extra)
{
    if (t->failed)
        return false;
    if (t->n + extra + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->n + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            t->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = sleapc__realloc(t->s, cap);
    if (!p) {
        t->failed = true;
        return false;
    }
    t->s = p;
    t->cap = cap;
    return true;
}

static void put_bytes(sleapc_json_text *t, const char *b, size_t n)
{
    if (!reserve(t, n))
        return;
    memcpy(t->s + t->n, b, n);
    t->n += n;
    t->s[t->n] = '\0';
}

void sleapc__json_put(sleapc_json_text *t, const char *raw)
{
    put_bytes(t, raw, strlen(raw));
}

void sleapc__json_putf(sleapc_json_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
        t->failed = true;
        return;
    }
    if (!reserve(t, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

/* Decode one UTF-8 sequence at s (n bytes left); returns its length and
 * sets *cp, or returns 1 for a byte that starts no valid sequence, with *cp
 * the lone surrogate U+DC00 + byte: Python's "surrogateescape", which is how
 * Python (sleap-io) holds a file name that is not UTF-8, so json.loads and
 * open() there find the file again, and sleapc's reader turns it back into
 * the byte (sleapc__json_surrogate_bytes). */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned long *cp)
{
    unsigned char c = s[0];
    size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (len == 0 || len > n) {
        *cp = 0xdc00 + c;
        return 1;
    }
    unsigned long v = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *cp = 0xdc00 + c;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are malformed. */
    static const unsigned long min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
        *cp = 0xdc00 + c;
        return 1;
    }
    *cp = v;
    return len;
}

static void put_codepoint_escape(sleapc_json_text *t, unsigned long cp)
{
    if (cp >= 0x10000) {
        cp -= 0x10000;
        sleapc__json_putf(t, "\\u%04lx\\u%04lx", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
    } else {
        sleapc__json_putf(t, "\\u%04lx", cp);
    }
}

/* Escape the bytes of a string body (no quotes). */
static void put_escaped(sleapc_json_text *t, const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        const char *esc = NULL;
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        default:
            break;
        }
        if (esc) {
            sleapc__json_put(t, esc);
            i++;
        } else if (c < 0x20) {
            sleapc__json_putf(t, "\\u%04x", c);
            i++;
        } else if (c < 0x80) {
            size_t j = i;
            while (j < n && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\')
                j++;
            put_bytes(t, (const char *)s + i, j - i);
            i = j;
        } else {
            unsigned long cp;
            i += utf8_decode(s + i, n - i, &cp);
            put_codepoint_escape(t, cp);
        }
    }
}

void sleapc__json_put_string(sleapc_json_text *t, const char *s)
{
    if (!s) {
        sleapc__json_put(t, "null");
        return;
    }
    sleapc__json_put(t, "\"");
    put_escaped(t, (const unsigned char *)s, strlen(s));
    sleapc__json_put(t, "\"");
}

void sleapc__json_put_double(sleapc_json_text *t, double v)
{
    if (isnan(v)) {
        sleapc__json_put(t, "NaN");
        return;
    }
    if (isinf(v)) {
        sleapc__json_put(t, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    /* Python's repr: the shortest text that reads back as the same double,
     * with ".0" on integral values and exponents from 1e16 and below 1e-4. */
    char buf[40];
    if (floor(v) == v && fabs(v) < 1e16) {
        sleapc__json_putf(t, "%.1f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".e")) {
        sleapc__json_putf(t, "%s.0", buf);
        return;
    }
    sleapc__json_put(t, buf);
}

sleapc_status sleapc__json_status(const sleapc_json_text *t, const char *what)
{
    if (t->failed)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "format %s: out of memory", what);
    return SLEAPC_OK;
}

char *sleapc__json_take(sleapc_json_text *t)
{
    char *s = t->s;
    memset(t, 0, sizeof *t);
    return s;
}

void sleapc__json_free(sleapc_json_text *t)
{
    sleapc__free(t->s);
    memset(t, 0, sizeof *t);
}

sleapc_status sleapc__json_put_object_text(sleapc_json_text *t, const char *text)
{
    return sleapc__json_put_object_text_sep(t, text, false);
}

sleapc_status sleapc__json_put_object_text_sep(sleapc_json_text *t, const char *text,
                                               bool spaced)
{
    if (!text || !text[0]) {
        sleapc__json_put(t, "{}");
        return SLEAPC_OK;
    }
    cJSON *root = cJSON_Parse(text);
    bool is_object = root && cJSON_IsObject(root);
    cJSON_Delete(root);
    if (!is_object)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "provenance: not a JSON object");
    /* Valid JSON: whitespace outside strings is insignificant and non-ASCII
     * bytes can only be inside strings, where they become \u escapes. */
    const unsigned char *p = (const unsigned char *)text;
    size_t n = strlen(text);
    bool in_str = false;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (!in_str) {
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                put_bytes(t, (const char *)p + i, 1);
            if (spaced && (c == ',' || c == ':'))
                put_bytes(t, " ", 1);
            in_str = c == '"';
            i++;
        } else if (c == '\\' && i + 1 < n) {
            put_bytes(t, (const char *)p + i, 2);
            i += 2;
        } else if (c >= 0x80) {
            unsigned long cp;
            i += utf8_decode(p + i, n - i, &cp);
            put_codepoint_escape(t, cp);
        } else {
            put_bytes(t, (const char *)p + i, 1);
            in_str = c != '"';
            i++;
        }
    }
    return SLEAPC_OK;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return 0;
        *v = *v * 16 + (unsigned)d;
    }
    return 1;
}

char *sleapc__json_surrogate_bytes(const char *json)
{
    size_t n = strlen(json);
    char *out = sleapc__malloc(n + 1);
    if (!out)
        return NULL;
    size_t j = 0;
    bool after_high = false;
    for (size_t i = 0; i < n;) {
        unsigned v;
        if (json[i] == '\\' && i + 1 < n && json[i + 1] == 'u' && i + 6 <= n &&
            hex4(json + i + 2, &v)) {
            if (v >= 0xdc80 && v <= 0xdcff && !after_high) {
                out[j++] = (char)(v - 0xdc00);
            } else {
                memcpy(out + j, json + i, 6);
                j += 6;
            }
            after_high = v >= 0xd800 && v <= 0xdbff;
            i += 6;
        } else if (json[i] == '\\' && i + 1 < n) {
            out[j++] = json[i++];
            out[j++] = json[i++];
            after_high = false;
        } else {
            out[j++] = json[i++];
            after_high = false;
        }
    }
    out[j] = '\0';
    return out;
}
