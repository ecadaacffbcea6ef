#!/usr/bin/env bash
# Sweeps the file-write failure points of one command through the preloaded
# file-fault injector (tests/faults/fault_io.cpp): runs it once to count the
# writes, fsyncs, renames, temporary files, creations and closes it makes
# under its program cache and store, then once per chosen call with that
# call failing (ENOSPC, EIO), then with the disk filling part-way. Each run
# starts from an empty program cache and the store the counting run left
# (the previous database). Each run must end in one of two ways:
#   - exit status 0: the command checked its own result (fatcl demo against
#     a double-precision reference; tune and cache warm their variants);
#   - a clear error: exit status 1 to 125 with the errno's text named.
# After each: `fatcl cache verify` must find every cache entry whole and
# the store readable, no temporary file may be left, and a clean run over
# the same cache and store must succeed (the next start rebuilds what is
# missing). Anything else is counted as unexplained and fails the sweep.
#
# Usage: io_sweep.sh [--full] FAULT_IO_LIBRARY FATCL LOG_DIR -- COMMAND [ARGS...]
#   FATCL: the fatcl command line tool (its `cache verify` checks the files)
#   @DIR@ in an argument becomes the run's own folder (e.g. fatcl-compile's
#   --out-dir @DIR@/bundle), where faults are injected.
#   --full: every call index with each errno (default: each function's
#   first, middle and last call, the errnos taken in turn).
set -uo pipefail

full=0
if [[ "${1:-}" == "--full" ]]; then
  full=1
  shift
fi
if [[ $# -lt 5 || "$4" != "--" ]]; then
  echo "usage: $0 [--full] FAULT_IO_LIBRARY FATCL LOG_DIR -- COMMAND [ARGS...]" >&2
  exit 2
fi
lib=$(realpath "$1")
fatcl=$2
logs=$(realpath -m "$3")
shift 4
[[ -f "$lib" ]] || { echo "io_sweep: no fault library at $lib" >&2; exit 2; }
mkdir -p "$logs"

declare -A text=([ENOSPC]="No space left on device" [EIO]="Input/output error")
errnos=(ENOSPC EIO)
runs=0 fallback=0 noted=0 explained=0 unexplained=0

# run NAME RULE COMMAND...: the command with RULE injected under its own
# folder, from an empty cache and the counting run's store; then the
# verification and a clean run. Sets $status, $out, $why.
run() {
  local name=$1 rule=$2
  shift 2
  local dir="$logs/$name"
  rm -rf "$dir" && mkdir -p "$dir/cache"
  [[ -f "$logs/seed-store.json" ]] && cp "$logs/seed-store.json" "$dir/store.json"
  export FATCL_CACHE_DIR="$dir/cache" FATCL_TUNING="$dir/store.json"
  set -- "${@//@DIR@/$dir}"
  LD_PRELOAD="$lib" FATCL_IO_FAULT_UNDER="$dir" FATCL_IO_FAULT="$rule" \
    FATCL_IO_FAULT_REPORT="$dir/report" "$@" > "$dir/out" 2>&1
  status=$?
  out="$dir/out"
  why=""
  if ! "$fatcl" cache verify > "$dir/verify" 2>&1; then
    why="cache verify: $(grep -m2 -E "damaged:|cannot be used" "$dir/verify" | tr '\n' ' ')"
  elif leftover=$(find "$dir" -type f -regextype posix-extended \
                      -regex '.*\.(bin|json|spv|ptx|cpp|hpp|d)\.[A-Za-z0-9]{6}') &&
       [[ -n "$leftover" ]]; then
    why="left temporary files: $leftover"
  elif ! "$@" > "$dir/after" 2>&1; then
    why="the clean run after it failed: $(tail -n 2 "$dir/after" | tr '\n' ' ')"
  fi
  unset FATCL_CACHE_DIR FATCL_TUNING
}

# verdict NAME RULE ERRNO: counts the run.
verdict() {
  local name=$1 rule=$2 errno=$3
  runs=$((runs + 1))
  if [[ -z "$why" ]]; then
    if [[ $status -eq 0 ]]; then
      fallback=$((fallback + 1))
      grep -qF "${text[$errno]}" "$out" && noted=$((noted + 1))
      return
    elif [[ $status -gt 125 ]]; then
      why="exit status $status (a signal)"
    elif grep -qF "${text[$errno]}" "$out"; then
      explained=$((explained + 1))
      return
    else
      why="its error does not name \"${text[$errno]}\": $(grep -m1 -i "error" "$out" | cut -c1-300)"
    fi
  fi
  unexplained=$((unexplained + 1))
  echo "UNEXPLAINED $rule: $why"
}

# Counting run: no fault, and it must succeed; its store is the previous
# database of every run after it.
rm -f "$logs/seed-store.json"
run count "" "$@"
if [[ $status -ne 0 || -n "$why" ]]; then
  echo "io_sweep: the command fails without a fault ($status): $why" >&2
  tail -n 5 "$out" >&2
  exit 1
fi
[[ -f "$logs/count/store.json" ]] && cp "$logs/count/store.json" "$logs/seed-store.json"
mapfile -t counted < <(grep -vE '^(bytes|injected) ' "$logs/count/report")
bytes=$(awk '$1 == "bytes" {print $2}' "$logs/count/report")
calls=0
for line in "${counted[@]}"; do calls=$((calls + ${line#* })); done
echo "io_sweep: $calls file calls (${counted[*]}), $bytes bytes written, without a fault"

e=0
for line in "${counted[@]}"; do
  f=${line% *}
  n=${line#* }
  if [[ $full -eq 1 ]]; then
    indices=$(seq 1 "$n")
  else
    indices=$(printf '%s\n' 1 $(((n + 1) / 2)) "$n" | sort -un)
  fi
  for i in $indices; do
    if [[ $full -eq 1 ]]; then
      chosen=("${errnos[@]}")
    else
      chosen=("${errnos[$((e % ${#errnos[@]}))]}")
      e=$((e + 1))
    fi
    for errno in "${chosen[@]}"; do
      rule="fail:$f:$i:$errno"
      run "$f-$i-$errno" "$rule" "$@"
      verdict "$f-$i-$errno" "$rule" "$errno"
    done
  done
done

# The disk full from the start, half-way through and one byte short.
for left in 0 $((bytes / 2)) $((bytes > 0 ? bytes - 1 : 0)); do
  rule="full:$left"
  run "full-$left" "$rule" "$@"
  verdict "full-$left" "$rule" ENOSPC
done

echo "io_sweep: $runs runs: $fallback ran to a checked result ($noted of them noting the" \
     "failed write), $explained stopped with an error naming the cause, $unexplained unexplained"
[[ $unexplained -eq 0 ]]
