import sys, torch
torch.backends.cuda.matmul.allow_tf32 = False
for s in sys.argv[1:]:
    m, n, k = (list(map(int, s.split('x'))) + [0, 0])[:3] if 'x' in s else (int(s),) * 3
    a = torch.randn(m, k, device='cuda'); b = torch.randn(k, n, device='cuda')
    for _ in range(3): a @ b
    ts = []
    for _ in range(10):
        st = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        st.record(); a @ b; e.record(); torch.cuda.synchronize(); ts.append(st.elapsed_time(e))
    ts.sort(); t = ts[len(ts)//2]
    print(f"cublas {s} {t:.3f} ms {2*m*n*k/t/1e9:.1f} TFLOP/s", flush=True)
