#!/bin/bash
# Every measurement the lanes family still needs on the H200, in one run
# (its OpenCL runtime and CLBlast in the loader's path; prepare.sh run
# before, on the build machine):
#   docs/perf/h200-gemm-lanes/sweep.sh BUILD OUT
# BUILD holds tools/fatcl and tests/fatcl_gemm_tests; OUT gets the results
# as one sweep.tar.xz (and its log). Each step's failure is logged, not
# fatal: the steps after it still run.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "$1" && pwd)" out="$(mkdir -p "$2" && cd "$2" && pwd)"
res="$out/sweep"
mkdir -p "$res"
log="$out/sweep.log"
step() {
  local name=$1
  shift
  echo "== $name: $*" >>"$log"
  local t0=$SECONDS
  "$@" >"$res/$name.out" 2>"$res/$name.err"
  echo "== $name: rc $? in $((SECONDS - t0)) s" >>"$log"
}
fatcl="$build/tools/fatcl"
step device "$fatcl" devices --json
# The kernels themselves, back to back, beside CLBlast and the stream.
(cd "$here" && step harness-10000 ./harness 10000 15 cands.txt)
(cd "$here" && step harness-40000 ./harness 40000 9 cands.txt)
# Through the entry points: the lanes points beside the blocked ones.
step bench-32-tiers "$fatcl" bench --gemm --batch 10000 --sizes 32 --tier all --reps 20 --json
step bench-32-ptx "$fatcl" bench --gemm --batch 10000 --sizes 32 --tier ptx --reps 20 --json
step bench-32-forms "$fatcl" bench --gemm --batch 10000 --sizes 32 --forms all --reps 20 --json
step bench-128 "$fatcl" bench --gemm --batch 1000 --sizes 128 --tier ptx --reps 20 --json
step bench-col-nt "$fatcl" bench --gemm --layout col --transB --sizes 4096x4096x256 --reps 9 --json
# Every form right with every lanes point (and the rest of the GEMM tests).
step gemm-tests timeout 240 env FATCL_TEST_PLATFORM=NVIDIA FATCL_TUNING=off FATCL_CACHE=0 \
  "$build/tests/fatcl_gemm_tests" --gtest_filter='Gemm.*:-Gemm.EveryVariantOfEachPrecision'
tar -C "$out" -cJf "$out/sweep.tar.xz" sweep && rm -rf "$res"
cat "$log"
