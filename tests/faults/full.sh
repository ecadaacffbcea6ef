#!/usr/bin/env bash
# Every fault sweep at full length, by one command (CI runs the bounded
# ones): each OpenCL call of the demo, of three checked GEMM calls and of a
# cache warm failed in turn (the naive family's tune, 3,700 calls, is swept bounded:
# every function's first, middle and last call), each file call of the
# demo, tune, cache warm and fatcl-compile failed with ENOSPC and with EIO,
# 200 killed writers, and a 5-minute soak on Debian's PoCL and Intel's CPU
# runtime (where FATCL_INTEL_CPU_ICD names it). Prints each one's counts.
#
# Usage: tests/faults/full.sh [BUILD_DIR] [LOG_DIR]   (default: build, /tmp/fatcl-faults)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=$(realpath "${1:-build}")
logs=$(realpath -m "${2:-/tmp/fatcl-faults}")
fatcl="$build/tools/fatcl"
pocl=/etc/OpenCL/vendors/pocl.icd
mkdir -p "$logs"
export FATCL_FAULT_TARGET= FATCL_CACHE=1 FATCL_SWEEP_VERIFY="$fatcl"
failed=0
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name"
  if ! "$@" > "$logs/$name.log" 2>&1; then failed=$((failed + 1)); fi
  grep -E "^(sweep|io_sweep|kill_writers|soak):|UNEXPLAINED" "$logs/$name.log"
  echo "   ($((SECONDS - start)) s)"
}

icd="$build/tests/libfatcl_fault_icd.so"
step demo-every-call tests/faults/sweep.sh --full "$icd" "$logs/demo" -- \
  "$fatcl" demo --size 64 --reps 1 --no-clblast
step gemm-every-call tests/faults/sweep.sh --full "$icd" "$logs/gemm" -- \
  "$build/tests/fatcl_soak" --calls 4 1
step cache-warm-every-call tests/faults/sweep.sh --full "$icd" "$logs/warm" -- \
  "$fatcl" cache warm --family tiled --family naive
step tune-every-call tests/faults/sweep.sh "$icd" "$logs/tune" -- \
  "$fatcl" tune --sizes 32 --families naive --budget 20

io="$build/tests/libfatcl_fault_io.so"
export OCL_ICD_VENDORS=$pocl
step files-demo tests/faults/io_sweep.sh --full "$io" "$fatcl" "$logs/files-demo" -- \
  "$fatcl" demo --size 64 --reps 1 --no-clblast
step files-tune tests/faults/io_sweep.sh --full "$io" "$fatcl" "$logs/files-tune" -- \
  "$fatcl" tune --sizes 32 --families tiled --budget 20
step files-cache-warm tests/faults/io_sweep.sh --full "$io" "$fatcl" "$logs/files-warm" -- \
  "$fatcl" cache warm --family tiled --family naive
if [[ -x "$build/compiler/fatcl-compile" ]]; then
  step files-compile tests/faults/io_sweep.sh --full "$io" "$fatcl" "$logs/files-compile" -- \
    "$build/compiler/fatcl-compile" family --family saxpy --kernel saxpy \
    --source tests/consumers/kernels/saxpy.cl --param WPT=1,4 --param VW=1 \
    --out-dir @DIR@/bundle --clang clang-15 --llvm-spirv llvm-spirv-15
fi
step killed-writers tests/faults/kill_writers.sh "$build/tests/fatcl_fault_writer" "$fatcl" 200 \
  "$logs/kills"
unset OCL_ICD_VENDORS
runtimes=("$pocl")
[[ -n "${FATCL_INTEL_CPU_ICD:-}" && -f "${FATCL_INTEL_CPU_ICD}" ]] && runtimes+=("$FATCL_INTEL_CPU_ICD")
step soak tests/faults/soak.sh "$build/tests/fatcl_soak" "$fatcl" 300 "$logs/soak" "${runtimes[@]}"

echo "full fault sweeps: $failed failed (logs in $logs)"
[[ $failed -eq 0 ]]
