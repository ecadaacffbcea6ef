/* y[i] = a * x[i] + x[i - 1] (x[-1] = 0), each neighbour shared through
 * local memory: a family whose result does not depend on its tile, for
 * fatcl launch and fatcl validate --oclgrind. BUG picks a seeded mistake
 * (0: none): 1 reads x past its end, 2 drops the barrier (a data race),
 * 3 puts the barrier under work-item-dependent control flow, 4 computes
 * another result. */
#ifndef BUG
#define BUG 0
#endif

__kernel __attribute__((reqd_work_group_size(TILE, 1, 1)))
void neighbours(const int n, const float a, __global const float* x, __global float* y) {
  __local float tile[TILE];
  const int l = (int)get_local_id(0);
  const int i = (int)get_group_id(0) * TILE + l;
#if BUG == 1
  tile[l] = x[i];
#else
  tile[l] = i < n ? x[i] : 0.0f;
#endif
#if BUG == 2
#elif BUG == 3
  if (l < TILE / 2) barrier(CLK_LOCAL_MEM_FENCE);
#else
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  const float before = l > 0 ? tile[l - 1] : (i > 0 ? x[i - 1] : 0.0f);
#if BUG == 4
  const float v = a * tile[l] - before;
#else
  const float v = a * tile[l] + before;
#endif
  if (i < n) y[i] = v;
}
