#!/bin/bash
# Every recorded set through /tmp/pred/predict, one summary line each. Build it first
# (from the repository root, after a build in build/):
#   g++ -std=c++17 -O1 -DCL_HPP_TARGET_OPENCL_VERSION=300 -DCL_HPP_MINIMUM_OPENCL_VERSION=120 \
#     -DCL_TARGET_OPENCL_VERSION=300 -Icore/include -Iloader/include -Imatmul/include \
#     -Igemm/include predict.cpp build/matmul/libfatcl_matmul.a build/loader/libfatcl_loader.a \
#     build/core/libfatcl_core.a -lSPIRV-Tools -lcrypto -lOpenCL -o /tmp/pred/predict
cd /work/main/docs/perf
D=/work/main/devices
run() { local dev=$1 f=$2; local t=/tmp/pred/$(echo $f | tr / _).json
  if [[ $f == *.xz ]]; then xz -dc $f > $t; else cp $f $t; fi
  printf "%-55s " "$f"; /tmp/pred/predict $dev $t $V | tail -1; [ -n "$V" ] && /tmp/pred/predict $dev $t v | head -n -1 | grep -v "same" ; }
run $D/intel-cpu-2026.2-epyc-zen4.json zen4-2026-12-07/heldout-intel.json.xz
run $D/pocl-3.1-debian-epyc-zen4.json zen4-2026-12-07/heldout-pocl.json.xz
run $D/intel-cpu-2026.2-epyc-zen4.json cpu-lattice-zen4-2026-12-05/heldout-intel-new.json.xz
run $D/pocl-3.1-debian-epyc-zen4.json cpu-lattice-zen4-2026-12-05/heldout-pocl-new.json.xz
run $D/intel-cpu-2026.2-epyc-zen4.json cpu-heldout-2026-12-05/intel-heldout.json
run $D/pocl-3.1-debian-epyc-zen4.json cpu-heldout-2026-12-05/pocl-heldout.json
run $D/nvidia-h200-580.json h200-random-3-lattice-c.json
run $D/nvidia-h200-580.json h200-random-4-lattice-c.json
run $D/nvidia-h200-580.json h200-random-5-lattice-c.json
run $D/nvidia-h200-580.json h200-heldout-bench.json
run $D/nvidia-h200-580.json h200-random-shapes.json
run $D/nvidia-h200-580.json h200-random-families-1.json
run $D/nvidia-h200-580.json h200-random-families-2.json
run /work/main/docs/perf/devices/intel-cpu-xeon-emerald-rapids.json xeon-unseen/intel-shipped.json.xz
run /work/main/docs/perf/devices/pocl-xeon-emerald-rapids.json xeon-unseen/pocl-shipped-before.json.xz
run /work/main/docs/perf/devices/intel-cpu-xeon-emerald-rapids.json xeon-heldout-2026-12-06/matmul-I.json.xz
run /work/main/docs/perf/devices/pocl-xeon-emerald-rapids.json xeon-heldout-2026-12-06/matmul-P.json.xz
