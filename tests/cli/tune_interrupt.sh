#!/usr/bin/env bash
# Ctrl-C during fatcl tune keeps what was measured: exit 130, the database
# holds the entry of the size in progress, and it parses.
#   tune_interrupt.sh FATCL WORK_DIR
set -u
fatcl="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"
"$fatcl" tune --sizes 64,96,128 --budget 10m --database "$work/db.json" \
  > "$work/out.txt" 2> "$work/progress.txt" &
pid=$!
for _ in $(seq 300); do
  grep -q '^\[2/' "$work/progress.txt" 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"; rc=$?
cat "$work/progress.txt"
[ "$rc" = 130 ] || { echo "FAIL: exit $rc after SIGINT, expected 130"; exit 1; }
grep -q '"problem": \[' "$work/db.json" || { echo "FAIL: no entry kept in $work/db.json"; exit 1; }
grep -q '(interrupted)' "$work/out.txt" || { echo "FAIL: the report does not say it was interrupted"; exit 1; }
echo "ok: interrupted tune exited 130 and kept its measurements"
