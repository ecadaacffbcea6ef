#!/usr/bin/env bash
# fatcl's two entry points on a fresh Debian 12 machine:
#   ./run.sh demo [fatcl demo options]   build, then run the demo on the default device
#   ./run.sh test [ctest options]        build, then run every test on five runtimes
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
    # OpenBLAS: the vendor BLAS fatcl bench times beside CPU devices.
    packages="$packages libgtest-dev mesa-opencl-icd oclgrind pocl-source llvm-15-dev
      libclang-15-dev libclang-cpp15-dev libhwloc-dev ocl-icd-dev pkg-config libopenblas0-pthread"
    # pip, for Intel's OpenCL CPU runtime (PyPI), where no python3 has it.
    python3 -m pip --version >/dev/null 2>&1 || /usr/bin/python3 -m pip --version >/dev/null 2>&1 ||
      packages="$packages python3-pip" ;;
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
# Intel's OpenCL CPU runtime, a stock runtime that takes SPIR-V, from PyPI
# (pinned wheels), once per machine; a failed install is reported the same way.
if ! tests/runtimes/intel-cpu.sh >/dev/null; then
  echo "fatcl: Intel's OpenCL CPU runtime was not installed (reason above); its tests will fail," \
       "the others run" >&2
fi
cmake -S . -B "$build" -DFATCL_POCL_SPIRV_ICD="$(tests/runtimes/pocl-spirv.sh --icd-path)" \
      -DFATCL_INTEL_CPU_ICD="$(tests/runtimes/intel-cpu.sh --icd-path)" >/dev/null
exec ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
