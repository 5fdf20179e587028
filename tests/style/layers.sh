#!/bin/sh
# The layers of DESIGN.md and the README, checked: a file may include headers of its own floor and
# of the floors below it, never above. Floors, bottom up:
#   0 sim/base   1 topologies, traces   2 sim/schedule   3 the rest of sim/   4 backends
#   5 validate   6 cli
# (topologies/ and traces/ share a floor but do not include each other.) Prints every include that
# reaches up and exits 1 when there is one.
set -eu
cd "${MOESIM_SRCDIR:-$(dirname "$0")/../..}"

floor() {
    case "$1" in
    sim/base/*) echo 0 ;;
    topologies/*) echo 1 ;;
    traces/*) echo 1 ;;
    sim/schedule/*) echo 2 ;;
    sim/*) echo 3 ;;
    backends/*) echo 4 ;;
    validate/*) echo 5 ;;
    cli/*) echo 6 ;;
    *) echo 9 ;;
    esac
}

bad=0
for f in $(find sim topologies traces backends validate cli -name '*.[ch]' -o -name '*.cu' | sort); do
    from=$(floor "$f")
    for h in $(sed -n 's/^#include "\([a-z_]*\/[a-z_/]*\.h\)".*/\1/p' "$f"); do
        to=$(floor "$h")
        top_f=${f%%/*} top_h=${h%%/*}
        if [ "$to" -gt "$from" ] ||
            { [ "$from" -eq 1 ] && [ "$top_f" != "$top_h" ] && [ "$to" -eq 1 ]; }; then
            echo "$f includes $h: floor $to above floor $from (DESIGN.md, Folders and layers)"
            bad=1
        fi
    done
done
exit $bad
