#!/usr/bin/env bash
# Build-check-time sweep on whatever OpenCL device the ICD loader shows first
# (used on the NVIDIA H200 machine, where the source tier is the one that
# runs): every variant of every bundled family against the reference, the
# automatic choice, then fatcl bench (JSON, chart and text). Writes into OUT_DIR.
#
# Usage: tools/sweep.sh BIN_DIR OUT_DIR [bench options...]
#   BIN_DIR holds fatcl and fatcl_runtime_tests (e.g. build/tools and build/tests
#   copied into one folder); run from the project root (reads generated/).
set -uo pipefail
bin="$1"; out="$2"; shift 2
mkdir -p "$out"
"$bin/fatcl" devices 2>&1 | tee "$out/devices.txt"
platform=$("$bin/fatcl" devices | sed -n 's/^platform 0: \(.*\) (.*/\1/p')
variants=$(sed -n 's/^      "name": "\(.*\)",$/\1/p' generated/*/manifest.json)
{
  echo "== Auto (expect source tier)"
  FATCL_TEST_PLATFORM="$platform" FATCL_TEST_EXPECT_TIER=source FATCL_REQUIRE_RUNTIMES=1 \
    "$bin/fatcl_runtime_tests" --gtest_filter='Auto.*' 2>&1 | tail -n 3
  for v in $variants; do
    result=$(FATCL_TEST_PLATFORM="$platform" FATCL_TEST_VARIANT="$v" FATCL_TEST_TIER=source \
      FATCL_REQUIRE_RUNTIMES=1 "$bin/fatcl_runtime_tests" --gtest_filter='Sizes/*' 2>&1 | tail -n 1)
    echo "$v: $result"
  done
} 2>&1 | tee "$out/tests.txt"
"$bin/fatcl" bench --json --chart "$out/bench.svg" "$@" > "$out/bench.json" 2> "$out/bench.progress"
tail -n 2 "$out/bench.progress"
python3 - "$out/bench.json" <<'EOF' | tee "$out/bench-summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
print(r["device"][:120])
for s in r["sizes"]:
    res = {(x["kernel"], x["variant"]): x for x in s["results"]}
    cl = [x for x in s["results"] if x["kernel"] == "CLBlast"]
    naive = [x for x in s["results"] if x["kernel"] == "naive"]
    print(f'{s["label"]:>16}: best {s["best_fatcl_gflops"]:9.1f} GFLOP/s ({s["best_fatcl_variant"]}), '
          f'CLBlast {cl[0]["gflops"] if cl else 0:9.1f}, naive {naive[0]["gflops"] if naive else 0:8.1f}, '
          f'best/CLBlast {s["best_fatcl_vs_clblast"] or 0:.2f}, auto/best {s["auto_vs_best"] or 0:.2f} ({s["auto_variant"]})')
EOF
