#!/bin/sh
# device-check: the cuda backend's check on a machine with one CUDA GPU. Builds moesim with the
# backend, runs its device tests, sweeps the GEMMs of a Mixtral-8x7B expert (moesim bench
# defaults) and prints measured beside modelled kernel times, calibrates on that sweep, then
# executes the single-GPU training step of a shipped model under two policies on the h200
# topology and prints every op's measured time beside its simulated one, nominal and calibrated.
#   backends/cuda/device-check.sh [OUTDIR]
# Environment: MOESIM_BUILD (build folder, default build-device), MOESIM_CHECK_MODEL (default
# mixtral-8x7b), MOESIM_CHECK_POLICIES (default "fifo lina"), MOESIM_JOBS (ninja jobs),
# MOESIM_NO_BUILD=1 to use a build made elsewhere as it is (a GPU node without compilers or
# development packages: build with -Dcuda=enabled on a machine that has them, copy the build
# folder's moesim, moesim-cuda.so (the cuda backend, loaded at run time from beside moesim) and
# tests/test_cuda_* over, and put the shared libraries they need on LD_LIBRARY_PATH).
set -eu
cd "$(dirname "$0")/../.."

BUILD=${MOESIM_BUILD:-build-device}
OUT=${1:-$BUILD/device-check}
TOPO=h200
MODEL=${MOESIM_CHECK_MODEL:-mixtral-8x7b}
POLICIES=${MOESIM_CHECK_POLICIES:-"fifo lina"}
JOBS=${MOESIM_JOBS:-$(nproc)}
M="$BUILD/moesim"

if [ -z "${MOESIM_NO_BUILD:-}" ]; then
    if [ ! -f "$BUILD/build.ninja" ]; then
        meson setup "$BUILD" -Dcuda=enabled
    fi
    ninja -C "$BUILD" -j "$JOBS"
    meson test -C "$BUILD" --print-errorlogs cuda_plan cuda_backend
else
    # What meson test would run: the device tests, with the binary, the backend modules and the
    # sources they read.
    for t in cuda_plan cuda_backend; do
        rc=0
        MOESIM_BIN="$M" MOESIM_BACKEND_DIR="$BUILD" MOESIM_SRCDIR=. "$BUILD/tests/test_$t" || rc=$?
        case $rc in
        0) echo "test_$t: OK" ;;
        77) echo "test_$t: SKIPPED (no CUDA device)" ;;
        *) echo "test_$t: FAILED ($rc)" && exit 1 ;;
        esac
    done
fi
mkdir -p "$OUT"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
fi

# Per-op CSV columns: op,rank,stream,kind,role,phase,layer,chunk,label,bytes,flops,start_us,
# end_us,duration_us. Joins the simulated and measured runs of one schedule by op id.
side_by_side() {
    awk -F, '
        FNR == 1 { next }
        NR == FNR { sim[$1] = $14; label[$1] = $9; role[$1] = $5; next }
        !($1 in sim) { printf "op %s missing from the simulated run\n", $1; bad = 1; next }
        $9 != label[$1] {
            printf "op %s is %s measured, %s simulated\n", $1, $9, label[$1]
            bad = 1
        }
        {
            if (!header) {
                printf "%6s  %-28s %12s %12s %8s\n", "op", "label", "simulated", "measured",
                       "ratio"
                header = 1
            }
            r = sim[$1] > 0 ? $14 / sim[$1] : 0
            printf "%6s  %-28s %12.3f %12.3f %8.3f\n", $1, $9, sim[$1], $14, r
            s[role[$1]] += sim[$1]; c[role[$1]] += $14
        }
        END {
            printf "\n%-12s %14s %14s %8s   (us, summed over ops)\n", "role", "simulated",
                   "measured", "ratio"
            for (k in s) {
                printf "%-12s %14.3f %14.3f %8.3f\n", k, s[k], c[k], (s[k] > 0 ? c[k] / s[k] : 0)
            }
            exit bad
        }' "$1" "$2"
}

echo
echo "== expert GEMM sweep and kernel launch on $TOPO's GPU, against the nominal model"
"$M" bench --backend cuda --what gemm,launch --topology "$TOPO" --out "$OUT/gemm.csv"
"$M" validate --measured "$OUT/gemm.csv" --topology "$TOPO"
echo
echo "== calibration from that sweep (the GEMM efficiency curve and the launch overhead)"
"$M" calibrate "$OUT/gemm.csv" --topology "$TOPO" --out "$OUT/calibration.ini"

pairs=""
for p in $POLICIES; do
    "$M" plan --topology "$TOPO" --model "$MODEL" --policy "$p" --out "$OUT/$p.schedule.json"
    "$M" run --topology "$TOPO" --model "$MODEL" --policy "$p" --json "$OUT/$p.sim.json" \
        --csv "$OUT/$p.sim.csv" >/dev/null
    "$M" run --topology "$TOPO" --model "$MODEL" --policy "$p" --calibration "$OUT/calibration.ini" \
        --json "$OUT/$p.cal.json" --csv "$OUT/$p.cal.csv" >/dev/null
    "$M" exec --backend cuda "$OUT/$p.schedule.json" --json "$OUT/$p.cuda.json" \
        --csv "$OUT/$p.cuda.csv" --chrome-trace "$OUT/$p.cuda.trace.json"
    echo
    echo "== $MODEL training step on $TOPO under $p: per-op time in us, nominal model"
    side_by_side "$OUT/$p.sim.csv" "$OUT/$p.cuda.csv"
    "$M" validate --simulated "$OUT/$p.sim.json" --measured "$OUT/$p.cuda.json"
    echo
    echo "== the same with the calibration"
    side_by_side "$OUT/$p.cal.csv" "$OUT/$p.cuda.csv" | sed -n '/^role/,$p'
    "$M" validate --simulated "$OUT/$p.cal.json" --measured "$OUT/$p.cuda.json"
    pairs="$pairs --simulated $OUT/$p.cal.json --measured $OUT/$p.cuda.json"
done
echo
echo "== the policies' step times, calibrated model against measured"
# shellcheck disable=SC2086 # pairs is a list of options
"$M" validate $pairs
echo "device-check: outputs in $OUT"
