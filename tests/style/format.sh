#!/bin/sh
# Every C, header and CUDA file as .clang-format lays it out. Skipped (77) without clang-format;
# the test command installs it. Prints the files that differ, with clang-format's own diagnostics.
set -eu
cd "${MOESIM_SRCDIR:-$(dirname "$0")/../..}"
CF=${CLANG_FORMAT:-clang-format}
command -v "$CF" >/dev/null 2>&1 || { echo "format: $CF not found, skipped"; exit 77; }
files=$(find backends cli sim tests topologies traces validate \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort)
# shellcheck disable=SC2086
"$CF" --dry-run --Werror $files
echo "format: $(echo "$files" | wc -l) files as .clang-format says"
