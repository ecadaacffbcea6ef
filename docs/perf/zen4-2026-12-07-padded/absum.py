import json,sys,glob,statistics as st,collections
O=sys.argv[1]
for rt in ['intel','pocl']:
  tab=collections.defaultdict(lambda: collections.defaultdict(list))
  bad=0
  for f in glob.glob(f'{O}/{rt}-*.json'):
    b=f.split('/')[-1].split('-')[1]
    d=json.load(open(f))
    for s in d['sizes']:
      res=[r for r in s['results'] if r.get('ok')]
      bad+=sum(1 for r in s['results'] if r.get('ok') is False)
      auto=[r for r in res if r['kernel']=='auto']
      best=max(r['gflops'] for r in res)
      tab[s['size']][b+'_auto'].append(auto[0]['gflops'] if auto else 0)
      tab[s['size']][b+'_best'].append(best)
  print(rt, 'failed results', bad)
  for size,v in tab.items():
    m={k:st.median(x) for k,x in v.items()}
    print(f"  {size:>14} auto base {m.get('base_auto',0):6.1f} pad {m.get('pad_auto',0):6.1f} ({m.get('pad_auto',0)/max(1e-9,m.get('base_auto',1)):.2f}x)   best base {m.get('base_best',0):6.1f} pad {m.get('pad_best',0):6.1f}")
