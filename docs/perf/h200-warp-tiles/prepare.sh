#!/bin/bash
# Makes what cands1.txt names (k/*.ptx) and the harness, on the Debian
# machine (clang-15, llvm-15, libclc-15, ptxas): docs/perf/h200-warp-tiles/prepare.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
g++ -O2 -std=c++17 h.cpp -o h -lOpenCL
mkdir -p k
G=../../../generated/matmul_blocked/matmul_blocked
cp ${G}_MWG128_NWG128_KWG8_MDIMC8_NDIMC16_VWM4_VWN4_SA1_SB1_KWI8_PF1_FMA0_DB1_VWA4.ptx k/ship128.ptx
cp ${G}_MWG128_NWG256_KWG8_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI8_PF1_FMA0_DB1_VWA4.ptx k/ship128x256.ptx
A1="-DBM=128 -DBN=128 -DBK=8 -DTM=8 -DTN=8 -DWR=4 -DWC=8"
./ptxgen.sh wt.cl k/a1r128.ptx 32 8 128 $A1
./ptxgen.sh wt.cl k/a1r0.ptx 32 8 0 $A1
./ptxgen.sh wt.cl k/a1s3r128.ptx 32 8 128 $A1 -DSTASH_AT=3
./ptxgen.sh wt.cl k/a1s1r128.ptx 32 8 128 $A1 -DSTASH_AT=1
./ptxgen.sh wt.cl k/a2r128.ptx 32 8 128 -DBM=128 -DBN=128 -DBK=8 -DTM=8 -DTN=8 -DWR=8 -DWC=4
./ptxgen.sh wt.cl k/a3r128.ptx 32 8 128 -DBM=128 -DBN=128 -DBK=16 -DTM=8 -DTN=8 -DWR=4 -DWC=8
./ptxgen.sh wt.cl k/a4r0.ptx 32 8 0 -DBM=128 -DBN=256 -DBK=8 -DTM=8 -DTN=16 -DWR=4 -DWC=8
./ptxgen.sh wt.cl k/a5r0.ptx 32 8 0 -DBM=256 -DBN=128 -DBK=8 -DTM=16 -DTN=8 -DWR=4 -DWC=8
./ptxgen.sh wt.cl k/a6r128.ptx 32 4 128 -DBM=128 -DBN=64 -DBK=8 -DTM=8 -DTN=8 -DWR=4 -DWC=8
