#!/usr/bin/env bash
# fatcl's two entry points on a fresh Debian 12 machine:
#   ./run.sh demo [fatcl demo options]   build, then run the demo on the default device
#   ./run.sh test [ctest options]        build, then run every test on four runtimes
# Each installs the Debian packages it lacks (as root; otherwise it prints the
# apt-get line and stops). FATCL_BUILD_DIR picks the build folder (build/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
job="${1:-}"
[ $# -gt 0 ] && shift
build="${FATCL_BUILD_DIR:-build}"

# Build: compiler, loader, tool. The toolchain packages (llvm-15 and libclc-15
# for the PTX tier) let the build check that generated/ is fresh; the runtime
# packages give the demo a device.
packages="cmake ninja-build g++ ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers
  nlohmann-json3-dev libcli11-dev libssl-dev spirv-tools spirv-headers clang-15 llvm-spirv-15
  llvm-15 libclc-15 pocl-opencl-icd libclblast-dev"
case "$job" in
  demo) ;;
  test)
    # Tests: GoogleTest, rusticl, Oclgrind, and what PoCL-with-SPIR-V builds from.
    packages="$packages libgtest-dev mesa-opencl-icd oclgrind pocl-source llvm-15-dev
      libclang-15-dev libclang-cpp15-dev libhwloc-dev ocl-icd-dev pkg-config" ;;
  *)
    echo "usage: ./run.sh demo [fatcl demo options] | ./run.sh test [ctest options]" >&2
    exit 2 ;;
esac

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "fatcl needs these Debian packages; as root run:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 1
  fi
  echo "fatcl: installing$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$missing >/dev/null
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFATCL_TEST=$([ "$job" = test ] && echo ON || echo OFF) >/dev/null
cmake --build "$build"

if [ "$job" = demo ]; then
  exec "$build/tools/fatcl" demo "$@"
fi

# PoCL built with SPIR-V intake, once per machine (cached under ~/.cache/fatcl).
# A failed build does not stop the other tests: its own entries fail, saying why.
if ! tests/runtimes/pocl-spirv.sh >/dev/null; then
  echo "fatcl: PoCL with SPIR-V intake was not built (reason above); its tests will fail," \
       "the others run" >&2
fi
icd="$(tests/runtimes/pocl-spirv.sh --icd-path)"
cmake -S . -B "$build" -DFATCL_POCL_SPIRV_ICD="$icd" >/dev/null
exec ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
