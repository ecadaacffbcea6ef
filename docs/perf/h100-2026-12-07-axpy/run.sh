#!/usr/bin/env bash
# usage: bash dev/run.sh STAGE...
set -u
source .device-kit/setup.sh
cd dev && xz -dkf *.xz && chmod +x fatcl-new fatcl_gemm_tests && cd ..
B=dev/fatcl-new
O=$OUT/r; mkdir -p $O
S1=4616x484x4,38x992x461,418x8623x2774,32x424x6494,5063x706x20,10247x10396x83,3887x1081x145,6641x242x3259,12508x1386x1060,596x340x8742,12840x127x295,65x311x5498
S2=4198x34x14068,1020x7717x16,16071x427x44,2655x10x2882,13659x1392x481,4776x163x4103,26x11242x3004,979x55x1833,1214x2618x552,16x3782x4038,2071x662x1184,1686x1328x481,4662x66x1434,13x2587x7825,1087x749x449,7632x9x8559
pack() { tar cJf $OUT/all.tar.xz -C $OUT r; }
for st in "$@"; do
  date -u +"== $st %T" | tee -a $O/log.txt
  case $st in
  dev) $B devices > $O/devices.txt 2>&1; nvidia-smi >> $O/devices.txt 2>&1;;
  ax1) FATCL_TUNING=off timeout 200 $B bench --gemm --top 0 --tier all --no-clblast --json --sizes 1x8192x8192,1x16384x16384,1x4096x4096,1x8192x1024,1x2048x2048 > $O/ax1.json 2> $O/ax1.err;;
  axT) FATCL_TUNING=off timeout 100 $B bench --gemm --transA --top 0 --no-clblast --no-vendor --json --sizes 8192x1x8192,4096x1x4096 > $O/axT.json 2> $O/axT.err;;
  s12) FATCL_TUNING=off timeout 200 $B bench --gemm --top 1 --no-clblast --no-vendor --json --sizes $S1,$S2 > $O/s12-shipped.json 2> $O/s12-shipped.err;;
  ax4) FATCL_TUNING=off timeout 150 $B bench --gemm --top 0 --no-clblast --no-vendor --json --sizes 2x8192x8192,4x8192x8192,8x8192x8192,16x8192x8192,4x2048x2048 > $O/ax4.json 2> $O/ax4.err;;
  landed) FATCL_TUNING=off timeout 120 $B bench --gemm --forms all --top 1 --no-vendor --json --sizes 1x8192x8192,8192x1x8192,4096x1x4096,2000x1x1500,1x16384x16384 > $O/landed-forms.json 2> $O/landed-forms.err
     FATCL_TUNING=off timeout 60 $B bench --gemm --precision double --forms all --top 1 --no-vendor --json --sizes 1x8192x8192,8192x1x8192 > $O/landed-double.json 2> $O/landed-double.err
     FATCL_TUNING=off timeout 60 $B bench --gemm --top 1 --json --sizes 1x8192x8192,8192x1x8192,1x4096x4096 > $O/landed-nn.json 2> $O/landed-nn.err;;
  steps) FATCL_TUNING=off timeout 120 $B bench --gemm --forms all --top 1 --no-clblast --no-vendor --json --sizes 2000x1x1500,1000x1x1000,4096x1x4096,8192x1x8192,1x2000x1500,3000x1x600 > $O/steps-forms.json 2> $O/steps-forms.err;;
  narrow) FATCL_TUNING=off timeout 150 $B bench --gemm --transA --top 0 --no-clblast --no-vendor --json --sizes 1000x1x1500,1500x1x1500,2000x1x1500,2500x1x2500,3000x1x3000,4096x1x4096,2000x1x8192,8192x1x1024,6000x1x6000 > $O/narrow.json 2> $O/narrow.err;;
  model) FATCL_TUNING=off timeout 120 $B bench --gemm --forms all --top 1 --no-vendor --json --sizes 2000x1x1500,1x2000x1500,3000x1x3000,4096x1x4096,8192x1x8192,1000x1x1000 > $O/model-forms.json 2> $O/model-forms.err
     FATCL_TUNING=off timeout 60 $B bench --gemm --transA --top 1 --no-clblast --no-vendor --json --sizes 2000x1x1500,2500x1x2500,6000x1x6000 > $O/model-tn.json 2> $O/model-tn.err;;
  shortk) FATCL_TUNING=off timeout 120 $B bench --gemm --top 0 --no-clblast --no-vendor --json --sizes 1000x1x1000,4096x1x256,8192x1x512,2000x1x100,4096x1x64,6000x1x6000,3000x1x3000,8192x1x16 > $O/shortk-nn.json 2> $O/shortk-nn.err
     FATCL_TUNING=off timeout 80 $B bench --gemm --top 0 --no-clblast --no-vendor --json --sizes 1x8192x64,1x4096x128,1x1000x1000,1x8192x16,1x2000x100 > $O/shortk-row.json 2> $O/shortk-row.err;;
  forms) FATCL_TUNING=off timeout 120 $B bench --gemm --forms all --top 1 --no-vendor --json --sizes 1x8192x8192,8192x1x8192,4096x1x4096 > $O/forms.json 2> $O/forms.err;;
  double) FATCL_TUNING=off timeout 90 $B bench --gemm --precision double --forms all --top 1 --no-vendor --json --sizes 1x8192x8192,8192x1x8192 > $O/double.json 2> $O/double.err;;
  dpts) FATCL_TUNING=off timeout 60 $B bench --gemm --precision double --top 0 --no-clblast --no-vendor --json --sizes 1x8192x8192 > $O/dpts.json 2> $O/dpts.err;;
  half) FATCL_TUNING=off timeout 90 $B bench --gemm --precision half --forms all --top 1 --no-vendor --json --sizes 1x8192x8192,8192x1x8192 > $O/half.json 2> $O/half.err
     FATCL_TUNING=off timeout 60 $B bench --gemm --precision half --top 0 --no-clblast --no-vendor --json --sizes 1x8192x8192 > $O/hpts.json 2> $O/hpts.err;;
  tests) FATCL_TEST_PLATFORM="NVIDIA CUDA" FATCL_REQUIRE_RUNTIMES=1 FATCL_TUNING=off timeout 250 dev/fatcl_gemm_tests > $O/gemm-tests.txt 2>&1; tail -3 $O/gemm-tests.txt;;
  esac
  echo "rc $?" >> $O/log.txt; pack
done
cat $O/log.txt
