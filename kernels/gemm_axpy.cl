/* GEMM of a few rows (or a few columns) whose large operand lies along C's
 * long side: C = alpha * op(A) * op(B) + beta * C with gemm_blocked.cl's
 * arguments, in its order and with its meaning (read that file's comment),
 * so that the entry points launch either. Such a product (a vector times a
 * matrix stored along its rows, or a matrix stored along its columns times
 * a vector) is bound by reading its large operand, so each of its rows is
 * read once per pass of MS rows of C, VW elements a work-item, neighbouring
 * work-items at neighbouring addresses: each row of C is a sum of the large
 * operand's rows scaled (BLAS's axpy, once a step of K), as
 * matmul_fewrows.cl computes fatcl::Matmul's. The dot family
 * (gemm_dot.cl) reads a large operand that lies along K instead.
 *
 * Where N < M the kernel takes the product as its transpose, C^T = op(B)^T
 * op(A)^T, in place: the large operand X is then op(A)^T, the small one Y
 * op(B)^T, and C is written down its columns. So X(p, i) is op(B)(p, i) or
 * op(A)(i, p), Y(j, p) op(A)(j, p) or op(B)(p, j), for i < P (the long
 * side), j < Q and p < K. The fast path reads X's rows as vectors where
 * they lie along P (X(p, i + 1) next to X(p, i)); any other stride takes
 * single elements: every form is right, the host sends this kernel the
 * ones it is fast for.
 *
 * A work-group of WGN x WGK work-items covers WGN * VW adjacent columns of
 * C' (C, or C^T as it runs; dimension 0) and its Q rows, MS at a pass:
 * work-item (x, y) owns VW of the columns and walks K from y in steps of
 * WGK, four rows of X in flight at a time, so that K, not only P, spreads
 * the reading of X over the device. The WGK partial sums of each element
 * are then added in local memory in a fixed order (y = 0, 1, ...): the
 * result does not depend on scheduling. Where P alone gives too few
 * work-groups to fill a GPU the host splits K into parts (a batch over
 * them, then gemm_sum_parts.cl adds them in order), as for the blocked
 * family. Each work-item reaches every barrier (what bounds them is the
 * same for the whole group). C is read only where beta is not 0; A and B
 * not at all where alpha or K is 0. Half precision is stored as half and
 * computed in float. Multiply-adds are mad(): fused where the driver fuses
 * (NVIDIA), and not emulated where a device does not report CL_FP_FMA. Any
 * M, N, K is correct.
 *
 * Compile-time parameters: PRECISION (16, 32 or 64), WGN and WGK (the
 * work-group), VW (columns a work-item, one vector: 1, 2, 4, 8 or 16), MS
 * (rows of C' a pass). */
#if !defined(PRECISION) || !defined(WGN) || !defined(WGK) || !defined(VW) || !defined(MS)
#error "gemm_axpy.cl: define PRECISION WGN WGK VW MS"
#endif
#if WGK & (WGK - 1)
#error "gemm_axpy.cl: WGK must be a power of two (the reduction is a tree)"
#endif

#include "gemm_vector.h"

#include "gemm_product.h"

/* VW elements of a row of X from column `col`, x_is apart, each guarded
 * (0 past P). */
realV x_row(__global const storage* row, const int col, const int P, const long x_is) {
  real v[VW];
  for (int e = 0; e < VW; ++e) v[e] = col + e < P ? LOAD1(row + (long)(col + e) * x_is) : (real)0;
#if VW == 1
  return v[0];
#else
  return CAT(vload, VW)(0, v);
#endif
}

__kernel __attribute__((reqd_work_group_size(WGN, WGK, 1)))
void gemm_axpy(GEMM_ARGUMENTS) {
  __local real partial[WGK][WGN * VW];
  const int z = (int)get_group_id(2);
  GEMM_PRODUCT(z);
  /* The product as it is (a few rows) or as its transpose (a few columns). */
  const int turned = N < M;
  const int P = turned ? M : N, Q = turned ? N : M;
  const long x_is = turned ? a_rs : b_cs, x_ps = turned ? a_ks : b_rs;
  const long y_js = turned ? b_cs : a_rs, y_ps = turned ? b_rs : a_ks;
  const long c_is = turned ? ldc : 1, c_js = turned ? 1 : ldc;
  __global const storage* X =
      turned ? A + a_offset + (long)k_begin * a_ks : B + b_offset + (long)k_begin * b_rs;
  __global const storage* Y =
      turned ? B + b_offset + (long)k_begin * b_rs : A + a_offset + (long)k_begin * a_ks;

  const int x = (int)get_local_id(0), y = (int)get_local_id(1);
  const int col = ((int)get_group_id(0) * WGN + x) * VW;
  /* (Columns past P read zeros and store nothing.) */
  for (int j0 = 0; j0 < Q; j0 += MS) {
    const int rows = min(MS, Q - j0);
    __global const storage* yr = Y + (long)j0 * y_js;
    realV acc[MS];
#pragma unroll
    for (int r = 0; r < MS; ++r) acc[r] = (realV)(0);
    /* acc[r] += Y(j0 + r, q) * xv for each row r of the pass. */
#define STEP(q, xv)                                                     \
  _Pragma("unroll") for (int r = 0; r < MS; ++r) {                     \
    if (r < rows) {                                                    \
      const real y_ = LOAD1(yr + (long)r * y_js + (long)(q) * y_ps);   \
      acc[r] = mad((realV)(y_), xv, acc[r]);                           \
    }                                                                  \
  }
    int p = y;
    if (x_is == 1 && col + VW <= P) {
      /* The fast path: X's VW elements next to each other, one vector.
       * (With the addresses stepped instead, ptxas gave the same 128
       * registers, and on an H100 at 1 x 8192 x 8192 single precision ran
       * 0.98 of this, double with 2-vectors 0.69; 2026-12-07.) */
      __global const storage* xc = X + col;
      for (; p + 3 * WGK < K; p += 4 * WGK) {
        const realV x0 = LOADV(xc + (long)p * x_ps);
        const realV x1 = LOADV(xc + (long)(p + WGK) * x_ps);
        const realV x2 = LOADV(xc + (long)(p + 2 * WGK) * x_ps);
        const realV x3 = LOADV(xc + (long)(p + 3 * WGK) * x_ps);
        STEP(p, x0);
        STEP(p + WGK, x1);
        STEP(p + 2 * WGK, x2);
        STEP(p + 3 * WGK, x3);
      }
      for (; p < K; p += WGK) {
        const realV xk = LOADV(xc + (long)p * x_ps);
        STEP(p, xk);
      }
    } else {
      for (; p < K; p += WGK) {
        const realV xk = x_row(X + (long)p * x_ps, col, P, x_is);
        STEP(p, xk);
      }
    }
#undef STEP
    /* (`rows` is the same for the whole work-group: each of its
     * work-items meets the barriers.) */
    for (int r = 0; r < rows; ++r) {
#if VW == 1
      partial[y][x] = acc[r];
#else
      CAT(vstore, VW)(acc[r], 0, &partial[y][x * VW]);
#endif
      barrier(CLK_LOCAL_MEM_FENCE);
      /* The WGK partial sums of each column added by a fixed tree, every
       * work-item of the group taking part. */
      __local real* mine = &partial[y][x * VW];
      for (int h = WGK / 2; h > 0; h >>= 1) {
        if (y < h) {
          for (int e = 0; e < VW; ++e) mine[e] += mine[h * WGN * VW + e];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      /* The group's WGN * VW columns, one a work-item (more passes where
       * there are more columns than work-items): C'(j, i) = alpha * sum +
       * beta * C'(j, i), C' not read where beta is 0. */
      for (int e = y * WGN + x; e < WGN * VW; e += WGN * WGK) {
        const int i = (int)get_group_id(0) * WGN * VW + e;
        if (i < P) {
          __global storage* c = C + c_offset + (long)(j0 + r) * c_js + (long)i * c_is;
          real v = alpha * partial[0][e];
          if (beta != (real)0) v += beta * LOAD1(c);
          STORE1(v, c);
        }
      }
      /* The next row overwrites the partial sums: wait until all have read. */
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
