#!/usr/bin/env bash
# Builds PoCL 3.1 from Debian's pocl-source package with llvm-spirv-15, so that
# it reports SPIR-V_1.2 and runs the SPIR-V tier (Debian's own PoCL does not).
# Built once into a cache folder and reused; prints the .icd file to point
# OCL_ICD_VENDORS at.
#
# Usage: tests/runtimes/pocl-spirv.sh [cache-folder]
#   cache folder: $1, else $FATCL_CACHE/pocl-spirv, else ~/.cache/fatcl/pocl-spirv
# Needs: pocl-source llvm-15-dev libclang-15-dev libclang-cpp15-dev clang-15
#        llvm-spirv-15 libhwloc-dev ocl-icd-dev pkg-config ninja-build cmake
set -euo pipefail
cache="${1:-${FATCL_CACHE:-${HOME:-/root}/.cache/fatcl}/pocl-spirv}"
icd="$cache/pocl-spirv.icd"
lib="$cache/install/lib/libpocl.so"
# The build is reused while the packages it is made from stay the same.
inputs="$(dpkg-query -W pocl-source llvm-15-dev llvm-spirv-15 libclang-cpp15-dev 2>/dev/null || true)"
if [ -f "$icd" ] && [ -f "$lib" ] && [ "$(cat "$cache/inputs" 2>/dev/null)" = "$inputs" ]; then
  echo "$icd"
  exit 0
fi
for f in /usr/src/pocl.tar.xz /usr/bin/llvm-config-15 /usr/bin/llvm-spirv-15; do
  [ -e "$f" ] || { echo "pocl-spirv: missing $f (apt-get install pocl-source llvm-15-dev llvm-spirv-15)" >&2; exit 1; }
done
mkdir -p "$cache"
log="$cache/build.log"
echo "pocl-spirv: building PoCL with SPIR-V intake into $cache (once; about 3 minutes on 2 cores)" >&2
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
         -DENABLE_IPO=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
         -DENABLE_ICD=ON \
         -DENABLE_TESTS=OFF -DENABLE_EXAMPLES=OFF -DENABLE_POCLCC=OFF &&
       cmake --build "$cache/build" &&
       cmake --install "$cache/build"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "pocl-spirv: the build failed; the whole log is $log" >&2
  exit 1
fi
echo "$inputs" > "$cache/inputs"
echo "$lib" > "$icd.tmp"
mv "$icd.tmp" "$icd"
echo "$icd"
