#!/usr/bin/env bash
# An install of Intel's CPU runtime that fails must say why, and the runtime
# tests that need it must report that reason (not just "missing"). The
# failure is made by a package index that does not answer, so nothing is
# downloaded.
#   intel-cpu-failure_test.sh <fatcl_runtime_tests binary>
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/reports-missing-runtime.sh"
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

reports_missing_runtime "$tests" "Intel(R) OpenCL" "$cache/intel-cpu.icd" \
  "Intel's OpenCL CPU runtime could not be installed: pip install failed"
