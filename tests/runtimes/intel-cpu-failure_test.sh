#!/usr/bin/env bash
# An install of Intel's CPU runtime that fails must say why, and the runtime
# tests that need it must report that reason (not just "missing"). The
# failure is made by a package index that does not answer, so nothing is
# downloaded.
#   intel-cpu-failure_test.sh <fatcl_runtime_tests binary>
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests="$1"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT

err="$(PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_RETRIES=0 PIP_TIMEOUT=2 \
       "$here/intel-cpu.sh" "$cache" 2>&1 >/dev/null)"
status=$?
[ "$status" -ne 0 ] || { echo "FAIL: intel-cpu.sh succeeded"; exit 1; }
echo "$err" | grep -q "intel-cpu: pip install failed (ERROR: " || { echo "FAIL: stderr: $err"; exit 1; }
grep -q "Intel's OpenCL CPU runtime could not be installed: pip install failed" \
  "$cache/build-failed.txt" || { echo "FAIL: no build-failed.txt"; exit 1; }
[ ! -e "$cache/intel-cpu.icd" ] || { echo "FAIL: an .icd file was left"; exit 1; }
echo "ok   intel-cpu.sh: $(echo "$err" | tail -n 1)"

out="$(FATCL_TEST_PLATFORM="Intel(R) OpenCL" FATCL_TEST_NEEDS="$cache/intel-cpu.icd" \
       FATCL_REQUIRE_RUNTIMES=1 "$tests" --gtest_filter=Auto.ChoosesTheExpectedTierAndExplainsEveryVariant 2>&1)"
if echo "$out" | grep -q "is missing (Intel's OpenCL CPU runtime could not be installed: pip install failed"; then
  echo "ok   the runtime test reports: $(echo "$out" | grep -m1 "is missing")"
else
  echo "FAIL: the runtime test does not give the reason:"
  echo "$out"
  exit 1
fi
