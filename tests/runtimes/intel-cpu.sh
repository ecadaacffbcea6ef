#!/usr/bin/env bash
# Installs Intel's OpenCL runtime for CPUs (a stock vendor runtime that takes
# SPIR-V 1.0-1.4, on any x86-64 CPU) from PyPI into a cache folder, once per
# machine, and prints the .icd file to point OCL_ICD_VENDORS at:
#   OCL_ICD_VENDORS=$(tests/runtimes/intel-cpu.sh) build/tools/fatcl demo
#
# Usage: tests/runtimes/intel-cpu.sh [--icd-path] [cache-folder]
#   cache folder: the argument, else $FATCL_RUNTIMES_DIR/intel-cpu, else ~/.cache/fatcl/intel-cpu
#   --icd-path: print where the .icd file is (or would be) and install nothing
# The wheels and their SHA-256 are pinned in intel-cpu-requirements.txt. When
# the install fails, it says why on stderr, writes the reason to
# <cache>/build-failed.txt (the runtime tests report it) and exits 1.
# Needs: python3 with pip (any: --prefix installs outside every environment),
# and PyPI. About 280 MB downloaded, 810 MB installed; nothing written
# elsewhere, no root, no LD_LIBRARY_PATH (the libraries' runpath is $ORIGIN).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/intel-cpu-requirements.txt"
# shellcheck source=runtime-folder.sh
. "$here/runtime-folder.sh"
runtime_folder intel-cpu "Intel's OpenCL CPU runtime could not be installed" "$@"
lib="$cache/install/lib/libintelocl.so"

# Reused while the pinned wheels stay the same.
inputs="$(sha256sum < "$requirements")"
if [ -f "$icd" ] && [ -f "$lib" ] && [ "$(cat "$cache/inputs" 2>/dev/null)" = "$inputs" ]; then
  echo "$icd"
  exit 0
fi
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -m pip --version >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
[ -n "$python" ] || fail "no python3 with pip (apt-get install python3-pip)"
mkdir -p "$cache"
rm -rf "$failed" "$icd" "$cache/install"
log="$cache/install.log"
echo "intel-cpu: installing Intel's OpenCL CPU runtime from PyPI into $cache (once; about 280 MB)" >&2
# --prefix, not --target: --target leaves out the libraries, which the
# wheels place in <prefix>/lib, outside site-packages.
if ! "$python" -m pip install --disable-pip-version-check --no-cache-dir --no-warn-script-location \
       --require-hashes --only-binary :all: --prefix "$cache/install" -r "$requirements" \
       >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  cause="$(grep -m 1 -E "ERROR|error:" "$log" | cut -c 1-400)"
  fail "pip install failed (${cause:-see the log}); the whole log is $log"
fi
[ -f "$lib" ] || fail "pip installed no $lib (see $log)"
# Every library it needs must resolve (the ICD loader would skip it silently).
unresolved="$(ldd "$lib" 2>&1 | grep "not found" | tr -s ' \t\n' ' ' || true)"
[ -z "$unresolved" ] || fail "$lib does not load: $unresolved"
echo "$inputs" > "$cache/inputs"
echo "$lib" > "$icd.tmp"
mv "$icd.tmp" "$icd"
echo "$icd"
