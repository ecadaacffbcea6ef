#!/bin/bash
# usage: heldout.sh TAG  (both runtimes, shipped entries only, every variant)
cd "$(dirname "$0")/../../.."
S=136x113x78,13x262x547,7x1313x142,1134x12x1642,89x275x289,43x78x360,53x152x147,11x993x954,414x80x159,6x717x776,41x1574x187,166x11x1950,372x1716x4,1216x15x91,65x973x55,34x295x1109,148x745x11,1410x20x732,102x1301x713,17x715x1684,1935x1123x52,28x1154x65,75x691x208,25x147x1346
B=${FATCL:-build/tools/fatcl}
date -u
FATCL_TUNING=off OCL_ICD_VENDORS=$(tests/runtimes/intel-cpu.sh --icd-path) $B bench --top 0 --no-clblast --no-vendor --json --sizes $S > /tmp/heldout-intel-$1.json 2> /tmp/heldout-intel-$1.err
date -u
FATCL_TUNING=off OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd $B bench --top 0 --no-clblast --no-vendor --json --sizes $S > /tmp/heldout-pocl-$1.json 2> /tmp/heldout-pocl-$1.err
date -u
