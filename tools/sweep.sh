#!/usr/bin/env bash
# Build-check-time sweep on whatever OpenCL device the ICD loader shows first
# (used on the NVIDIA H200 machine, where the source tier is the one that
# runs). Writes logs into OUT_DIR.
#
# Usage: tools/sweep.sh BUILD_DIR OUT_DIR [SIZE...]    (default sizes 4096 8192)
set -uo pipefail
build="$1"; out="$2"; shift 2
sizes="${*:-4096 8192}"
mkdir -p "$out"
fatcl="$build/tools/fatcl"
tests="$build/tests/fatcl_runtime_tests"
"$fatcl" devices 2>&1 | tee "$out/devices.txt"
platform=$("$fatcl" devices | sed -n 's/^platform 0: \(.*\) (.*/\1/p')
variants="matmul_tiled_TILE4 matmul_tiled_TILE8 matmul_tiled_TILE16 matmul_tiled_TILE32 matmul_naive"
{
  echo "== Auto (expect source tier)"
  FATCL_TEST_PLATFORM="$platform" FATCL_TEST_EXPECT_TIER=source FATCL_REQUIRE_RUNTIMES=1 \
    "$tests" --gtest_filter='Auto.*' 2>&1 | tail -n 4
  for v in $variants; do
    echo "== $v source"
    FATCL_TEST_PLATFORM="$platform" FATCL_TEST_VARIANT="$v" FATCL_TEST_TIER=source \
      FATCL_REQUIRE_RUNTIMES=1 "$tests" --gtest_filter='Sizes/*' 2>&1 | tail -n 3
  done
} 2>&1 | tee "$out/tests.txt"
for n in $sizes; do
  "$fatcl" demo --size "$n" --reps 5 2>&1 | tee "$out/demo-auto-$n.txt"
  for v in matmul_tiled_TILE8 matmul_tiled_TILE16; do
    "$fatcl" demo --size "$n" --reps 5 --variant "$v" 2>&1 | sed -n '/^timing/,$p' | tee "$out/demo-$v-$n.txt"
  done
done
