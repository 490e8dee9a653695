#!/bin/sh
# The dependency rule of ARCHITECTURE.md, checked over every `#include "..."`
# under src/, include/ and tools/ (POSIX sh + awk only).
#
# Floors, top to bottom: tools > api > pipeline > layers > backends > model > io > core.
#   1. A file under src/<floor>/ includes only its own floor or floors below it.
#   2. Each folder under src/ is a floor; a new top-level folder must be given one here.
#   3. No backend includes another backend's folder (src/backends/<name>/).
#   4. No loop between folders: the graph of folder -> included folder
#      (e.g. io/ckpt -> io/config) has no cycle. A folder and its own sub-folders
#      count as one (backends/registry.c includes backends/native/).
#   5. include/sleapc/ (the public headers) and tools/ include only include/sleapc/
#      (and files next to them).
#   6. No two headers under src/ and include/ share a file name (an internal
#      header is never mistaken for the public one, e.g. model/model_impl.h).
#   7. Inner code calls no public function: a function declared SLEAPC_API in
#      include/sleapc/ is called only from src/api/ (its body) and above.
#   8. A predictions format is chosen in io only (io/predictions/ holds the one
#      table of formats and their extensions): no code line under src/ outside
#      src/io/ holds a string literal that is a predictions extension (".slp",
#      ".h5", ".hdf5", ".csv", ".json"); it asks io for the format of a path.
#      src/api/ is left out: its bodies name files of their own (eval metrics).
#   9. Only src/core/settings.c reads the environment (getenv): every variable the
#      library reads is a row of its table, and code elsewhere asks core/settings.h.
# Usage: tools/check_layers.sh [source root]; exit 0 when clean, 1 with one line
# per violation otherwise.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# "file<TAB>included path" for every quoted include.
edges=$(find src include tools -name '*.[ch]' | LC_ALL=C sort | xargs awk '
    /^[ \t]*#[ \t]*include[ \t]*"/ {
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
        printf "%s\t%s\n", FILENAME, inc
    }')

dups=$(find src include -name '*.h' | awk -F/ '{ n[$NF]++; p[$NF] = p[$NF] " " $0 }
    END { for (f in n) if (n[f] > 1) print "check_layers: header name " f " is used twice:" p[f] }')
rc=0
[ -z "$dups" ] || { printf '%s\n' "$dups"; rc=1; }

# Code without its comments, for awk: block comments followed across lines
# (a line that starts with "*" may be code: "*out = f(x);"), line comments
# and string literals left as they are.
strip_awk='
function code(line,   out, i, c, n) {
    out = ""; n = length(line); i = 1
    while (i <= n) {
        if (in_block) {
            if (substr(line, i, 2) == "*/") { in_block = 0; i += 2 } else i++
            continue
        }
        c = substr(line, i, 1)
        if (c == "\"") {
            out = out c; i++
            while (i <= n && substr(line, i, 1) != "\"") {
                if (substr(line, i, 1) == "\\") { out = out substr(line, i, 2); i += 2; continue }
                out = out substr(line, i, 1); i++
            }
            out = out "\""; i++
            continue
        }
        if (substr(line, i, 2) == "/*") { in_block = 1; i += 2; continue }
        if (substr(line, i, 2) == "//") break
        out = out c; i++
    }
    return out
}
FNR == 1 { in_block = 0 }'

# Rule 7: the public function names, then their calls under src/ outside
# src/api/ (comments, which name the public function they implement, are
# skipped).
public=$(find include -name '*.h' | LC_ALL=C sort | xargs awk '
    /SLEAPC_API/ { api = 1 }
    api && match($0, /sleapc_[a-z0-9_]+[ \t]*\(/) {
        name = substr($0, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
        if (name !~ /^sleapc__/) print name
        api = 0
    }
    /;/ { api = 0 }' | LC_ALL=C sort -u)
calls=$(find src -name '*.[ch]' ! -path 'src/api/*' | LC_ALL=C sort | xargs awk -v names="$public" "$strip_awk"'
    BEGIN { n = split(names, a, "\n"); for (i = 1; i <= n; i++) pub[a[i]] = 1 }
    {
        line = code($0)
        while (match(line, /sleapc_[a-z0-9_]+\(/)) {
            name = substr(line, RSTART, RLENGTH - 1)
            if (name in pub)
                printf "check_layers: %s:%d: calls the public %s (call the internal sleapc__ one)\n", FILENAME, FNR, name
            line = substr(line, RSTART + RLENGTH)
        }
    }')
[ -z "$calls" ] || { printf '%s\n' "$calls"; rc=1; }

# Rule 8: predictions extensions named outside io (comment lines skipped).
exts=$(find src -name '*.[ch]' ! -path 'src/io/*' ! -path 'src/api/*' | LC_ALL=C sort | xargs awk "$strip_awk"'
    code($0) ~ /"\.(slp|h5|hdf5|csv|json)"/ {
        printf "check_layers: %s:%d: tests a predictions extension outside io (ask io/predictions/predictions_format.h for the format of the path)\n", FILENAME, FNR
    }')
[ -z "$exts" ] || { printf '%s\n' "$exts"; rc=1; }

# Rule 9: the environment is read in core/settings.c only (its one table of
# settings); other code asks core/settings.h (comment lines skipped).
envs=$(find src -name '*.[ch]' ! -path 'src/core/settings.c' | LC_ALL=C sort | xargs awk "$strip_awk"'
    code($0) ~ /(^|[^a-z_])(secure_)?getenv[ \t]*\(/ {
        printf "check_layers: %s:%d: reads the environment (add the variable to core/settings.c and ask core/settings.h)\n", FILENAME, FNR
    }')
[ -z "$envs" ] || { printf '%s\n' "$envs"; rc=1; }

printf '%s\n' "$edges" | awk -F '\t' '
BEGIN {
    n = split("core io model backends layers pipeline api", fl, " ")
    for (i = 1; i <= n; i++) rank[fl[i]] = i
    bad = 0
}
function floor_of(path,   p) { split(path, p, "/"); return p[1] }
# The folder a source file sits in, relative to src/ ("io/ckpt", "layers").
function dir_of(path) { sub(/\/[^\/]*$/, "", path); return path }
function fail(msg) { print "check_layers: " msg; bad = 1 }
NF == 2 {
    file = $1; inc = $2
    if (file ~ /^include\// || file ~ /^tools\//) {
        if (index(inc, "/") && inc !~ /^sleapc\/[^\/]+$/)
            fail(file ": includes \"" inc "\"; public headers and tools use include/sleapc only")
        next
    }
    rel = substr(file, 5)                      # strip "src/"
    from = floor_of(rel)
    if (!(from in rank)) { fail(file ": src/" from "/ is not a floor (see ARCHITECTURE.md)"); next }
    if (!index(inc, "/") || inc ~ /^sleapc\//) next   # same folder, or public types
    to = floor_of(inc)
    if (!(to in rank)) { fail(file ": includes \"" inc "\", which is in no floor"); next }
    if (rank[to] > rank[from])
        fail(file ": includes \"" inc "\" (" to " is above " from ")")
    fdir = dir_of(rel); tdir = dir_of(inc)
    if (from == "backends" && to == "backends") {
        split(fdir, a, "/"); split(tdir, b, "/")
        if (a[2] != "" && b[2] != "" && a[2] != b[2])
            fail(file ": includes \"" inc "\" (one backend includes another)")
    }
    # A folder and its sub-folders are one unit (backends/ holds the contract and
    # the registry of backends/<name>/), so only edges between unrelated folders count.
    related = index(fdir "/", tdir "/") == 1 || index(tdir "/", fdir "/") == 1
    if (!related && !((fdir, tdir) in seen)) {
        seen[fdir, tdir] = 1
        nout[fdir]++; out[fdir, nout[fdir]] = tdir
        nodes[fdir] = 1; nodes[tdir] = 1
    }
}
# Folder loops: depth-first search, a grey folder met again closes a cycle.
function visit(d,   i, t) {
    color[d] = 1; stack[++depth] = d
    for (i = 1; i <= nout[d]; i++) {
        t = out[d, i]
        if (color[t] == 1) report_cycle(t)
        else if (color[t] == 0) visit(t)
    }
    color[d] = 2; depth--
}
function report_cycle(t,   i, s) {
    for (i = depth; i >= 1 && stack[i] != t; i--) ;
    s = t
    for (i++; i <= depth; i++) s = s " -> " stack[i]
    fail("folder loop: " s " -> " t)
}
END {
    for (d in nodes) color[d] = 0
    for (d in nodes) if (color[d] == 0) { depth = 0; visit(d) }
    exit bad
}' || rc=1
exit $rc
