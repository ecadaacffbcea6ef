#!/usr/bin/env bash
# usage: bash dev/run.sh STAGE...
set -u
source .device-kit/setup.sh
cd dev && xz -dkf *.xz && chmod +x fatcl* splits && cd ..
O=$OUT/r; mkdir -p $O
SP=596x340x8742,4198x34x14068,1x8192x8192,127x8191x4099
pack() { tar cJf $OUT/all.tar.xz -C $OUT r; }
for st in "$@"; do
  date -u +"== $st %T" | tee -a $O/log.txt
  case $st in
  dev) dev/fatcl-new devices > $O/devices.txt 2>&1; nvidia-smi >> $O/devices.txt 2>&1;;
  tests) FATCL_TEST_PLATFORM="NVIDIA CUDA" FATCL_REQUIRE_RUNTIMES=1 FATCL_TUNING=off timeout 250 dev/fatcl_gemm_tests > $O/gemm-tests.txt 2>&1; tail -3 $O/gemm-tests.txt;;
  on) for b in old new; do
        FATCL_TUNING=off timeout 100 dev/fatcl-$b bench --gemm --top 6 --online 12 --no-clblast --no-vendor --json --sizes $SP > $O/on-$b.json 2> $O/on-$b.err
        FATCL_TUNING=off timeout 60 dev/fatcl-$b bench --gemm --transA --top 6 --online 12 --no-clblast --no-vendor --json --sizes 4096x1x4096,3000x1x3000 > $O/onT-$b.json 2> $O/onT-$b.err
      done;;
  ab) S=596x340x8742,4198x34x14068,8192x64x8192,127x8191x4099,1x8192x8192
      for r in 1 2; do for b in old new; do FATCL_TUNING=off timeout 80 dev/fatcl-$b bench --gemm --top 6 --no-clblast --no-vendor --json --sizes $S > $O/ab-$b-$r.json 2> $O/ab-$b-$r.err; done; done;;
  h1) FATCL_TUNING=off timeout 150 dev/fatcl-new bench --gemm --top 6 --no-clblast --json --sizes 127x8191x4099,3000x3000x3000,2000x2000x300,5000x3000x1000,1000x7000x2000,12x10000x3000,4616x484x4,418x8623x2774,6641x242x3259,596x340x8742 > $O/h1.json 2> $O/h1.err;;
  h2) FATCL_TUNING=off timeout 150 dev/fatcl-new bench --gemm --top 6 --no-clblast --json --sizes 4198x34x14068,13659x1392x481,4776x163x4103,26x11242x3004,1214x2618x552,2071x662x1184,1087x749x449,1x8192x8192,8192x1x8192 > $O/h2.json 2> $O/h2.err;;
  splits) FATCL_TUNING=off timeout 200 dev/splits > $O/splits.txt 2>&1; tail -5 $O/splits.txt;;
  esac
  echo "rc $?" >> $O/log.txt; pack
done
cat $O/log.txt
