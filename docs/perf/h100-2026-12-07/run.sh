#!/usr/bin/env bash
# usage: bash dev/run.sh STAGE...
set -u
source .device-kit/setup.sh
cd dev && xz -dkf *.xz && chmod +x fatcl-new fatcl_gemm_tests && cd ..
B=dev/fatcl-new
O=$OUT/r; mkdir -p $O
S1=4616x484x4,38x992x461,418x8623x2774,32x424x6494,5063x706x20,10247x10396x83,3887x1081x145,6641x242x3259,12508x1386x1060,596x340x8742,12840x127x295,65x311x5498
S2=4198x34x14068,1020x7717x16,16071x427x44,2655x10x2882,13659x1392x481,4776x163x4103,26x11242x3004,979x55x1833,1214x2618x552,16x3782x4038,2071x662x1184,1686x1328x481,4662x66x1434,13x2587x7825,1087x749x449,7632x9x8559
SQ=2048,4096,8192,12288,2048x2048x32768,4096x4096x256
pack() { tar cJf $OUT/all.tar.xz -C $OUT r; }
for st in "$@"; do
  date -u +"== $st %T" | tee -a $O/log.txt
  case $st in
  dev) $B devices > $O/devices.txt 2>&1; nvidia-smi >> $O/devices.txt 2>&1;;
  sg) (cd dev/sg && python3 cublas.py ${SQ//,/ } > $O/sg-cublas-before.txt 2>&1; timeout 200 ./h cands1.txt 7 ${SQ//,/ } > $O/sg-h1.txt 2>&1; python3 cublas.py ${SQ//,/ } > $O/sg-cublas-after.txt 2>&1); cat $O/sg-h1.txt $O/sg-cublas-*.txt;;
  sg2) (cd dev/sg && timeout 200 ./h cands2.txt 7 ${SQ//,/ } > $O/sg-h2.txt 2>&1; python3 cublas.py ${SQ//,/ } > $O/sg-cublas2.txt 2>&1); cat $O/sg-h2.txt $O/sg-cublas2.txt;;
  thin) FATCL_TUNING=$O/thin.json timeout 200 $B tune --gemm --forms all --sizes 8192x256x4096,8192x128x512,1024x8192x16 --json > $O/tune-thin.json 2> $O/tune-thin.err; cp $O/thin.json dev/thin.json;;
  s12k) cp dev/thin.json $O/thin-copy.json; FATCL_TUNING=$O/thin-copy.json timeout 120 $B bench --gemm --top 1 --no-clblast --no-vendor --json --sizes $S1,$S2 > $O/s12-thin.json 2> $O/s12-thin.err;;
  s12) FATCL_TUNING=off timeout 150 $B bench --gemm --top 1 --no-clblast --no-vendor --json --sizes $S1,$S2 > $O/s12-shipped.json 2> $O/s12-shipped.err;;
  s1|s2) S=$([ $st = s1 ] && echo $S1 || echo $S2)
     FATCL_TUNING=off timeout 240 $B bench --gemm --top 0 --no-clblast --json --sizes $S > $O/$st-top0.json 2> $O/$st-top0.err;;
  default) FATCL_TUNING=off timeout 300 $B bench --gemm --top 1 --json > $O/default.json 2> $O/default.err;;
  dot) D=dev/fatcl-dot; FATCL_TUNING=off timeout 150 $D bench --gemm --top 0 --no-clblast --json --sizes 8192x1x8192,8192x4x8192,8192x16x8192,4096x1x4096 > $O/dot-nn.json 2> $O/dot-nn.err
     FATCL_TUNING=off timeout 100 $D bench --gemm --top 0 --no-clblast --no-vendor --json --transB --sizes 1x8192x8192,4x8192x8192 > $O/dot-nt.json 2> $O/dot-nt.err
     FATCL_TUNING=off timeout 100 $D bench --gemm --forms all --top 1 --no-clblast --no-vendor --json --sizes 8192x1x8192,1x8192x8192 > $O/dot-forms.json 2> $O/dot-forms.err;;
  dotauto) FATCL_TUNING=off timeout 100 $B bench --gemm --forms all --top 1 --no-clblast --no-vendor --json --sizes 8192x1x8192,1x8192x8192,4096x1x4096,2000x1x1500 > $O/dotauto-forms.json 2> $O/dotauto-forms.err
     FATCL_TUNING=off timeout 100 $B bench --gemm --top 1 --no-clblast --json --sizes 8192x1x8192,4096x1x4096 > $O/dotauto-nn.json 2> $O/dotauto-nn.err;;
  tests) FATCL_TEST_PLATFORM="NVIDIA CUDA" FATCL_REQUIRE_RUNTIMES=1 FATCL_TUNING=off timeout 250 dev/fatcl_gemm_tests > $O/gemm-tests.txt 2>&1; tail -3 $O/gemm-tests.txt;;
  esac
  echo "rc $?" >> $O/log.txt; pack
done
cat $O/log.txt
