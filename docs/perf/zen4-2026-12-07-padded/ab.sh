#!/bin/bash
# usage: ab.sh SIZES ROUNDS OUTDIR [extra bench args]
S=$1; R=$2; O=$3; shift 3
mkdir -p $O
ICD=$(cd /work/main && tests/runtimes/intel-cpu.sh --icd-path)
for r in $(seq 1 $R); do for rt in intel pocl; do for b in ${AB:-base pad}; do
  if [ $rt = intel ]; then V=$ICD; else V=/etc/OpenCL/vendors/pocl.icd; fi
  OCL_ICD_VENDORS=$V /tmp/fatcl-$b bench --gemm --top 2 --reps 9 --no-clblast --no-vendor --json --sizes $S "$@" > $O/$rt-$b-$r.json 2>/dev/null
done; done; done
