/* The GEMM's reference path: one work-item per element of C, each a plain
 * loop over K. It takes gemm_blocked.cl's arguments, in its order and with
 * its meaning (read that file's comment), so that the entry points launch
 * either: C = alpha * op(A) * op(B) + beta * C, row-major (the host turns a
 * column-major call into its row-major twin), op(X) = X or X^T read in
 * place through its strides, alpha and beta with BLAS's reading rules (C not
 * read where beta is 0, A and B not read where alpha is 0 or K is 0),
 * offsets, the batch over dimension 2 of the NDRange (strides, or
 * per-product offsets and scalars), and `k_begin` / `accumulate` for a K
 * split into launches. It is there to be obviously right, not fast: a
 * baseline for `fatcl bench --gemm` and a second opinion for the tests
 * (`OverrideVariant` forces it).
 *
 * Compile-time parameters: PRECISION (16: stored half, computed in float;
 * 32; 64) and WG, the side of the square work-group. */
#if !defined(PRECISION) || !defined(WG)
#error "gemm_naive.cl: define PRECISION and WG"
#endif

#if PRECISION == 16
#define storage half
#define real float
#define LOAD1(i, p) vload_half(i, p)
#define STORE1(v, i, p) vstore_half(v, i, p)
#elif PRECISION == 32 || PRECISION == 64
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#else
#define storage float
#define real float
#endif
#define LOAD1(i, p) ((p)[i])
#define STORE1(v, i, p) ((p)[i] = (v))
#else
#error "gemm_naive.cl: PRECISION is 16, 32 or 64"
#endif

#include "gemm_product.h"

__kernel __attribute__((reqd_work_group_size(WG, WG, 1)))
void gemm_naive(GEMM_ARGUMENTS) {
  const int col = (int)get_global_id(0), row = (int)get_global_id(1);
  const int z = (int)get_group_id(2);
  if (row >= M || col >= N) return;
  GEMM_PRODUCT(z);
  __global const storage* a = A + a_offset + (long)k_begin * a_ks + (long)row * a_rs;
  __global const storage* b = B + b_offset + (long)k_begin * b_rs + (long)col * b_cs;
  real sum = (real)0;
  for (int k = 0; k < K; ++k) sum += LOAD1(0, a + k * a_ks) * LOAD1(0, b + k * b_rs);
  real c = K == 0 ? (real)0 : alpha * sum;
  __global storage* cp = C + c_offset + (long)row * ldc + col;
  if (beta != (real)0) c += beta * LOAD1(0, cp);
  STORE1(c, 0, cp);
}
