#!/usr/bin/env bash
# A PoCL-with-SPIR-V build that fails must say why, and the runtime tests that
# need it must report that reason (not just "missing"). The failure is made
# by an llc that does not run, so nothing is built.
#   pocl-spirv-failure_test.sh <fatcl_runtime_tests binary>
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests="$1"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT

err="$(FATCL_LLC=/bin/false "$here/pocl-spirv.sh" "$cache" 2>&1 >/dev/null)"
status=$?
[ "$status" -ne 0 ] || { echo "FAIL: pocl-spirv.sh succeeded"; exit 1; }
echo "$err" | grep -q "no CPU name for PoCL's LLC_HOST_CPU" || { echo "FAIL: stderr: $err"; exit 1; }
grep -q "PoCL with SPIR-V could not be built" "$cache/build-failed.txt" ||
  { echo "FAIL: no build-failed.txt"; exit 1; }
echo "ok   pocl-spirv.sh: $err"

out="$(FATCL_TEST_PLATFORM="Portable Computing Language" FATCL_TEST_NEEDS="$cache/pocl-spirv.icd" \
       FATCL_REQUIRE_RUNTIMES=1 "$tests" --gtest_filter=Auto.ChoosesTheExpectedTierAndExplainsEveryVariant 2>&1)"
if echo "$out" | grep -q "is missing (PoCL with SPIR-V could not be built: no CPU name"; then
  echo "ok   the runtime test reports: $(echo "$out" | grep -m1 "is missing")"
else
  echo "FAIL: the runtime test does not give the reason:"
  echo "$out"
  exit 1
fi
