#!/usr/bin/env bash
# Instructions executed inside `SearchIndex::search` over one pass of search_footprint's query
# mix, counted by valgrind's callgrind: a load-independent figure to compare two builds of the
# search on this shared machine (wall-clock percentiles move with the load; instruction counts
# do not). Needs valgrind (`apt-get install valgrind`).
#
#   bash scripts/search-instructions.sh BINARY [BINARY ...] [-- EXTRA ARGS]
#
# BINARY: a build of examples/search_footprint (see docs/search.md for the optimised build).
# EXTRA ARGS go to every binary, e.g. `-- --min-words 40 --searches 106` for one pass of the long
# requests only (the default is `--searches 745`, one pass of all of them).
set -euo pipefail
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
extra=("$@")
searches=(--searches 745)
for a in "${extra[@]}"; do [ "$a" = "--searches" ] && searches=(); done
for bin in "${bins[@]}"; do
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*SearchIndex*search_with*' \
        "$bin" "${searches[@]}" "${extra[@]}" > /dev/null 2>&1
    printf '%s\t%s instructions\n' "$bin" "$(grep -m1 '^summary:' "$out" | cut -d' ' -f2)"
    rm -f "$out"
done
