#!/usr/bin/env bash
# Sweeps the failure points of one command through the fault-injecting ICD
# (tests/faults/fault_icd.cpp): runs it once to count its OpenCL calls, then
# once per chosen call with that call failing, then once per odd info
# answer. Each run must end in one of two ways:
#   - exit status 0: a fallback gave a result the command checked itself
#     (fatcl demo compares C with a double-precision reference);
#   - a clear error: exit status 1 to 125 with the failed function and the
#     injected error both named in its output (an odd answer: the parameter
#     named).
# Anything else (a signal, a sanitizer's report, an error that names
# neither) is counted as unexplained and fails the sweep. Each run gets a
# program cache and a store of its own; where FATCL_SWEEP_VERIFY names the
# fatcl tool, its `cache verify` must find them whole afterwards, and a
# clean run over them must succeed: a fault never leaves an entry that
# breaks the next start.
#
# Usage: sweep.sh [--full] FAULT_ICD_LIBRARY LOG_DIR -- COMMAND [ARGS...]
#   --full: every call index of every function (default: each function's
#   first, middle and last call, every error code at least once, every odd
#   answer once).
# The real driver is FATCL_FAULT_TARGET's, else Debian's PoCL.
set -uo pipefail

full=0
if [[ "${1:-}" == "--full" ]]; then
  full=1
  shift
fi
if [[ $# -lt 4 || "$3" != "--" ]]; then
  echo "usage: $0 [--full] FAULT_ICD_LIBRARY LOG_DIR -- COMMAND [ARGS...]" >&2
  exit 2
fi
icd=$1
logs=$2
shift 3
[[ -f "$icd" ]] || { echo "sweep: no fault ICD at $icd" >&2; exit 2; }
mkdir -p "$logs"

errors=(CL_OUT_OF_RESOURCES CL_OUT_OF_HOST_MEMORY CL_BUILD_PROGRAM_FAILURE CL_INVALID_VALUE
        CL_DEVICE_NOT_AVAILABLE CL_MEM_OBJECT_ALLOCATION_FAILURE CL_INVALID_OPERATION)
runs=0 fallback=0 explained=0 unexplained=0

# run NAME RULE: the command with RULE injected, its own cache, then a
# clean run over that cache; sets $status and $out.
run() {
  local name=$1 rule=$2
  shift 2
  local dir="$logs/$name"
  rm -rf "$dir" && mkdir -p "$dir/cache"
  FATCL_CACHE_DIR="$dir/cache" FATCL_TUNING="$dir/store.json" OCL_ICD_VENDORS="$icd" \
    FATCL_FAULT="$rule" FATCL_FAULT_REPORT="$dir/report" "$@" > "$dir/out" 2>&1
  status=$?
  out="$dir/out"
  after=0
  verified=0
  if [[ -n "${FATCL_SWEEP_VERIFY:-}" ]]; then
    FATCL_CACHE_DIR="$dir/cache" FATCL_TUNING="$dir/store.json" \
      "$FATCL_SWEEP_VERIFY" cache verify > "$dir/verify" 2>&1
    verified=$?
  fi
  # (a run that kept nothing leaves nothing to break the next start)
  if [[ -e "$dir/store.json" || -n "$(ls -A "$dir/cache")" ]]; then
    FATCL_CACHE_DIR="$dir/cache" FATCL_TUNING="$dir/store.json" OCL_ICD_VENDORS="$icd" \
      FATCL_FAULT= "$@" > "$dir/after" 2>&1
    after=$?
  fi
}

# verdict NAME RULE WORD...: counts the run; the words must all be in the
# output of a run that failed.
verdict() {
  local name=$1 rule=$2
  shift 2
  runs=$((runs + 1))
  local why=""
  if [[ $verified -ne 0 ]]; then
    why="cache verify after it failed: $(grep -m2 -E "damaged:|cannot be used" "$logs/$name/verify" | tr '\n' ' ')"
  elif [[ $after -ne 0 ]]; then
    why="the clean run after it failed ($after): $(tail -n 2 "$logs/$name/after" | tr '\n' ' ')"
  elif [[ $rule == fail:clRelease* ]] && grep -q "ERROR: LeakSanitizer" "$out" &&
       ! grep -q "ERROR: AddressSanitizer\|runtime error" "$out" &&
       [[ -z "$(grep -A1 -E "^(Direct|Indirect) leak" "$out" | grep -E "^ +#1 " |
                grep -v -E "libpocl|libnvidia|libintelocl|libOpenCL|librusticl|liboclgrind")" ]]; then
    # The release that failed kept its object, as OpenCL says a failed
    # release does: every leak is allocated by the driver.
    explained=$((explained + 1))
    return
  elif grep -q "Sanitizer" "$out"; then
    why="a sanitizer reported: $(grep -m1 "Sanitizer" "$out")"
  elif [[ $status -eq 0 ]]; then
    fallback=$((fallback + 1))
    return
  elif [[ $status -gt 125 ]]; then
    why="exit status $status (a signal)"
  elif grep -q "no OpenCL platform found; ICDs the loader tries" "$out"; then
    # The ICD loader's own call failed (with NVIDIA's driver it asks the
    # platform's ICD suffix before fatcl runs) and it dropped the driver:
    # fatcl names the drivers it tried and what became of each.
    explained=$((explained + 1))
    return
  else
    for word in "$@"; do
      if ! grep -qF -- "$word" "$out"; then
        why="its error does not name $word: $(grep -m1 -i "error" "$out" | cut -c1-300)"
        break
      fi
    done
    if [[ -z "$why" ]]; then
      explained=$((explained + 1))
      return
    fi
  fi
  unexplained=$((unexplained + 1))
  echo "UNEXPLAINED $rule: $why"
}

# Counting run: no fault, and it must succeed.
run count "" "$@"
if [[ $status -ne 0 ]]; then
  echo "sweep: the command fails without a fault ($status):" >&2
  tail -n 5 "$out" >&2
  exit 1
fi
mapfile -t counted < <(grep -vE '^(total|fired) ' "$logs/count/report")
total=$(awk '$1 == "total" {print $2}' "$logs/count/report")
echo "sweep: $total OpenCL calls to ${#counted[@]} functions without a fault"

e=0
for line in "${counted[@]}"; do
  f=${line% *}
  n=${line#* }
  # Retains are not failed: OpenCL lets them fail only for an invalid object
  # or want of host memory, and CLHPP's handle wrappers, which retain on
  # copy, have no way to report it (a copy whose retain failed releases the
  # object once too often).
  [[ $f == clRetain* ]] && continue
  if [[ $full -eq 1 ]]; then
    indices=$(seq 1 "$n")
  else
    indices=$(printf '%s\n' 1 $(((n + 1) / 2)) "$n" | sort -un)
  fi
  for i in $indices; do
    error=${errors[$((e % ${#errors[@]}))]}
    e=$((e + 1))
    rule="fail:$f:$i:$error"
    run "$f-$i" "$rule" "$@"
    # (CLHPP names clCreateCommandQueueWithProperties after the older call)
    verdict "$f-$i" "$rule" "${f%WithProperties}" "$error"
  done
done

# The device lost half-way and near the end: every later call fails.
for at in $((total / 2)) $((total - 1)); do
  [[ $at -ge 1 ]] || continue
  rule="lose:$at"
  run "lose-$at" "$rule" "$@"
  verdict "lose-$at" "$rule" CL_DEVICE_NOT_AVAILABLE
done

# Odd answers to the device queries the loader reads.
odd=(
  CL_DEVICE_NAME:empty CL_DEVICE_NAME:unterminated CL_DEVICE_NAME:oversize
  CL_DEVICE_VENDOR:empty CL_DEVICE_VERSION:empty CL_DEVICE_VERSION:unterminated
  CL_DRIVER_VERSION:empty CL_DRIVER_VERSION:unterminated CL_DEVICE_OPENCL_C_VERSION:empty
  CL_DEVICE_EXTENSIONS:empty CL_DEVICE_EXTENSIONS:oversize CL_DEVICE_IL_VERSION:unterminated
  CL_DEVICE_LOCAL_MEM_SIZE:zero CL_DEVICE_LOCAL_MEM_SIZE:one
  CL_DEVICE_MAX_WORK_GROUP_SIZE:one CL_DEVICE_MAX_WORK_GROUP_SIZE:zero
  CL_DEVICE_MAX_COMPUTE_UNITS:zero CL_DEVICE_MAX_MEM_ALLOC_SIZE:one
  CL_DEVICE_GLOBAL_MEM_SIZE:one CL_DEVICE_MAX_WORK_ITEM_SIZES:zero
  CL_DEVICE_SINGLE_FP_CONFIG:zero
)
for o in "${odd[@]}"; do
  param=${o%:*}
  rule="odd:clGetDeviceInfo:$o"
  run "odd-$param-${o#*:}" "$rule" "$@"
  verdict "odd-$param-${o#*:}" "$rule" "$param"
done
for o in CL_KERNEL_WORK_GROUP_SIZE:one CL_KERNEL_WORK_GROUP_SIZE:zero; do
  param=${o%:*}
  rule="odd:clGetKernelWorkGroupInfo:$o"
  run "odd-$param-${o#*:}" "$rule" "$@"
  verdict "odd-$param-${o#*:}" "$rule" "$param"
done

echo "sweep: $runs runs: $fallback ran to a checked result, $explained stopped with an error" \
     "naming the call (or parameter) and the cause, $unexplained unexplained"
[[ $unexplained -eq 0 ]]
