#!/usr/bin/env bash
# Tests llc-host-cpu.sh on /proc/cpuinfo flag sets of real CPUs, LLVM knowing
# them or not, and checks that the name chosen for this machine is one llc-15
# accepts. Prints one line per case; exits 1 on any mismatch.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
choose="$here/llc-host-cpu.sh"
unset FATCL_LLC_HOST_CPU
failures=0

# AMD EPYC family 26 (Zen 5) as a KVM guest: LLVM 15 prints "(unknown)".
zen5="fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext perfctr_core ssbd ibrs ibpb stibp ibrs_enhanced vmmcall fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 clzero xsaveerptr rdpru wbnoinvd arat avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid movdiri movdir64b fsrm avx512_vp2intersect flush_l1d"
# Intel Haswell (Xeon E5-2680 v3).
haswell="fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm cpuid_fault epb invpcid_single pti intel_ppin tpr_shadow vnmi flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm xsaveopt cqm_llc cqm_occup_llc dtherm ida arat pln pts md_clear flush_l1d"
# Intel Sandy Bridge (Xeon E5-2670): AVX without AVX2.
sandybridge="fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic popcnt tsc_deadline_timer aes xsave avx lahf_lm epb pti tpr_shadow vnmi flexpriority ept vpid xsaveopt dtherm ida arat pln pts"
# Intel Core 2 (Merom): SSSE3 only.
core2="fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx lm constant_tsc arch_perfmon pebs bts rep_good nopl cpuid aperfmperf pni dtes64 monitor ds_cpl vmx est tm2 ssse3 cx16 xtpr pdcm lahf_lm"

expect() {  # expect NAME WANT ARGS...
  local name="$1" want="$2"
  shift 2
  local got
  got="$("$choose" "$@" 2>&1)"
  if [ "$got" = "$want" ]; then
    echo "ok   $name: $got"
  else
    echo "FAIL $name: got '$got', want '$want'"
    failures=$((failures + 1))
  fi
}

expect "Zen 5, LLVM says (unknown)" skylake-avx512 --llc "(unknown)" --flags "$zen5"
expect "Haswell, LLVM says (unknown)" haswell --llc "(unknown)" --flags "$haswell"
expect "Sandy Bridge, LLVM says (unknown)" sandybridge --llc "(unknown)" --flags "$sandybridge"
expect "Core 2, LLVM says (unknown)" x86-64 --llc "(unknown)" --flags "$core2"
expect "Zen 5 without AVX-512 exposed by the hypervisor" haswell --llc "(unknown)" \
  --flags "$(echo "$zen5" | sed 's/ avx512[a-z0-9_]*//g')"
expect "LLVM knows the CPU: its name is kept" znver3 --llc znver3 --flags "$zen5"
expect "LLVM says generic" skylake-avx512 --llc generic --flags "$zen5"
FATCL_LLC_HOST_CPU=znver4 expect "FATCL_LLC_HOST_CPU overrides" znver4 --llc "(unknown)" --flags "$zen5"

if "$choose" --llc "(unknown)" --flags "" >/dev/null 2>&1; then
  echo "FAIL no flags and an unknown CPU must be an error"
  failures=$((failures + 1))
else
  echo "ok   no flags and an unknown CPU: error"
fi

# This machine: the chosen name must be one llc-15 accepts.
if command -v llc-15 >/dev/null; then
  mine="$("$choose")" || { echo "FAIL this machine: no choice"; exit 1; }
  warning="$(llc-15 -mcpu="$mine" -o /dev/null < /dev/null 2>&1 | grep -i "not a recognized" || true)"
  if [ -n "$mine" ] && [ -z "$warning" ]; then
    echo "ok   this machine: $mine (llc-15 accepts it)"
  else
    echo "FAIL this machine: '$mine' $warning"
    failures=$((failures + 1))
  fi
fi
[ "$failures" -eq 0 ]
