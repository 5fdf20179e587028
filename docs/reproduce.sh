#!/bin/sh
# reproduce.sh: regenerates the tables and charts of docs/reproduce.md from `moesim repro`: runs
# every experiment, puts the Markdown it writes (NAME.md) between the page's
# <!-- repro NAME --> and <!-- /repro NAME --> markers and copies its charts to
# docs/img/repro-NAME-*.png. Run from the repository root after building:
#   sh docs/reproduce.sh            (MOESIM=build/moesim, OUT=moesim-out/repro by default)
#   sh docs/reproduce.sh NAME...    (only those experiments)
set -eu
MOESIM=${MOESIM:-build/moesim}
OUT=${OUT:-moesim-out/repro}
PAGE=docs/reproduce.md
NAMES=${*:-$("$MOESIM" repro --list | awk 'NR > 1 { print $1 }')}
for e in $NAMES; do
    "$MOESIM" repro "$e" --out "$OUT" -q > /dev/null
    awk -v start="<!-- repro $e -->" -v end="<!-- /repro $e -->" -v file="$OUT/$e.md" '
        $0 == start { print; while ((getline line < file) > 0) print line; skip = 1; next }
        $0 == end { skip = 0 }
        !skip { print }' "$PAGE" > "$PAGE.new"
    mv "$PAGE.new" "$PAGE"
    for chart in "$OUT/$e"-*.png; do
        [ -f "$chart" ] && cp "$chart" "docs/img/repro-$(basename "$chart")"
    done
done
