/* Few-columns SGEMM: row-major C[M x N] = A[M x K] * B[K x N], or C += A * B
 * when `accumulate` is set, for products with few columns of C (N from 1 to
 * about 16: a matrix times a column vector, or a few). Such a product is
 * bound by reading A, so each row of A is read once per pass of NS columns,
 * VW adjacent floats per work-item and neighbouring work-items at
 * neighbouring addresses. A and B start at element offsets a_offset and
 * b_offset and have rows of lda and ldb floats; C has rows of ldc.
 *
 * A work-group of WG x RG work-items covers RG rows of C (dimension 1
 * counts rows): work-item (x, y) reads VW floats of row y of A at every
 * WG * VW, so that K spreads over WG work-items, and for each of them the
 * NS columns of that row of B as one vector: NS sums in one vector register,
 * one vector multiply-add per float of A. With NS = 1 the VW floats of A
 * meet VW floats of the column of B instead: VW sums in one vector, so that
 * no chain of dependent additions limits a CPU.
 * With WG > 1 the WG partial sums of each element of C are then added by a
 * fixed tree in local memory. Where M alone gives too few work-groups to
 * fill the device, the host splits K over the work-groups of dimension 0:
 * each writes its partial C into W and matmul_splitk_sum adds them in
 * split order. Either way the result does not depend on scheduling. A
 * GPU takes one row per work-group and K over many work-items; a CPU, whose
 * every work-group costs a few microseconds, many rows per work-group and
 * K in one work-item. Columns of C are taken NS at a
 * time (more than NS read A again per pass: right for any N, fast for few).
 * Any M, N, K >= 1 is correct, and every work-item reaches every barrier
 * (the bounds that guard them are the same for the whole work-group).
 *
 * Compile-time parameters: WG (work-items per row, a power of two), RG (rows
 * per work-group), VW (floats of A per load), NS (columns of C per pass:
 * 1, 2, 4, 8 or 16, a vector). */
#if !defined(WG) || !defined(RG) || !defined(VW) || !defined(NS)
#error "matmul_fewcols.cl: define WG RG VW NS"
#endif
#if WG & (WG - 1)
#error "matmul_fewcols.cl: WG must be a power of two (the reduction is a tree)"
#endif
#if NS != 1 && NS != 2 && NS != 4 && NS != 8 && NS != 16
#error "matmul_fewcols.cl: NS must be a vector width (1, 2, 4, 8 or 16)"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if NS == 1
#define floatS float
#else
#define floatS CAT(float, NS)
#endif

/* The columns c0 ... c0 + NS - 1 of one row of B: one vector load where all
 * NS lie inside the matrix (cols == NS), else each guarded (0 past N). */
floatS load_row(__global const float* row, const int cols) {
#if NS == 1
  return row[0];
#else
  if (cols == NS) return CAT(vload, NS)(0, row);
  float v[NS];
  for (int j = 0; j < NS; ++j) v[j] = j < cols ? row[j] : 0.0f;
  return CAT(vload, NS)(0, v);
#endif
}

#if VW == 1
#define floatV float
#else
#define floatV CAT(float, VW)
#endif

/* The sum of a vector's lanes, lane 0 first. */
float lane_sum(const floatV v) {
#if VW == 1
  return v;
#else
  float l[VW];
  CAT(vstore, VW)(v, 0, l);
  float sum = 0.0f;
  for (int i = 0; i < VW; ++i) sum += l[i];
  return sum;
#endif
}

#if VW == 1
#define LOAD_A(k) (a[k])
#else
#define LOAD_A(k) CAT(vload, VW)(0, a + (k))
#endif

/* One element of C, or of this split's partial C in W. */
#define STORE_C(C, W, row, col, sum)                                 \
  do {                                                              \
    if (splits > 1) {                                               \
      W[((long)part * M + (row)) * N + (col)] = (sum);              \
    } else {                                                        \
      __global float* c_ = C + (long)(row) * ldc + (col);           \
      *c_ = accumulate ? *c_ + (sum) : (sum);                       \
    }                                                               \
  } while (0)

__kernel __attribute__((reqd_work_group_size(WG, RG, 1)))
void matmul_fewcols(const int M, const int N, const int K,
                    __global const float* restrict A,
                    __global const float* restrict B,
                    __global float* restrict C,
                    const long a_offset, const int lda,
                    const long b_offset, const int ldb,
                    const int ldc, const int accumulate,
                    __global float* restrict W) {
#if WG > 1
  __local float partial[RG][WG];
#endif
  const int x = (int)get_local_id(0);
  const int y = (int)get_local_id(1);
  /* Rows past M compute row M - 1 again and store nothing: every work-item
   * reaches every barrier. */
  const int row = (int)get_group_id(1) * RG + y;
  const int in_row = row < M ? row : M - 1;
  __global const float* a = A + a_offset + (long)in_row * lda;
  /* This work-group's part of K: [k_begin, k_end). */
  const int splits = (int)get_num_groups(0);
  const int part = (int)get_group_id(0);
  const int k_part = (K + splits - 1) / splits;
  const int k_begin = min(K, part * k_part);
  const int k_end = min(K, k_begin + k_part);
  __global const float* b = B + b_offset;
  for (int c0 = 0; c0 < N; c0 += NS) {
    const int cols = min(NS, N - c0);
    __global const float* bc = b + c0;
    float sums[NS];
    int k0 = k_begin + x * VW;
#if NS == 1 && VW > 1
    /* One column: VW sums along K in one vector (independent additions),
     * the column of B read VW floats at a time, ldb apart. */
    floatV lanes = (floatV)(0.0f);
    for (; k0 + VW <= k_end; k0 += WG * VW) {
      float bv[VW];
      for (int i = 0; i < VW; ++i) bv[i] = bc[(long)(k0 + i) * ldb];
      lanes = mad(LOAD_A(k0), CAT(vload, VW)(0, bv), lanes);
    }
    float acc = lane_sum(lanes);
#else
    floatS acc = (floatS)(0.0f);
    for (; k0 + VW <= k_end; k0 += WG * VW) {
      float av[VW];
#if VW == 1
      av[0] = a[k0];
#else
      CAT(vstore, VW)(LOAD_A(k0), 0, av);
#endif
      for (int i = 0; i < VW; ++i) {
        acc = mad((floatS)(av[i]), load_row(bc + (long)(k0 + i) * ldb, cols), acc);
      }
    }
#endif
    /* The last few of the part (fewer than VW, in this work-item's step):
     * one at a time. */
    for (; k0 < k_end; ++k0) {
      acc = mad((floatS)(a[k0]), load_row(bc + (long)k0 * ldb, cols), acc);
    }
#if NS == 1
    sums[0] = acc;
#else
    CAT(vstore, NS)(acc, 0, sums);
#endif
#if WG > 1
    for (int j = 0; j < cols; ++j) {
      partial[y][x] = sums[j];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int s = WG / 2; s > 0; s >>= 1) {
        if (x < s) partial[y][x] += partial[y][x + s];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (x == 0 && row < M) STORE_C(C, W, row, c0 + j, partial[y][0]);
      /* The next column overwrites the partial sums: wait until x = 0 has read. */
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    if (row < M) {
      for (int j = 0; j < cols; ++j) STORE_C(C, W, row, c0 + j, sums[j]);
    }
#endif
  }
}

#include "matmul_splitk_sum.h"
