#!/usr/bin/env bash
# Kills writers of the program cache and the store at random moments, ROUNDS
# times, while a reader checks both: readers never see a partial entry, the
# previous database stays readable, and the next start rebuilds what is
# missing. Rounds take turns between two writers over one cache and store:
#   - tests/faults/writer.cpp, saving cache entries and the store in a
#     tight loop (so a kill lands mostly inside a write);
#   - `fatcl tune` of a small family (its builds into the cache, then the
#     store), after `fatcl cache clear` so that it writes.
# A reader (`fatcl cache verify`) runs beside each writer until the kill
# and once after it; every one of its checks must pass. At the end the
# demo runs over what the kills left and must succeed.
#
# Usage: kill_writers.sh WRITER FATCL ROUNDS LOG_DIR
set -uo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 WRITER FATCL ROUNDS LOG_DIR" >&2
  exit 2
fi
writer=$1 fatcl=$2 rounds=$3 logs=$4
rm -rf "$logs" && mkdir -p "$logs"
export FATCL_CACHE_DIR="$logs/cache" FATCL_TUNING="$logs/store.json" FATCL_CACHE=1

tune=("$fatcl" tune --sizes 32 --families tiled --budget 20)
# The tune's own length, to kill it anywhere in it.
start=$(date +%s%N)
"${tune[@]}" > "$logs/tune-first" 2>&1 || { echo "kill_writers: tune fails unkilled" >&2; exit 1; }
tune_ms=$((($(date +%s%N) - start) / 1000000 + 1))

checks=0 bad=0 killed=0
verify() {
  checks=$((checks + 1))
  if ! "$fatcl" cache verify > "$logs/verify" 2>&1; then
    bad=$((bad + 1))
    echo "round $1: $(grep -m2 -E "damaged:|cannot be used" "$logs/verify" | tr '\n' ' ')"
  fi
}

for ((round = 1; round <= rounds; ++round)); do
  if ((round % 2)); then
    "$writer" "$FATCL_CACHE_DIR" "$FATCL_TUNING" > "$logs/writer" 2>&1 &
    wait_ms=$((2 + RANDOM % 80))
  else
    "$fatcl" cache clear > /dev/null 2>&1
    "${tune[@]}" > "$logs/writer" 2>&1 &
    wait_ms=$((RANDOM % tune_ms))
  fi
  pid=$!
  deadline=$(($(date +%s%N) + wait_ms * 1000000))
  while (($(date +%s%N) < deadline)); do verify "$round (beside the writer)"; done
  kill -KILL "$pid" 2> /dev/null && killed=$((killed + 1))
  wait "$pid" 2> /dev/null
  verify "$round"
done

temporaries=$(find "$logs" -regextype posix-extended -regex '.*\.(bin|json)\.[A-Za-z0-9]{6}' | wc -l)
# The next start: the demo over what the kills left.
if ! "$fatcl" demo --size 64 --reps 1 --no-clblast > "$logs/after" 2>&1; then
  bad=$((bad + 1))
  echo "the demo after the kills failed: $(tail -n 2 "$logs/after" | tr '\n' ' ')"
fi
entries=$("$fatcl" cache stats | sed -n 's/.*: \([0-9]*\) entries.*/\1/p')
echo "kill_writers: $rounds rounds, $killed writers killed mid-run, $checks reader checks," \
     "$bad failed; $temporaries temporary files left by killed writers (removed by the next" \
     "writer once an hour old); $entries cache entries after the demo"
[[ $bad -eq 0 ]]
