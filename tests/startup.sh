#!/bin/sh
# startup: only commands that execute on GPUs load the CUDA libraries. moesim itself does not link
# them (no ELF NEEDED entry), `moesim --version` and `moesim topo list` run without the dynamic
# loader opening any of them (LD_DEBUG=libs lists what it opens), and, where this build made the
# cuda module, `moesim exec --backend cuda` opens them through it. Skipped (77) without readelf.
set -eu
M=${MOESIM_BIN:?MOESIM_BIN names the moesim to check}
command -v readelf >/dev/null 2>&1 || { echo "startup: no readelf, skipped"; exit 77; }
CUDA_LIBS='libcudart|libcublas|libnccl'
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if readelf -d "$M" | grep NEEDED | grep -E "$CUDA_LIBS"; then
    echo "startup: $M links the CUDA libraries"
    exit 1
fi
for args in "--version" "topo list"; do
    # shellcheck disable=SC2086 # args is a command line
    LD_DEBUG=libs "$M" $args 2>"$TMP/ld.txt" >/dev/null
    if grep -E "$CUDA_LIBS" "$TMP/ld.txt"; then
        echo "startup: 'moesim $args' loaded the CUDA libraries"
        exit 1
    fi
done
echo "startup: moesim links no CUDA library; --version and topo list load none"

if [ -f "$(dirname "$M")/moesim-cuda.so" ]; then
    # exec loads the backend before it reads the schedule: a missing one ends the command there,
    # GPU or not, with the module and its libraries loaded.
    LD_DEBUG=libs "$M" exec --backend cuda "$TMP/absent.json" 2>"$TMP/ld.txt" >/dev/null || true
    if ! grep -q "moesim-cuda.so" "$TMP/ld.txt" || ! grep -qE "libcudart" "$TMP/ld.txt"; then
        echo "startup: 'moesim exec --backend cuda' did not load the cuda module and libcudart"
        exit 1
    fi
    echo "startup: exec --backend cuda loads them through moesim-cuda.so"
fi
