#!/usr/bin/env bash
# Builds PoCL 3.1 from Debian's pocl-source package with llvm-spirv-15, so that
# it reports SPIR-V_1.2 and runs the SPIR-V tier (Debian's own PoCL does not).
# Built once into a cache folder and reused; prints the .icd file to point
# OCL_ICD_VENDORS at.
#
# Usage: tests/runtimes/pocl-spirv.sh [--icd-path] [cache-folder]
#   cache folder: the argument, else $FATCL_RUNTIMES_DIR/pocl-spirv, else ~/.cache/fatcl/pocl-spirv
#   --icd-path: print where the .icd file is (or would be) and build nothing
# When the build fails, it says why on stderr, writes the reason to
# <cache>/build-failed.txt (the runtime tests report it) and exits 1.
# Needs: pocl-source llvm-15-dev libclang-15-dev libclang-cpp15-dev clang-15
#        llvm-spirv-15 libhwloc-dev ocl-icd-dev pkg-config ninja-build cmake
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runtime-folder.sh
. "$here/runtime-folder.sh"
runtime_folder pocl-spirv "PoCL with SPIR-V could not be built" "$@"
lib="$cache/install/lib/libpocl.so"

# PoCL's kernel library is built for one CPU; LLVM 15 does not know the
# newest ones (Zen 5), so the name is chosen here (llc-host-cpu.sh says how).
host_cpu="$("$here/llc-host-cpu.sh" 2>&1)" || fail "no CPU name for PoCL's LLC_HOST_CPU: $host_cpu"
# The build is reused while its packages and the CPU it is built for stay the same.
inputs="$(dpkg-query -W pocl-source llvm-15-dev llvm-spirv-15 libclang-cpp15-dev 2>/dev/null || true)
LLC_HOST_CPU=$host_cpu"
if [ -f "$icd" ] && [ -f "$lib" ] && [ "$(cat "$cache/inputs" 2>/dev/null)" = "$inputs" ]; then
  echo "$icd"
  exit 0
fi
for f in /usr/src/pocl.tar.xz /usr/bin/llvm-config-15 /usr/bin/llvm-spirv-15; do
  [ -e "$f" ] || fail "missing $f (apt-get install pocl-source llvm-15-dev llvm-spirv-15)"
done
mkdir -p "$cache"
rm -f "$failed" "$icd"
log="$cache/build.log"
echo "pocl-spirv: building PoCL with SPIR-V intake for CPU $host_cpu into $cache (once; about 3 minutes on 2 cores)" >&2
rm -rf "$cache/src" "$cache/build" "$cache/install"
cd "$cache"  # PoCL's configure checks write files into the current folder
tar xJf /usr/src/pocl.tar.xz -C "$cache"
mv "$cache/pocl" "$cache/src"
# IPO on fails to link with Debian's toolchain, and so does a build without
# -fPIC objects. The kernel library is built for this machine's CPU only (the
# cache is per machine), which keeps the build short.
if ! { cmake -S "$cache/src" -B "$cache/build" -G Ninja \
         -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_INSTALL_PREFIX="$cache/install" \
         -DWITH_LLVM_CONFIG=/usr/bin/llvm-config-15 \
         -DLLVM_SPIRV=/usr/bin/llvm-spirv-15 \
         -DLLC_HOST_CPU="$host_cpu" \
         -DENABLE_IPO=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
         -DENABLE_ICD=ON \
         -DENABLE_TESTS=OFF -DENABLE_EXAMPLES=OFF -DENABLE_POCLCC=OFF &&
       cmake --build "$cache/build" &&
       cmake --install "$cache/build"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  # The first CMake or compiler error names the cause.
  cause="$(grep -m 1 -A 2 -E "CMake Error|error:|FAILED:" "$log" | tr -s ' \n' ' ' | cut -c 1-400)"
  fail "the build failed (${cause:-see the log}); the whole log is $log"
fi
echo "$inputs" > "$cache/inputs"
echo "$lib" > "$icd.tmp"
mv "$icd.tmp" "$icd"
echo "$icd"
