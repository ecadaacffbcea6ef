/* Few-rows SGEMM: row-major C[M x N] = A[M x K] * B[K x N], or C += A * B
 * when `accumulate` is set, for products with few rows of C (M from 1 to
 * about 16: a row vector, or a few, times a matrix). Such a product is bound
 * by reading B, so each element of B is read once per pass of MS rows, by
 * neighbouring work-items at neighbouring addresses. A and B start at
 * element offsets a_offset and b_offset and have rows of lda and ldb floats;
 * C has rows of ldc.
 *
 * A work-group of WGN x WGK work-items (WGN along dimension 0) covers
 * WGN * VW adjacent columns of C. Work-item (x, y) owns VW of them and walks
 * its work-group's part of K from y in steps of WGK, four rows of B in
 * flight at a time, so that K, not only N, spreads the reading of B over the
 * device. The WGK partial sums of each element of C are then added in local
 * memory in a fixed order (y = 0, 1, ...). Where N alone gives too few
 * work-groups to fill the device, the host splits K over the work-groups
 * of dimension 1: each writes its partial C into W and
 * matmul_splitk_sum adds them in split order. Either way the result does
 * not depend on scheduling. Rows of C are
 * taken MS at a time (more than MS rows read B again per pass: right for
 * any M, fast for few). Columns past N are guarded; any M, N, K >= 1 is
 * correct, and every work-item reaches every barrier (the bounds that
 * guard them are the same for the whole work-group).
 *
 * Compile-time parameters: WGN WGK (the work-group), VW (columns per
 * work-item, one vector), MS (rows of C per pass). */
#if !defined(WGN) || !defined(WGK) || !defined(VW) || !defined(MS)
#error "matmul_fewrows.cl: define WGN WGK VW MS"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VW == 1
#define floatV float
#define VLOAD(p) (*(p))
#else
#define floatV CAT(float, VW)
#define VLOAD(p) CAT(vload, VW)(0, p)
#endif

/* VW floats of one row of B from column `col`: one vector load where all VW
 * lie inside the matrix, else each guarded (0 past N). */
floatV load_b(__global const float* row, const int col, const int N) {
  if (col + VW <= N) return VLOAD(row + col);
  float v[VW];
  for (int i = 0; i < VW; ++i) v[i] = col + i < N ? row[col + i] : 0.0f;
#if VW == 1
  return v[0];
#else
  return CAT(vload, VW)(0, v);
#endif
}

__kernel __attribute__((reqd_work_group_size(WGN, WGK, 1)))
void matmul_fewrows(const int M, const int N, const int K,
                    __global const float* restrict A,
                    __global const float* restrict B,
                    __global float* restrict C,
                    const long a_offset, const int lda,
                    const long b_offset, const int ldb,
                    const int ldc, const int accumulate,
                    __global float* restrict W) {
  __local float partial[WGK][WGN * VW];
  const int x = (int)get_local_id(0);
  const int y = (int)get_local_id(1);
  const int col = ((int)get_group_id(0) * WGN + x) * VW;
  /* This work-group's part of K: [k_begin, k_end). */
  const int splits = (int)get_num_groups(1);
  const int part = (int)get_group_id(1);
  const int k_part = (K + splits - 1) / splits;
  const int k_begin = min(K, part * k_part);
  const int k_end = min(K, k_begin + k_part);
  __global const float* b = B + b_offset;
  for (int r0 = 0; r0 < M; r0 += MS) {
    const int rows = min(MS, M - r0);
    __global const float* a = A + a_offset + (long)r0 * lda;
    floatV acc[MS];
    for (int r = 0; r < MS; ++r) acc[r] = (floatV)(0.0f);
    int k = k_begin + y;
    for (; k + 3 * WGK < k_end; k += 4 * WGK) {
      const floatV b0 = load_b(b + (long)k * ldb, col, N);
      const floatV b1 = load_b(b + (long)(k + WGK) * ldb, col, N);
      const floatV b2 = load_b(b + (long)(k + 2 * WGK) * ldb, col, N);
      const floatV b3 = load_b(b + (long)(k + 3 * WGK) * ldb, col, N);
      for (int r = 0; r < MS; ++r) {
        if (r < rows) {
          __global const float* ar = a + (long)r * lda + k;
          acc[r] = mad((floatV)(ar[0]), b0, acc[r]);
          acc[r] = mad((floatV)(ar[WGK]), b1, acc[r]);
          acc[r] = mad((floatV)(ar[2 * WGK]), b2, acc[r]);
          acc[r] = mad((floatV)(ar[3 * WGK]), b3, acc[r]);
        }
      }
    }
    for (; k < k_end; k += WGK) {
      const floatV bk = load_b(b + (long)k * ldb, col, N);
      for (int r = 0; r < MS; ++r) {
        if (r < rows) acc[r] = mad((floatV)(a[(long)r * lda + k]), bk, acc[r]);
      }
    }
    for (int r = 0; r < rows; ++r) {
#if VW == 1
      partial[y][x] = acc[r];
#else
      CAT(vstore, VW)(acc[r], 0, &partial[y][x * VW]);
#endif
      barrier(CLK_LOCAL_MEM_FENCE);
      if (y == 0) {
        __global float* c = C + (long)(r0 + r) * ldc;
        __global float* w = W + ((long)part * M + r0 + r) * N;
        for (int i = 0; i < VW; ++i) {
          if (col + i < N) {
            float sum = 0.0f;
            for (int j = 0; j < WGK; ++j) sum += partial[j][x * VW + i];
            if (splits > 1) {
              w[col + i] = sum;
            } else {
              c[col + i] = accumulate ? c[col + i] + sum : sum;
            }
          }
        }
      }
      /* The next row overwrites the partial sums: wait until all have read. */
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

#include "matmul_splitk_sum.h"
