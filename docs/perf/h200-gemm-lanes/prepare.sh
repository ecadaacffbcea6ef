#!/bin/bash
# Makes what sweep.sh times, on the Debian machine (clang-15, llvm-15,
# libclc-15, ptxas, libclblast-dev): the harness, the PTX files cands.txt
# names (k/) and lanes_new.cl (kernels/gemm_lanes.cl with gemm_product.h
# inlined, for the candidates built from source).
#   docs/perf/h200-gemm-lanes/prepare.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
kernels=../../../kernels
g++ -O2 -std=c++17 harness.cpp -o harness -lclblast -lOpenCL
mkdir -p k
G="-DPRECISION=32 -DMWG=32 -DNWG=32 -DKWG=32 -DNDIMC=32"
./ptxgen.sh $kernels/gemm_lanes.cl k/n4v1.ptx 32 4 $G -DMDIMC=4 -DVEC=1
./ptxgen.sh $kernels/gemm_lanes.cl k/n2v1.ptx 32 2 $G -DMDIMC=2 -DVEC=1
./ptxgen.sh $kernels/gemm_lanes.cl k/n4v0.ptx 32 4 $G -DMDIMC=4 -DVEC=0
./ptxgen.sh lanes_nx.cl k/nb4.ptx 32 4 $G -DVEC=1 -DMDIMC=4 -DX_BLDS=1
./ptxgen.sh lanes_nx.cl k/nb8.ptx 32 8 $G -DVEC=1 -DMDIMC=8
./ptxgen.sh lanes_x.cl k/base4.ptx 32 4 $G -DVEC=1 -DMDIMC=4
./ptxgen.sh lanes_x.cl k/oneepi2.ptx 32 2 $G -DVEC=1 -DMDIMC=2 -DX_ONE=1 -DX_EPI=1
./ptxgen.sh lanevar.cl k/lanevar.ptx 32 2 -DZ3=1 -DKMAJ=0 -DBLDS=0
cp ../../../generated/sgemm_blocked/*MWG32_NWG32_KWG8_MDIMC8_NDIMC8_*.ptx k/blocked.ptx
python3 - $kernels/gemm_lanes.cl $kernels/gemm_product.h lanes_new.cl <<'PY'
import sys
src, header, out = sys.argv[1:]
text = open(src).read()
line = '#include "gemm_product.h"'
assert text.count(line) == 1, "gemm_lanes.cl: expected one include of gemm_product.h"
open(out, 'w').write(text.replace(line, open(header).read()))
PY
# cands2.txt: the present kernel with a single slice and no loop (X_ONE) and
# a bare store of C (X_EPI): lanes_ny.cl, lanes_new.cl with both switches.
python3 - lanes_new.cl lanes_ny.cl <<'PY'
import sys
src, out = sys.argv[1:]
text = open(src).read()
edits = [
    ("    for (; k0 + KWG <= K; k0 += KWG) {\n      realLV va",
     "#if X_ONE\n    for (int once = 0; once < 1; ++once, k0 += KWG) {\n#else\n"
     "    for (; k0 + KWG <= K; k0 += KWG) {\n#endif\n      realLV va"),
    ("      real out = K == 0 ? (real)0 : alpha * acc[r];\n"
     "      if (beta != (real)0) out += beta * LOAD1(0, cp);\n"
     "      STORE1(out, 0, cp);",
     "#if X_EPI\n      STORE1(alpha * acc[r], 0, cp);\n#else\n"
     "      real out = K == 0 ? (real)0 : alpha * acc[r];\n"
     "      if (beta != (real)0) out += beta * LOAD1(0, cp);\n"
     "      STORE1(out, 0, cp);\n#endif"),
]
for old, new in edits:
    assert text.count(old) == 1, "gemm_lanes.cl: expected once: " + old.split("\n")[0]
    text = text.replace(old, new)
head = "#ifndef X_ONE\n#define X_ONE 0\n#endif\n#ifndef X_EPI\n#define X_EPI 0\n#endif\n"
open(out, "w").write(head + text)
PY
for m in 2 4; do
  ./ptxgen.sh lanes_ny.cl k/y${m}one.ptx 32 $m $G -DMDIMC=$m -DVEC=1 -DX_ONE=1
  ./ptxgen.sh lanes_ny.cl k/y${m}epi.ptx 32 $m $G -DMDIMC=$m -DVEC=1 -DX_EPI=1
  ./ptxgen.sh lanes_ny.cl k/y${m}both.ptx 32 $m $G -DMDIMC=$m -DVEC=1 -DX_ONE=1 -DX_EPI=1
done
# cands3.txt: lanes_ny.cl with four more switches (lanes_z.cl): X_NT op(A) =
# A and op(B) = B known when compiled, X_SIMPLEZ the strided batch's offsets
# only (no per-product arrays), X_NOCHK no test of alignment before the
# vector path, X_NOELEM no element-wise path.
python3 - lanes_ny.cl lanes_z.cl <<'PY'
import sys
src, out = sys.argv[1:]
t = open(src).read()
edits = [
    ("                const int a_trans, const long a_stride,",
     "                const int a_trans_arg, const long a_stride,"),
    ("                const int b_trans, const long b_stride,",
     "                const int b_trans_arg, const long b_stride,"),
    ("  const int z = (int)get_group_id(2);\n  GEMM_PRODUCT(z);",
     "  const int z = (int)get_group_id(2);\n#if X_NT\n  const int a_trans = 0, b_trans = 0;\n#else\n"
     "  const int a_trans = a_trans_arg, b_trans = b_trans_arg;\n#endif\n#if X_SIMPLEZ\n"
     "  const long a_offset = a_offset_arg + z * a_stride, b_offset = b_offset_arg + z * b_stride,\n"
     "             c_offset = c_offset_arg + z * c_stride;\n"
     "  const real alpha = alpha_arg, beta = beta_arg;\n"
     "  const long a_rs = a_trans ? 1 : lda, a_ks = a_trans ? lda : 1;\n"
     "  const long b_rs = b_trans ? 1 : ldb, b_cs = b_trans ? ldb : 1;\n#else\n"
     "  GEMM_PRODUCT(z);\n#endif"),
    ("  if (row0 + MWG <= M && col0 + NWG <= N && a_at % LV == 0 && lda % LV == 0 && "
     "b_at % LV == 0 &&\n      ldb % LV == 0) {",
     "#if X_NOCHK\n  {\n#else\n  if (row0 + MWG <= M && col0 + NWG <= N && a_at % LV == 0 && lda % LV == 0 && "
     "b_at % LV == 0 &&\n      ldb % LV == 0) {\n#endif"),
    ("  for (; k0 < K; k0 += KWG) {\n    __global const storage* const sa",
     "#if X_NOELEM\n  for (; 0;) {\n#else\n  for (; k0 < K; k0 += KWG) {\n#endif\n"
     "    __global const storage* const sa"),
]
for old, new in edits:
    assert t.count(old) == 1, "lanes_ny.cl: expected once: " + old.split("\n")[0]
    t = t.replace(old, new)
head = "".join("#ifndef %s\n#define %s 0\n#endif\n" % (x, x)
               for x in ("X_NT", "X_SIMPLEZ", "X_NOCHK", "X_NOELEM"))
open(out, "w").write(head + t)
PY
./ptxgen.sh lanevar.cl k/lanevar1.ptx 32 2 -DZ3=1 -DKMAJ=0 -DBLDS=1
G1="$G -DVEC=1 -DX_ONE=1 -DX_EPI=1"
for m in 2 4; do
  for sw in "" "-DX_NT=1" "-DX_NOCHK=1" "-DX_NOELEM=1" "-DX_SIMPLEZ=1" \
            "-DX_NT=1 -DX_NOCHK=1 -DX_NOELEM=1 -DX_SIMPLEZ=1"; do
    tag=$(echo "m$m $sw" | sed 's/-DX_//g; s/=1//g; s/ /_/g')
    ./ptxgen.sh lanes_z.cl k/z_$tag.ptx 32 $m $G1 -DMDIMC=$m $sw
  done
  ./ptxgen.sh lanes_z.cl k/z_full4_m$m.ptx 32 $m $G -DVEC=1 -DMDIMC=$m -DX_NT=1 -DX_NOCHK=1 \
    -DX_NOELEM=1 -DX_SIMPLEZ=1
done
# cands4.txt: lanes_v3.cl (make_v3.py): op(A), op(B) known when compiled
# (V3_OPS), the first whole slice outside the loop (V3_PEEL), a bare store
# of C (X_EPI).
python3 make_v3.py $kernels/gemm_lanes.cl $kernels/gemm_product.h lanes_v3.cl
for sw in "" "-DV3_OPS=1" "-DV3_PEEL=1" "-DV3_OPS=1 -DV3_PEEL=1" "-DV3_OPS=1 -DV3_PEEL=1 -DX_EPI=1"; do
  for m in 2 4; do
    tag=$(echo "m$m $sw" | sed 's/-D//g; s/=1//g; s/ /_/g')
    ./ptxgen.sh lanes_v3.cl k/v3_$tag.ptx 32 $m $G -DVEC=1 -DMDIMC=$m $sw
  done
done
echo "prepare.sh: harness, k/*.ptx, lanes_new.cl, lanes_ny.cl, lanes_z.cl and lanes_v3.cl ready"
