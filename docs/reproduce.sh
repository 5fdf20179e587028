#!/bin/sh
# reproduce.sh: regenerates the tables and charts of docs/reproduce.md from `moesim repro`: runs
# every experiment, puts the Markdown it writes (NAME.md) between the page's
# <!-- repro NAME --> and <!-- /repro NAME --> markers and copies its charts to
# docs/img/repro-NAME-*.png. Run from the repository root after building:
#   sh docs/reproduce.sh            (MOESIM=build/moesim, OUT=moesim-out/repro by default)
#   sh docs/reproduce.sh NAME...    (only those experiments)
#   sh docs/reproduce.sh link-timeline  (docs/img/lina-link-timeline*.png of docs/collectives.md:
#                                    every flow on node 0's NIC during Lina's overlapped
#                                    backward all-to-all; also run with the experiments)
#   sh docs/reproduce.sh corpus     (the nccl-tests corpus: docs/img/corpus/MACHINE.png and the
#                                    table between <!-- corpus --> and <!-- /corpus --> of
#                                    docs/calibration.md)
set -eu
MOESIM=${MOESIM:-build/moesim}
OUT=${OUT:-moesim-out/repro}

# The NCCL release a machine's logs are modelled at, as tests/validate_corpus.c takes it: each
# log's own "NCCL version" line when every log prints one (version=log: a release older than the
# oldest modelled runs as 2.8.0), else corpus.ini's [nccl] entry (raised to 2.8.0), else moesim's
# default (empty).
corpus_release() {
    if [ -z "$(grep -L 'NCCL version [0-9]' "$1"/*.log)" ]; then
        echo log
        return
    fi
    v=$(awk -F' *= *' -v m="$(basename "$1")" '
        /^\[/ { s = $0 } s == "[nccl]" && $1 == m { print $2 }' validate/data/corpus/corpus.ini)
    if [ -n "$v" ] && [ "$(printf '%s\n2.8.0\n' "$v" | sort -V | head -n1)" != 2.8.0 ]; then
        v=2.8.0
    fi
    echo "$v"
}

# The releases a machine's logs print, for the table: "2.8.3, 2.9.9", "2.6.4 (as 2.8.0)".
corpus_printed() {
    cat "$1"/*.log | grep -o 'NCCL version [0-9.]*' | awk '{ print $3 }' | sort -uV |
        while read -r v; do
            if [ "$(printf '%s\n2.8.0\n' "$v" | sort -V | head -n1)" != 2.8.0 ]; then
                v="$v (as 2.8.0)"
            fi
            echo "$v"
        done | paste -sd, - | sed 's/,/, /g'
}

# Every machine of the corpus predicted under the nccl model (its figures are the report's)
# with the flow model's curve beside it and, where it has more than one allocation, the nccl
# model fitted on its smallest (calibration.md section 6.3); the shape of a log without '#  Rank' lines is its
# name's (OP_NODESxGPUS[_NOTE].log).
# The logs of a machine's fewest GPUs (a name's NODESxGPUS); nothing when every log has that
# count (no larger allocation to predict).
fit_files() {
    counts=$(for log in "$1"/*.log; do
        basename "$log" .log | sed 's/^[a-z_]*_\([0-9]*\)x\([0-9]*\).*/\1 \2/' |
            awk -v f="$log" '{ print $1 * $2, f }'
    done | sort -n)
    fewest=$(echo "$counts" | awk 'NR == 1 { print $1 }')
    [ "$(echo "$counts" | awk -v n="$fewest" '$1 != n' | wc -l)" -gt 0 ] || return 0
    echo "$counts" | awk -v n="$fewest" '$1 == n { print $2 }'
}

# "POINTS MEDIAN, P90" of a validate report's last line.
all_errors() { awk '/^all:/ { gsub(",", ""); print $2, $5 ", " $7 }' "$1"; }

corpus() {
    mkdir -p docs/img/corpus "$OUT/corpus"
    table="$OUT/corpus.md" figs="$OUT/corpus-figures.md"
    : > "$figs"
    printf '| machine | NCCL modelled | logs | points | nccl model: median, p90 | flow model: median, p90 | curves |\n' > "$table"
    printf '| --- | --- | --- | --- | --- | --- | --- |\n' >> "$table"
    for dir in validate/data/corpus/*/; do
        dir=${dir%/}
        m=$(basename "$dir")
        v=$(corpus_release "$dir")
        set --
        shape=
        for log in "$dir"/*.log; do
            set -- "$@" -M "$log"
            if ! grep -q '#  *Rank' "$log"; then
                shape=$(basename "$log" .log | sed 's/^[a-z_]*_\([0-9]*\)x\([0-9]*\).*/\1 \2/' |
                    awk '{ print $1 * $2 "x" $2 }')
            fi
        done
        [ -z "$shape" ] || set -- "$@" --log-shape "$shape"
        net=nccl${v:+:version=$v}
        # The nccl model's factors (four, and host_us where rows are bound by the host) fitted
        # on the smallest allocation (section 7), where the machine has a larger one to predict.
        files=$(fit_files "$dir")
        fitted= fit_logs=
        if [ -n "$files" ]; then
            fit_logs=$(for f in $files; do basename "$f" .log | sed 's/^[a-z_]*_//'; done |
                sort -u | paste -sd+ -)
            fitted=$("$MOESIM" calibrate -t "$dir/topology.ini" $files --net "$net" \
                --out "$OUT/corpus/$m.ini" | sed -n "s/^ *--net '\(.*\)'\$/\1/p")
        fi
        "$MOESIM" validate "$@" -t "$dir/topology.ini" --net "$net" --plot-net flow \
            ${fitted:+--plot-net "$fitted" --plot-label "$net" --plot-label flow} \
            ${fitted:+--plot-label "nccl fitted on the $fit_logs logs"} \
            --plot "$OUT/corpus/$m" > "$OUT/corpus/$m.nccl.txt"
        "$MOESIM" validate "$@" -t "$dir/topology.ini" > "$OUT/corpus/$m.flow.txt"
        cp "$OUT/corpus/$m/curves.png" "docs/img/corpus/$m.png"
        set -- $(all_errors "$OUT/corpus/$m.nccl.txt")
        nccl="$2 $3"
        set -- $(all_errors "$OUT/corpus/$m.flow.txt")
        shown=${v:-default}
        [ "$v" != log ] || shown="$(corpus_printed "$dir"), each log's"
        printf '| %s | %s | %s | %s | %s | %s | [curves](#%s) |\n' "$m" "$shown" \
            "$(ls "$dir"/*.log | wc -l)" "$1" "$nccl" "$2 $3" "$m" >> "$table"
        printf '\n#### %s\n\n%s under %s: median %s; under the flow model: median %s.\n\n' \
            "$m" "$m" "$net" "$(echo "$nccl" | sed 's/, /, p90 /')" \
            "$(echo "$2 $3" | sed 's/, /, p90 /')" >> "$figs"
        printf '![%s: bus bandwidth against size, measured and predicted](img/corpus/%s.png)\n' \
            "$m" "$m" >> "$figs"
    done
    cat "$figs" >> "$table"
    page=docs/calibration.md
    awk -v file="$table" '
        $0 == "<!-- corpus -->" { print; while ((getline line < file) > 0) print line; skip = 1; next }
        $0 == "<!-- /corpus -->" { skip = 0 }
        !skip { print }' "$page" > "$page.new"
    mv "$page.new" "$page"
}

# Lina's case (docs/collectives.md, "Per connection"): DeepSpeed-MoE's all-to-all beside DDP's
# allreduce (the concurrent policy) on lina-testbed under NCCL 2.10, every flow on node 0's NIC;
# and the same with an equal share per connection.
link_timeline() {
    for v in message connection; do
        "$MOESIM" run --policy concurrent --net "nccl:version=2.10,arbitration=$v" \
            --plot "$OUT/link-timeline-$v" --link-timeline 'n0.nic0->fabric' > /dev/null
    done
    cp "$OUT/link-timeline-message/link-timeline.png" docs/img/lina-link-timeline.png
    cp "$OUT/link-timeline-connection/link-timeline.png" docs/img/lina-link-timeline-connection.png
}

if [ "${1:-}" = link-timeline ]; then
    link_timeline
    exit 0
fi
if [ "${1:-}" = corpus ]; then
    corpus
    exit 0
fi
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
[ $# -gt 0 ] || link_timeline
