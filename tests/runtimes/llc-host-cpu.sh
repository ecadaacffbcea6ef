#!/usr/bin/env bash
# Prints the CPU name to build PoCL's kernel library for (PoCL's LLC_HOST_CPU).
#
# LLVM 15 names the CPUs it knows (`llc-15 --version`: "Host CPU: znver3") and
# that name is used as is. Newer CPUs it reports as "(unknown)" (AMD family 26,
# Zen 5), and PoCL's configure then stops. For those the name is chosen from
# the CPU's feature flags: the newest LLVM CPU whose instruction set the flags
# cover, so the kernel library uses AVX-512 or AVX2 where the CPU has them.
#
# Usage:
#   llc-host-cpu.sh                          this machine (llc-15, /proc/cpuinfo)
#   llc-host-cpu.sh --llc NAME --flags "..." a given llc answer and flag set (tests)
# FATCL_LLC_HOST_CPU, when set, overrides the choice.
set -euo pipefail

llc_name=""
flags=""
given=0
while [ $# -gt 0 ]; do
  case "$1" in
    --llc) llc_name="$2"; given=1; shift 2 ;;
    --flags) flags="$2"; given=1; shift 2 ;;
    *) echo "llc-host-cpu: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -n "${FATCL_LLC_HOST_CPU:-}" ]; then
  echo "$FATCL_LLC_HOST_CPU"
  exit 0
fi

if [ "$given" -eq 0 ]; then
  llc="${FATCL_LLC:-llc-15}"
  if ! out="$("$llc" --version 2>&1)"; then
    echo "llc-host-cpu: $llc --version failed (apt-get install llvm-15)" >&2
    exit 1
  fi
  llc_name="$(printf '%s\n' "$out" | sed -n 's/^ *Host CPU: *//p' | head -n 1)"
  flags="$(sed -n 's/^flags[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)"
fi

# LLVM knows the CPU: keep its name (PoCL's run time asks LLVM the same).
if [ -n "$llc_name" ] && [ "$llc_name" != "(unknown)" ] && [ "$llc_name" != "generic" ]; then
  echo "$llc_name"
  exit 0
fi

has_all() {
  local f
  for f in "$@"; do
    case " $flags " in *" $f "*) ;; *) return 1 ;; esac
  done
}

if [ -z "$flags" ]; then
  echo "llc-host-cpu: LLVM does not know this CPU and no x86 feature flags were found" \
       "(not an x86-64 machine?); set FATCL_LLC_HOST_CPU to a name from 'llc-15 -mcpu=help'" >&2
  exit 1
fi
if has_all avx512f avx512cd avx512bw avx512dq avx512vl avx2 fma bmi1 bmi2 f16c movbe; then
  echo skylake-avx512
elif has_all avx2 fma bmi1 bmi2 f16c movbe; then
  echo haswell
elif has_all avx sse4_2 popcnt; then
  echo sandybridge
elif has_all sse4_2 popcnt ssse3; then
  echo nehalem
else
  echo x86-64
fi
