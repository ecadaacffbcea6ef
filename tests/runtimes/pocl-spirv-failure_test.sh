#!/usr/bin/env bash
# A PoCL-with-SPIR-V build that fails must say why, and the runtime tests that
# need it must report that reason (not just "missing"). The failure is made
# by an llc that does not run, so nothing is built.
#   pocl-spirv-failure_test.sh <fatcl_runtime_tests binary>
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/reports-missing-runtime.sh"
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

reports_missing_runtime "$tests" "Portable Computing Language" "$cache/pocl-spirv.icd" \
  "PoCL with SPIR-V could not be built: no CPU name"
