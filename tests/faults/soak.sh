#!/usr/bin/env bash
# The soak: for SECONDS, two processes per runtime (each ICD given), each of
# two threads calling Matmul and the GEMM entry points with random shapes
# (tests/faults/soak.cpp), all over one program cache and one store, every
# result checked. Reports the calls and failures (must be 0) of every
# process, then the cache's entries, and checks the cache and the store
# whole afterwards (fatcl cache verify).
#
# Usage: soak.sh SOAK FATCL SECONDS LOG_DIR ICD...
#   An ICD that is not there skips the soak (exit 77), or fails it where
#   FATCL_REQUIRE_RUNTIMES is set.
set -uo pipefail

if [[ $# -lt 5 ]]; then
  echo "usage: $0 SOAK FATCL SECONDS LOG_DIR ICD..." >&2
  exit 2
fi
soak=$1 fatcl=$2 seconds=$3 logs=$4
shift 4
for icd in "$@"; do
  if [[ ! -f "$icd" ]]; then
    echo "SKIPPED: no OpenCL driver at \"$icd\" (a runtime the soak runs on)"
    [[ -n "${FATCL_REQUIRE_RUNTIMES:-}" ]] && exit 1
    exit 77
  fi
done
rm -rf "$logs" && mkdir -p "$logs"
export FATCL_CACHE_DIR="$logs/cache" FATCL_TUNING="$logs/store.json" FATCL_CACHE=1

pids=()
n=0
for icd in "$@"; do
  for p in 1 2; do
    n=$((n + 1))
    OCL_ICD_VENDORS="$icd" "$soak" "$seconds" 2 > "$logs/process-$n" 2>&1 &
    pids+=($!)
  done
done
failed=0
for ((i = 0; i < n; ++i)); do
  if ! wait "${pids[$i]}"; then failed=$((failed + 1)); fi
  cat "$logs/process-$((i + 1))"
done
if ! "$fatcl" cache verify > "$logs/verify" 2>&1; then
  failed=$((failed + 1))
  cat "$logs/verify"
fi
echo "soak: $n processes on $# runtimes, $failed failed; $(head -n 1 "$logs/verify")"
[[ $failed -eq 0 ]]
