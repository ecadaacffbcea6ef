# Makes lanes_v3.cl (run by prepare.sh): kernels/gemm_lanes.cl with gemm_product.h inlined,
# its body an inline function that the kernel calls once per op(A), op(B) when V3_OPS is
# set (the transposes known when compiled), the first whole slice outside the loop when
# V3_PEEL is set, and a bare store of C when X_EPI is set.
#   python3 make_v3.py kernels/gemm_lanes.cl kernels/gemm_product.h lanes_v3.cl
import sys, re
src, header, out = sys.argv[1:]
t = open(src).read()
inc = '#include "gemm_product.h"'
assert t.count(inc) == 1
t = t.replace(inc, open(header).read())
# 1. the kernel becomes an inline function of the product, op(A), op(B) last
sig_old = '__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))\nvoid gemm_lanes('
assert t.count(sig_old) == 1
i = t.index(sig_old)
j = t.index(') {', i)
params = t[i + len(sig_old):j]
body_start = j + 3
locals_old = ('  __local realRV As[MWG][A_PITCH];\n  __local real Bs[KWG][B_PITCH];\n'
              '  __local real* const as = (__local real*)As;\n'
              '  __local real* const bs = (__local real*)Bs;\n')
assert t.count(locals_old) == 1
t = t.replace(locals_old, '  __local real* const as = (__local real*)As;\n'
                          '  __local real* const bs = (__local real*)Bs;\n')
fparams = params.replace('const int a_trans, ', '').replace('const int b_trans, ', '')
assert fparams.count('a_trans') == 0 and fparams.count('b_trans') == 0, fparams
fn = ('inline __attribute__((always_inline)) void lanes_product(' + fparams +
      ',\n    __local realRV (*As)[A_PITCH], __local real (*Bs)[B_PITCH],'
      ' const int a_trans, const int b_trans) {')
t = t[:i] + fn + t[body_start:]
# argument names, in order, for the calls
names = [re.split(r'[\s*]+', p.strip())[-1] for p in fparams.split(',')]
call = 'lanes_product(' + ', '.join(names) + ', As, Bs, %s, %s)'
kernel = ('\n__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))\nvoid gemm_lanes(' +
          params + ') {\n  __local realRV As[MWG][A_PITCH];\n  __local real Bs[KWG][B_PITCH];\n'
          '#if V3_OPS\n  if (!a_trans && !b_trans) ' + call % (0, 0) + ';\n'
          '  else if (!a_trans) ' + call % (0, 1) + ';\n'
          '  else if (!b_trans) ' + call % (1, 0) + ';\n'
          '  else ' + call % (1, 1) + ';\n#else\n  ' + call % ('a_trans', 'b_trans') +
          ';\n#endif\n}\n')
t = t + kernel
# 2. the first whole slice outside the loop
lo = '    for (; k0 + KWG <= K; k0 += KWG) {\n'
assert t.count(lo) == 1
a = t.index(lo)
e = t.index('      pb += b_slice;\n    }\n', a) + len('      pb += b_slice;\n    }\n')
loop = t[a:e]
body = loop[len(lo):-len('    }\n')]
first = body.replace('      if (k0 > 0) barrier(CLK_LOCAL_MEM_FENCE); /* the last slice is read */\n', '')
assert first != body
peeled = ('#if V3_PEEL\n    if (KWG <= K) {\n' + first + '      k0 = KWG;\n    }\n#endif\n' + loop)
t = t[:a] + peeled + t[e:]
# 3. a bare store of C (X_EPI)
ep = ('      real out = K == 0 ? (real)0 : alpha * acc[r];\n'
      '      if (beta != (real)0) out += beta * LOAD1(0, cp);\n      STORE1(out, 0, cp);')
assert t.count(ep) == 1
t = t.replace(ep, '#if X_EPI\n      STORE1(alpha * acc[r], 0, cp);\n#else\n' + ep + '\n#endif')
head = ''.join('#ifndef %s\n#define %s 0\n#endif\n' % (x, x) for x in ('V3_OPS', 'V3_PEEL', 'X_EPI'))
open(out, 'w').write(head + t)
