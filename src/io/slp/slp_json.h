/* Building JSON text the way Python's json.dumps does (ASCII-only output,
 * its escapes and float spelling), so the metadata and video JSON that the
 * .slp and analysis writers store match sleap-io's byte for byte. */
#ifndef SLEAPC_IO_SLP_JSON_H
#define SLEAPC_IO_SLP_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_json_text {
    char *s; /* NUL-terminated text (NULL until something is added) */
    size_t n, cap;
    bool failed; /* an allocation failed; later calls do nothing */
} sleapc_json_text;

/* Append literal text / printf-formatted text. */
void sleapc__json_put(sleapc_json_text *t, const char *raw);
void sleapc__json_putf(sleapc_json_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append s as a quoted JSON string, escaped like json.dumps with
 * ensure_ascii: \" \\ \n \r \t \b \f, \u00XX for other control bytes,
 * \uXXXX (surrogate pairs above U+FFFF) for non-ASCII UTF-8; invalid UTF-8
 * bytes become \udc80..\udcff (Python's surrogateescape). NULL is written as
 * null. */
void sleapc__json_put_string(sleapc_json_text *t, const char *s);

/* Append a double as Python's repr writes it ("1.0", "0.5", "1e-05");
 * NaN and infinities as json.dumps does: NaN, Infinity, -Infinity. */
void sleapc__json_put_double(sleapc_json_text *t, double v);

/* SLEAPC_ERR_NOMEM (naming what) when an append failed, else SLEAPC_OK. */
sleapc_status sleapc__json_status(const sleapc_json_text *t, const char *what);

/* Take the text (caller frees with sleapc__free) and reset t. */
char *sleapc__json_take(sleapc_json_text *t);
void sleapc__json_free(sleapc_json_text *t);

/* Check that text is one JSON object and append it without whitespace
 * between tokens and with non-ASCII characters escaped, i.e. as
 * json.dumps(obj, separators=(",", ":")) would spell it, keeping numbers
 * and key order as given. NULL or "" appends "{}". SLEAPC_ERR_INVALID_ARG
 * when text is not a JSON object. */
sleapc_status sleapc__json_put_object_text(sleapc_json_text *t, const char *text);
/* The same with spaced, json.dumps' default ", " and ": " separators. */
sleapc_status sleapc__json_put_object_text_sep(sleapc_json_text *t, const char *text,
                                               bool spaced);

/* A copy of JSON text in which each lone \udc80..\udcff escape (a byte
 * that was not UTF-8, escaped as Python's surrogateescape holds it) is the
 * raw byte again, so a file name keeps its bytes. NULL when out of memory. */
char *sleapc__json_surrogate_bytes(const char *json);

#endif
