/* The second pass of a GEMM product whose K the host split into parts
 * (gemm_blocked.cl's batch, one product per part of K): part p wrote its
 * partial product, M x N in rows of N, at W + w_offset + p * M * N. This
 * adds the parts in order (the result does not depend on scheduling) and
 * stores C = alpha * sum + beta * C, C read only where beta is not 0 (a
 * NaN there is ignored, as BLAS says). One work-item per element of C,
 * NDRange {N, M}; the work-group is the driver's. Single and double
 * precision (a half product is not split: its parts would each round to
 * half). */
#if !defined(PRECISION)
#error "gemm_sum_parts.cl: define PRECISION"
#endif
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define real double
#elif PRECISION == 32
#define real float
#else
#error "gemm_sum_parts.cl: PRECISION is 32 or 64"
#endif

__kernel void gemm_sum_parts(const int M, const int N, const int parts,
                             __global const real* restrict W, const long w_offset,
                             const real alpha, const real beta, __global real* restrict C,
                             const long c_offset, const int ldc) {
  const int col = (int)get_global_id(0);
  const int row = (int)get_global_id(1);
  if (row >= M || col >= N) return;
  const long plane = (long)M * N;
  __global const real* w = W + w_offset + (long)row * N + col;
  real sum = (real)0;
  for (int p = 0; p < parts; ++p) sum += w[p * plane];
  __global real* c = C + c_offset + (long)row * ldc + col;
  real v = alpha * sum;
  if (beta != (real)0) v += beta * *c;
  *c = v;
}
