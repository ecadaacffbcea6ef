#!/usr/bin/env bash
# usage: bash dev/run.sh STAGE...
set -u
source .device-kit/setup.sh
cd dev && xz -dkf *.xz && chmod +x fatcl-* && cd ..
B=dev/fatcl-new
O=$OUT/r; mkdir -p $O
H1=127x8191x4099,3000x3000x3000,2000x2000x300,5000x3000x1000,1000x7000x2000,12x10000x3000,4616x484x4,418x8623x2774,6641x242x3259,596x340x8742
H2=4198x34x14068,13659x1392x481,4776x163x4103,26x11242x3004,1214x2618x552,2071x662x1184,1087x749x449,1x8192x8192,8192x1x8192
pack() { tar cJf $OUT/all.tar.xz -C $OUT r; }
for st in "$@"; do
  date -u +"== $st %T" | tee -a $O/log.txt
  case $st in
  dev) $B devices > $O/devices.txt 2>&1; nvidia-smi >> $O/devices.txt 2>&1;;
  on1) FATCL_TUNING=off timeout 240 $B bench --gemm --top 6 --online 20 --no-clblast --no-vendor --json --sizes $H1 > $O/on1.json 2> $O/on1.err;;
  on2) FATCL_TUNING=off timeout 200 $B bench --gemm --top 6 --online 20 --no-clblast --no-vendor --json --sizes $H2 > $O/on2.json 2> $O/on2.err;;
  onT) FATCL_TUNING=off timeout 150 $B bench --gemm --transA --top 6 --online 20 --no-clblast --no-vendor --json --sizes 3000x1x3000,4096x1x4096,2000x1x1500,127x8191x4099,3000x3000x3000 > $O/onT.json 2> $O/onT.err;;
  on3) FATCL_TUNING=off timeout 200 $B bench --gemm --top 6 --online 20 --no-clblast --no-vendor --json --sizes 127x8191x4099,3000x3000x3000,5000x3000x1000,13659x1392x481,4776x163x4103,4198x34x14068,1x8192x8192,8192x1x8192,596x340x8742 > $O/on3.json 2> $O/on3.err;;
  onT3) FATCL_TUNING=off timeout 100 $B bench --gemm --transA --top 6 --online 20 --no-clblast --no-vendor --json --sizes 3000x1x3000,4096x1x4096,2000x1x1500,127x8191x4099 > $O/onT3.json 2> $O/onT3.err;;
  mm) FATCL_TUNING=off timeout 120 $B bench --top 6 --online 20 --no-clblast --no-vendor --json --sizes 3000,5000x3000x1000,2000x2000x300,127x8191x4099 > $O/mm.json 2> $O/mm.err;;
  sk) FATCL_TUNING=off timeout 150 $B bench --gemm --top 0 --reps 9 --no-clblast --json --sizes 1x8192x8192,8192x1x8192,127x8191x4099 > $O/sk.json 2> $O/sk.err;;
  h1) FATCL_TUNING=off timeout 150 $B bench --gemm --top 6 --no-clblast --no-vendor --json --sizes $H1 > $O/h1.json 2> $O/h1.err;;
  ab) S=128x8192x4096,127x8191x4099,4776x163x4103,596x340x8742,1024,3000,8192x64x8192,4198x34x14068,418x8623x2774,2000x2000x300,4616x484x4
      for r in 1 2; do for b in old new; do FATCL_TUNING=off timeout 100 dev/fatcl-$b bench --gemm --top 6 --no-clblast --no-vendor --json --sizes $S > $O/ab-$b-$r.json 2> $O/ab-$b-$r.err; done; done;;
  all0) FATCL_TUNING=off timeout 150 $B bench --gemm --top 0 --no-clblast --json --sizes 127x8191x4099,1024 > $O/all0.json 2> $O/all0.err;;
  odd) FATCL_TUNING=off timeout 200 $B bench --gemm --top 0 --no-clblast --no-vendor --json --sizes 128x8192x4096,127x8192x4096,128x8191x4096,128x8192x4099,127x8191x4099 > $O/odd.json 2> $O/odd.err;;
  h2) FATCL_TUNING=off timeout 150 $B bench --gemm --top 6 --no-clblast --no-vendor --json --sizes $H2 > $O/h2.json 2> $O/h2.err;;
  mmv) FATCL_TUNING=off timeout 150 $B bench --top 6 --reps 9 --no-clblast --json --sizes 127x8191x4099,1x8192x8192,8192x1x8192 > $O/mmv.json 2> $O/mmv.err;;
  tests) FATCL_TEST_PLATFORM="NVIDIA CUDA" FATCL_REQUIRE_RUNTIMES=1 FATCL_TUNING=off timeout 250 dev/fatcl_gemm_tests > $O/gemm-tests.txt 2>&1; tail -3 $O/gemm-tests.txt;;
  esac
  echo "rc $?" >> $O/log.txt; pack
done
cat $O/log.txt
