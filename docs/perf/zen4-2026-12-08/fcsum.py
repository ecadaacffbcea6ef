import sys
D = sys.argv[1] if len(sys.argv) > 1 else '.'  # where fewcols-ab.tar.xz was unpacked
import json,collections
for rt in ['intel','pocl']:
  R=collections.defaultdict(list)
  for b in ['before','fewcols2']:
    for r in [1,2]:
      d=json.load(open(f'{D}/fc-{rt}-{b}-{r}.json'))
      for s in d['shapes']:
        best=collections.defaultdict(float)
        for x in s['measured']:
          if x['ok']: best[x['variant'].replace('matmul_fewcols_','')]=max(best[x['variant'].replace('matmul_fewcols_','')],x['gflops'])
        for v,g in best.items(): R[(s['label'],v,b)].append(g)
  print('==',rt)
  labels=sorted(set(k[0] for k in R),key=lambda l:(int(l.split('x')[1]),l))
  for l in labels:
    row=[]
    for v in ['WG1_RG16_VW16_NS1','WG1_RG16_VW16_NS4','WG1_RG64_VW8_NS16','WG32_RG8_VW1_NS4','WG128_RG1_VW4_NS1']:
      a=R.get((l,v,'before'),[0]); c=R.get((l,v,'fewcols2'),[0])
      row.append(f"{v[-4:]}:{max(a):5.1f}->{max(c):5.1f}")
    print(f"{l:>14}", ' '.join(row))
