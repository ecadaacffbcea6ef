#!/usr/bin/env bash
# Ctrl-C during fatcl tune keeps what was measured: exit 130, the database
# holds the entry of the size in progress, and it parses. With "gemm", the
# GEMM entry points' tune (fatcl tune --gemm) on Intel's CPU runtime (ICD,
# the .icd file): it stops after the size in flight, so the sizes before
# it and that one keep their entries, and the one after has none.
#   tune_interrupt.sh FATCL WORK_DIR [gemm ICD]
set -u
fatcl="$1"; work="$2"; mode="${3:-}"
rm -rf "$work"; mkdir -p "$work"
if [ "$mode" = gemm ]; then
  [ -f "$4" ] || { echo "SKIPPED: Intel's CPU runtime is not installed ($4 is missing)"; exit 0; }
  OCL_ICD_VENDORS="$4" "$fatcl" tune --gemm --tier spirv --sizes 64,96,128 \
    --database "$work/db.json" > "$work/out.txt" 2> "$work/progress.txt" &
  started='^96: '
else
  "$fatcl" tune --sizes 64,96,128 --budget 10m --database "$work/db.json" \
    > "$work/out.txt" 2> "$work/progress.txt" &
  started='^\[2/'
fi
pid=$!
for _ in $(seq 1200); do
  grep -q "$started" "$work/progress.txt" 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"; rc=$?
cat "$work/progress.txt"
[ "$rc" = 130 ] || { echo "FAIL: exit $rc after SIGINT, expected 130"; exit 1; }
grep -q '"problem": \[' "$work/db.json" || { echo "FAIL: no entry kept in $work/db.json"; exit 1; }
grep -q '(interrupted)' "$work/out.txt" || { echo "FAIL: the report does not say it was interrupted"; exit 1; }
if [ "$mode" = gemm ]; then
  flat=$(tr -d ' \n' < "$work/db.json")
  for side in 64 96; do
    grep -q "\"problem\":\[$side,$side,$side,1\]" <<< "$flat" ||
      { echo "FAIL: no entry for $side^3 in $work/db.json"; exit 1; }
  done
  if grep -q '"problem":\[128,128,128,1\]' <<< "$flat"; then
    echo "FAIL: the size after the interrupted one was measured too"; exit 1
  fi
fi
echo "ok: interrupted tune exited 130 and kept its measurements"
