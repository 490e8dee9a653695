/* Where "auto" keeps what it measured, so that the next run on the same
 * model, input shape, batch, precision, threads, CPU and libraries starts on
 * the backend it chose without timing again.
 *
 * One small text file per key under the cache folder, the setting cache_dir
 * (core/settings.h): SLEAPC_CACHE_DIR, else $XDG_CACHE_HOME/sleapc, else
 * ~/.cache/sleapc; SLEAPC_NO_CACHE=1, or "" set through the API, turns the
 * cache off. Files are written whole and renamed into place, so concurrent
 * runs leave one valid file (the last one's); a file that does not parse or
 * belongs to another key is ignored, never an error. */
#ifndef SLEAPC_BACKENDS_AUTO_CACHE_H
#define SLEAPC_BACKENDS_AUTO_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "sleapc/sleapc.h"

#define SLEAPC_AUTO_CACHE_MAX 8
#define SLEAPC_AUTO_NAME_CAP 32

/* What runs so far measured for one key. */
typedef struct sleapc_auto_entry {
    char chosen[SLEAPC_AUTO_NAME_CAP];  /* the fastest of those measured */
    int n;
    char name[SLEAPC_AUTO_CACHE_MAX][SLEAPC_AUTO_NAME_CAP];
    double ms[SLEAPC_AUTO_CACHE_MAX];   /* best pass per batch; < 0: it could not run */
} sleapc_auto_entry;

/* The cache folder; false when the cache is off or no folder can be named
 * (no HOME). */
bool sleapc__auto_cache_dir(char *out, size_t cap);

/* The file for key: <folder>/auto-<hash of key>.txt; false as above. */
bool sleapc__auto_cache_path(const char *key, char *out, size_t cap);

/* The entry kept for key; false when there is none that parses and names
 * this key. */
bool sleapc__auto_cache_load(const char *key, sleapc_auto_entry *e);

/* Keep e for key (creating the folder). Fails with a message, which callers
 * report and go on: a cache that cannot be written costs only time. */
sleapc_status sleapc__auto_cache_store(const char *key, const sleapc_auto_entry *e);

/* Keep e for key unless a file for key is already there (the first of
 * concurrent writers wins: the file is linked into place, never renamed over
 * another), then load what is kept into *kept. false (and *kept zeroed) when
 * nothing for key can be kept or read back: the caller then uses e. A file
 * there that does not parse for key is replaced by e. */
bool sleapc__auto_cache_store_first(const char *key, const sleapc_auto_entry *e,
                                    sleapc_auto_entry *kept);

/* e's time for name; false when it has none. */
bool sleapc__auto_entry_get(const sleapc_auto_entry *e, const char *name, double *ms);
/* Set (or add) name's time. */
void sleapc__auto_entry_set(sleapc_auto_entry *e, const char *name, double ms);

#endif
