/* GEMM of a few columns (or a few rows) whose large operand lies along K:
 * C = alpha * op(A) * op(B) + beta * C with gemm_blocked.cl's arguments, in
 * its order and with its meaning (read that file's comment), so that the
 * entry points launch either. Such a product (a matrix times a vector, or
 * a few) is bound by reading its large operand, so each of its rows is
 * read once per pass of NS columns, VW elements a work-item, neighbouring
 * work-items at neighbouring addresses: a dot product of each of its rows
 * with each column of the small operand, as matmul_fewcols.cl computes
 * fatcl::Matmul's. The rows family (gemm_rows.cl) reads a large operand
 * along its rows where they run along C's large side instead.
 *
 * Where M < N the kernel takes the product as its transpose, C^T = op(B)^T
 * op(A)^T, in place: the large operand X is then op(B)^T, the small one Y
 * op(A)^T, and C is written down its columns. So X(i, p) is op(A)(i, p) or
 * op(B)(p, i), Y(p, j) op(B)(p, j) or op(A)(j, p), for i < P (the large
 * side), j < Q and p < K. The fast path reads X's rows as vectors where
 * they lie along K (X(i, p + 1) next to X(i, p)); any other stride takes a
 * loop of single elements: every form is right, the host sends this
 * kernel the ones it is fast for.
 *
 * A work-group of WK x RG work-items covers RG rows of X (dimension 1) and
 * a pass of NS columns of Y (dimension 0: one group a pass): work-item (x,
 * y) reads VW elements of row y at every WK * VW along K, and meets each
 * with the pass's NS elements of Y's row (one vector where they lie next
 * to each other), NS sums in one vector; with NS = 1, VW elements of Y's
 * column instead, VW sums in one vector, so that no chain of dependent
 * additions limits a CPU. With WK > 1 the WK partial sums of each element
 * of C are then added by a fixed tree in local memory: the result does not
 * depend on scheduling. A GPU takes a row (or two) a group and K over many
 * work-items; a CPU many rows a group, K in one work-item. Each work-item
 * reaches every barrier (what bounds them is the same for the whole
 * group). C is read only where beta is not 0; A and B not at all where
 * alpha or K is 0. Half precision is stored as half and computed in float.
 * Multiply-adds are mad(): fused where the driver fuses (NVIDIA), and not
 * emulated where a device does not report CL_FP_FMA. Any M, N, K is
 * correct.
 *
 * The entry points run it on GPUs for a matrix times a vector along K
 * (GemmDotFit): on an H100 at 8192 x 1 x 8192 its 128-work-item point ran
 * 1.44 TFLOP/s where the blocked family's thin tiles ran 0.84, each column
 * of a 128 x 8 tile computed for one (2026-12-07). With passes of 4 or 16
 * columns, each element of Y read once a multiply-add, it lost to those
 * tiles; on CPUs the rows family reads such products as fast.
 *
 * Compile-time parameters: PRECISION (16, 32 or 64), WK (work-items along
 * K, a power of two), RG (rows a group), VW (elements of X a load: 1, 2, 4,
 * 8 or 16), NS (columns a pass: 1, 2, 4, 8 or 16). */
#if !defined(PRECISION) || !defined(WK) || !defined(RG) || !defined(VW) || !defined(NS)
#error "gemm_dot.cl: define PRECISION WK RG VW NS"
#endif
#if WK & (WK - 1)
#error "gemm_dot.cl: WK must be a power of two (the reduction is a tree)"
#endif

#include "gemm_vector.h"
/* realS: NS reals (a pass's sums). */
#if NS == 1
#define realS real
#else
#define realS CAT(real, NS)
#endif

#include "gemm_product.h"

/* The pass's elements of Y's row (cols of them, y_js apart), zeros past
 * the pass's last column: one vector load where they lie next
 * to each other and fill the pass (not in half precision: vload_halfN
 * needs them aligned only to a half), else one at a time. */
realS y_row(__global const storage* row, const long y_js, const int cols) {
#if NS == 1
  return LOAD1(row);
#else
#if PRECISION != 16
  if (y_js == 1 && cols == NS) return CAT(vload, NS)(0, row);
#endif
  real v[NS];
  for (int j = 0; j < NS; ++j) v[j] = j < cols ? LOAD1(row + j * y_js) : (real)0;
  return CAT(vload, NS)(0, v);
#endif
}

/* The sum of a vector's lanes, lane 0 first. */
real lane_sum(const realV v) {
#if VW == 1
  return v;
#else
  real l[VW];
  CAT(vstore, VW)(v, 0, l);
  real sum = (real)0;
  for (int e = 0; e < VW; ++e) sum += l[e];
  return sum;
#endif
}

__kernel __attribute__((reqd_work_group_size(WK, RG, 1)))
void gemm_dot(GEMM_ARGUMENTS) {
#if WK > 1
  __local real partial[RG][WK];
#endif
  const int z = (int)get_group_id(2);
  GEMM_PRODUCT(z);
  /* The product as it is (a few columns) or as its transpose (a few rows). */
  const int few_rows = M < N;
  const int P = few_rows ? N : M, Q = few_rows ? M : N;
  const long x_is = few_rows ? b_cs : a_rs, x_ps = few_rows ? b_rs : a_ks;
  const long y_ps = few_rows ? a_ks : b_rs, y_js = few_rows ? a_rs : b_cs;
  const long c_is = few_rows ? 1 : ldc, c_js = few_rows ? ldc : 1;
  __global const storage* X =
      few_rows ? B + b_offset + (long)k_begin * b_rs : A + a_offset + (long)k_begin * a_ks;
  __global const storage* Y =
      few_rows ? A + a_offset + (long)k_begin * a_ks : B + b_offset + (long)k_begin * b_rs;

  const int x = (int)get_local_id(0), y = (int)get_local_id(1);
  /* Rows past P compute row P - 1 again and store nothing. */
  const int i = (int)get_group_id(1) * RG + y;
  __global const storage* xr = X + (i < P ? i : P - 1) * x_is;
  const int c0 = (int)get_group_id(0) * NS;
  const int cols = min(NS, Q - c0);
  __global const storage* yc = Y + c0 * y_js;

  real sums[NS];
  int p = x * VW;
#if NS == 1 && VW > 1
  /* One column: VW sums along K in one vector, Y's column read VW
   * elements at a time (one vector where they lie next to each other). */
  realV lanes = (realV)(0);
  if (x_ps == 1) {
    for (; p + VW <= K; p += WK * VW) {
      realV yv;
      if (y_ps == 1) {
        yv = LOADV(yc + p);
      } else {
        real t[VW];
        for (int e = 0; e < VW; ++e) t[e] = LOAD1(yc + (long)(p + e) * y_ps);
        yv = CAT(vload, VW)(0, t);
      }
      lanes = mad(LOADV(xr + p), yv, lanes);
    }
  }
  real acc = lane_sum(lanes);
#else
  realS acc = (realS)(0);
  if (x_ps == 1) {
    for (; p + VW <= K; p += WK * VW) {
      real xv[VW];
#if VW == 1
      xv[0] = LOAD1(xr + p);
#else
      CAT(vstore, VW)(LOADV(xr + p), 0, xv);
#endif
      for (int e = 0; e < VW; ++e) {
        acc = mad((realS)(xv[e]), y_row(yc + (long)(p + e) * y_ps, y_js, cols), acc);
      }
    }
  }
#endif
  /* What is left of K in this work-item's step (fewer than VW), or, where
   * X's rows do not lie along K, all of its share: one element at a time. */
  const int step = x_ps == 1 ? 1 : WK;
  if (x_ps != 1) p = x;
  const int p_end = x_ps == 1 ? min(K, p + VW) : K;
  for (; p < p_end; p += step) {
#if NS == 1 && VW > 1
    acc = mad(LOAD1(xr + (long)p * x_ps), LOAD1(yc + (long)p * y_ps), acc);
#else
    acc = mad((realS)(LOAD1(xr + (long)p * x_ps)), y_row(yc + (long)p * y_ps, y_js, cols), acc);
#endif
  }
#if NS == 1
  sums[0] = acc;
#else
  CAT(vstore, NS)(acc, 0, sums);
#endif

  /* C'(i, c0 + j) = alpha * sum + beta * C'(i, c0 + j), C' not read where
   * beta is 0. */
#define STORE_C(row, j, sum)                                                      \
  do {                                                                            \
    __global storage* c_ = C + c_offset + (long)(row) * c_is + (long)(c0 + (j)) * c_js; \
    real v_ = alpha * (sum);                                                      \
    if (beta != (real)0) v_ += beta * LOAD1(c_);                                  \
    STORE1(v_, c_);                                                               \
  } while (0)
#if WK > 1
  for (int j = 0; j < cols; ++j) {
    partial[y][x] = sums[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WK / 2; s > 0; s >>= 1) {
      if (x < s) partial[y][x] += partial[y][x + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (x == 0 && i < P) STORE_C(i, j, partial[y][0]);
    /* The next column overwrites the partial sums: wait until x = 0 has read. */
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#else
  if (i < P) {
    for (int j = 0; j < cols; ++j) STORE_C(i, j, sums[j]);
  }
#endif
}
