import sys, torch
torch.backends.cuda.matmul.allow_tf32 = False
for n in map(int, sys.argv[1:]):
    a = torch.randn(n, n, device='cuda'); b = torch.randn(n, n, device='cuda')
    for _ in range(3): a @ b
    ts = []
    for _ in range(10):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); a @ b; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); m = ts[len(ts)//2]
    print(f"cublas {n} {m:.3f} ms {2*n**3/m/1e9:.1f} TFLOP/s", flush=True)
