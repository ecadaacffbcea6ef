#!/usr/bin/env bash
# The second CI mode (.ci/run calls it after ./run.sh test): fatcl built with
# clang-15 under AddressSanitizer + UndefinedBehaviorSanitizer (any report
# fails), then the unit tests, the bad-input suite, the fault sweeps, the runtime tests on
# Debian's PoCL (the automatic choice and a few variants), the consumer
# projects that take an installed fatcl (built with the same sanitizers, their
# kernel family run on both PoCLs), and every fuzz target for
# FATCL_FUZZ_SECONDS (default 20) from its seeds, one per core at a time;
# then the threaded tests under ThreadSanitizer.
#   tests/sanitize.sh [build-folder-prefix]     (default: build-)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
prefix="${1:-build-}"
seconds="${FATCL_FUZZ_SECONDS:-20}"
jobs="$(nproc)"
start=$(date +%s)
say() { echo "sanitize: $* ($(( $(date +%s) - start )) s)" >&2; }

# ./run.sh test's build folder (FATCL_BUILD_DIR, relative to the checkout or
# absolute), whose PoCL kernel cache the sanitized tests read.
main_build="${FATCL_BUILD_DIR:-build}"
[[ "$main_build" == /* ]] || main_build="$root/$main_build"
# The kernels come from the committed generated/ copies (FATCL_CLANG off):
# the sanitized build checks fatcl, not clang's speed under ASan.
common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-15
        -DCMAKE_CXX_COMPILER=clang++-15 -DFATCL_CLANG= -DFATCL_CHECK_GENERATED=OFF
        "-DFATCL_POCL_SPIRV_ICD=$(tests/runtimes/pocl-spirv.sh --icd-path)"
        # PoCL's kernel cache of ./run.sh test's build, which compiled the same
        # programs (tests/CMakeLists.txt says what it saves)
        "-DFATCL_TEST_POCL_CACHE=$main_build/tests/pocl-cache")

say "AddressSanitizer + UndefinedBehaviorSanitizer build"
asan="${prefix}asan"
cmake -S . -B "$asan" "${common[@]}" -DFATCL_INSTALL=ON -DFATCL_FUZZ=ON -DFATCL_FUZZ_SECONDS="$seconds" \
  "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -fsanitize=fuzzer-no-link" \
  >/dev/null
# (everything: the consumers install this build)
cmake --build "$asan" -j "$jobs" >"$asan/build.log" 2>&1 || { tail -n 40 "$asan/build.log"; exit 1; }
say "built; testing"
# LeakSanitizer is on everywhere: where a driver is loaded, what PoCL itself
# keeps to the end of the process is suppressed (tests/lsan.supp); Intel's
# runtime kept nothing in the bad-input suite.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
lsan=(ASAN_OPTIONS=detect_leaks=1 "LSAN_OPTIONS=suppressions=$root/tests/lsan.supp")
# ctest ARGS with LeakSanitizer on, in the current folder. LeakSanitizer's
# own tracer now and then crashes at a process's exit after the tests passed
# ("Tracer caught signal 11" and "LeakSanitizer has encountered a fatal
# error", no leak reported: pocl.gemm here on 2026-12-05, passing when run
# again; google/sanitizers#1353). Where a run fails and its output holds
# that crash, the failed entries run once more, and their second run
# decides; any other failure stands.
ctest_lsan() {
  local log crashed=0
  log="$(mktemp)"
  if ctest "$@" 2>&1 | tee "$log"; then
    rm -f "$log"
    return 0
  fi
  grep -q "Tracer caught signal" "$log" &&
    grep -q "LeakSanitizer has encountered a fatal error" "$log" && crashed=1
  rm -f "$log"
  [ "$crashed" = 1 ] || return 1
  say "LeakSanitizer's tracer crashed (no leak reported): the failed entries once more"
  ctest --rerun-failed --output-on-failure
}
(cd "$asan" && export ASAN_OPTIONS=detect_leaks=1 &&
   ctest_lsan -j "$jobs" --output-on-failure -R '^unit\.|\.regressions$')
(cd "$asan" && export "${lsan[@]}" && ctest_lsan --output-on-failure -L bad_input)
# In one ctest run, as many at a time as there are cores (one after another
# the three sets took 214, 12 and 64 s on 2 Zen 4 cores, the sweep alone
# 142 of the first's), with LeakSanitizer on: what PoCL itself keeps to the
# end of the process is suppressed (tests/lsan.supp), fatcl's own leaks are
# not.
# - Every OpenCL call of three checked GEMM calls (Matmul, Sgemm, Dgemm: the
#   loader, the matmul and GEMM entry points) failed in turn (tests/faults):
#   any ASan or UBSan report in a run fails the sweep; where an injected
#   release failed, its object stays the driver's (the sweep accepts leaks
#   allocated by a driver then, and only then). (The demo, tune and cache
#   warm sweeps, the file faults, the killed writers and the soak run in
#   ./run.sh test; under ASan here they took 4 more minutes.)
# - The runtime tests on Debian's PoCL.
# - The consumers that install this build and link it: find_package (its own
#   kernels compiled by the sanitized fatcl-compile, its program and fatcl
#   validate, then its family on both PoCLs) and a product linking
#   fatcl::matmul only. (add_subdirectory and FetchContent compile fatcl's
#   code a second time, which this build already checks; they run in
#   ./run.sh test.)
# - Every fuzz target for FATCL_FUZZ_SECONDS from its seeds.
say "fault sweep, PoCL, consumers; fuzzing ${seconds} s per target; ${jobs} at a time"
(cd "$asan" && export "${lsan[@]}" && ctest_lsan -j "$jobs" --output-on-failure \
   -R '^(faults\.gemm-every-call|pocl\.(auto|gemm|gemm-c|matmul_naive\.source|matmul_tiled_TILE16\.source|matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1\.source)|consumer\.(install|find-package|find-package\.on-pocl|find-package\.on-pocl-spirv|matmul-only)|fuzz\.[a-z_]+)$')

say "ThreadSanitizer build (the threaded tests)"
tsan="${prefix}tsan"
# (each file on its own: the one build that checks every file's includes)
cmake -S . -B "$tsan" "${common[@]}" -DFATCL_INSTALL=OFF -DFATCL_UNITY_BUILD=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" >/dev/null
cmake --build "$tsan" -j "$jobs" --target fatcl_unit_tests fatcl_runtime_tests \
  >"$tsan/build.log" 2>&1 || { tail -n 40 "$tsan/build.log"; exit 1; }
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
(cd "$tsan" && ctest --output-on-failure -R '^unit\.(Store|ProgramCache)\.')
(cd "$tsan" && FATCL_TEST_PLATFORM="Portable Computing Language" \
   OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd FATCL_TUNING=off FATCL_CACHE=0 \
   TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$root/tests/tsan.supp" \
   ./tests/fatcl_runtime_tests \
     --gtest_filter='Auto.ThreadsShareTheProgramsBuiltInTheProcess:Auto.OnlineLearning*')
say "done"
