#!/usr/bin/env bash
# Eight processes load the same variants at once through one program cache:
# every one computes right, and the cache holds one whole entry per key
# (a second round loads every program from it).
#   cache_concurrent.sh FATCL WORK_DIR
set -u
fatcl="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"
export FATCL_CACHE_DIR="$work/programs"
unset FATCL_CACHE
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$fatcl" demo --size 48 --variant matmul_tiled_TILE8 --no-clblast > "$work/demo$i.txt" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "$work/demo$((i + 1)).txt"; echo "FAIL: process $((i + 1)) failed"; exit 1; }
done
ok=$(grep -l "check fatcl matmul_tiled_TILE8 .*: OK" "$work"/demo*.txt | wc -l)
[ "$ok" = 8 ] || { echo "FAIL: $ok of 8 processes computed right"; exit 1; }
entries=$(ls "$work/programs"/*.bin | wc -l)
leftovers=$(ls "$work/programs" | grep -vc '\.bin$')
[ "$entries" = 2 ] || { ls -la "$work/programs"; echo "FAIL: $entries entries, expected 2 (TILE8 and naive)"; exit 1; }
[ "$leftovers" = 0 ] || { ls -la "$work/programs"; echo "FAIL: temporary files left"; exit 1; }
"$fatcl" demo --size 48 --variant matmul_tiled_TILE8 --no-clblast > "$work/again.txt" 2>&1 || { cat "$work/again.txt"; exit 1; }
grep -q "loaded from the fatcl cache" "$work/again.txt" || { cat "$work/again.txt"; echo "FAIL: not loaded from the cache"; exit 1; }
grep -q "check fatcl matmul_tiled_TILE8 .*: OK" "$work/again.txt" || { echo "FAIL: wrong result from the cache"; exit 1; }
echo "ok: 8 concurrent loaders, 2 whole entries, the next load from the cache"
