#!/bin/bash
# ptxgen.sh in.cl out.ptx NDIMC MDIMC MAXNREG [-D...]: fatcl's PTX route (sm_60), .reqntid (and .maxnreg) added
set -e
in=$1 out=$2 nx=$3 ny=$4 mr=$5; shift 5
d=$(mktemp -d)
clang-15 -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -O3 -Xclang -finclude-default-header "$@" -emit-llvm -c $in -o $d/a.bc
llvm-link-15 --only-needed $d/a.bc /usr/lib/clc/nvptx64--nvidiacl.bc -o $d/l.bc 2>/dev/null
opt-15 -O3 -S $d/l.bc -o $d/o.ll
llc-15 -march=nvptx64 -mcpu=sm_60 $d/o.ll -o $d/k.ptx
python3 - $d/k.ptx $out $nx $ny $mr <<'PY'
import sys,re
s=open(sys.argv[1]).read()
i=s.index('.entry'); j=s.index('\n{', i)
extra='\n.reqntid %s, %s, 1'%(sys.argv[3],sys.argv[4])
if sys.argv[5] != '0': extra += '\n.maxnreg %s'%sys.argv[5]
s=s[:j]+extra+s[j:]
open(sys.argv[2],'w').write(s)
PY
/usr/local/cuda/bin/ptxas -arch=sm_90 -v $out -o /dev/null 2>&1 | grep -o "Used [0-9]* registers.*\|[0-9]* bytes spill.*" | tr '\n' ' ' | sed "s|^|$(basename $out): |"; echo
rm -rf $d
