/* Thin products on CPUs: C = alpha * op(A) * B + beta * C where C has few
 * rows (the host sends it products of up to GemmRowsMostRows rows, as they
 * run after its swaps: a column-major call turned around, a product as its
 * transpose) and B is read in place along its rows. It takes
 * gemm_blocked.cl's arguments, in its order and with its meaning (read that
 * file's comment), so that the entry points launch either.
 *
 * Why a kernel of its own: the blocked CPU points give a work-group an
 * MWG x NWG tile of C and walk K inside it, so at 32 x 2048 x 2048 each
 * step of K reads a 512-byte piece of B's next row, 8 KiB further on: a new
 * page every step, which the prefetchers do not follow. They ran it at 126
 * to 150 GFLOP/s where 2048 x 32 x 2048, whose large operand they read
 * along its rows, ran at 320 to 353 (Intel's CPU runtime, 2 Xeon cores,
 * 2026-12-06). Here a work-item owns all the rows of C (up to MWG) over a
 * stripe of NWG columns and walks K in blocks of KWG rows of B on the
 * outside, and inside a block the stripe's columns, NV vectors at a time,
 * and C's rows, MB at a time: each block reads KWG rows of B along the
 * stripe, and keeps C's stripe (MWG x NWG, in the caches) as the running
 * sum between blocks. The prototype of this order ran 32 x 2048 x 2048 at
 * 284 to 294 GFLOP/s on both CPU runtimes (4 x 4 vectors a block, KWG 64,
 * NWG 1024; with the loops not unrolled PoCL ran it at 32).
 *
 * The running sum lives in C: each block adds alpha times its own sum, and
 * the first block adds it to beta * C (to 0 where beta is 0: C is then not
 * read). The work-group is one work-item; the NDRange is a work-item per
 * NWG columns and MWG rows of C, per product (dimension 2,
 * the batch, as in gemm_blocked.cl). op(B) = B^T, which the host never
 * sends here, takes a plain loop per element (OverrideVariant can force
 * this family for every form).
 *
 * Compile-time parameters: PRECISION (32 or 64), MWG, NWG, KWG, MB, NV,
 * and MDIMC = NDIMC = 1 (the launch's work-group). */
#if !defined(PRECISION) || !defined(MWG) || !defined(NWG) || !defined(KWG) || !defined(MB) || \
    !defined(NV) || !defined(MDIMC) || !defined(NDIMC)
#error "gemm_rows.cl: define PRECISION MWG NWG KWG MB NV MDIMC NDIMC"
#endif

/* Vectors of VW columns (a register), then of VH and VQ (a half and a
 * quarter of one) for a stripe's last columns and for products narrower
 * than a register: at 1000 x 8 x 1000 the columns an element at a time
 * ran at 3.9 GFLOP/s (Intel's CPU runtime, 2 Xeon cores, 2026-12-06). */
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#define realV double8
#define realH double4
#define realQ double2
#define VW 8
#define VH 4
#define VQ 2
#elif PRECISION == 32
#define storage float
#define real float
#define realV float16
#define realH float8
#define realQ float4
#define VW 16
#define VH 8
#define VQ 4
#else
#error "gemm_rows.cl: PRECISION is 32 or 64"
#endif
#define VLOAD_(W, p) vload##W(0, p)
#define VLOAD(W, p) VLOAD_(W, p)
#define VSTORE_(W, v, p) vstore##W(v, 0, p)
#define VSTORE(W, v, p) VSTORE_(W, v, p)
#define LOADV(p) VLOAD(VW, p)

#if MDIMC != 1 || NDIMC != 1 || NWG % (VW * NV) || MWG % MB
#error "gemm_rows.cl: one work-item a group, the stripe whole vectors, the rows whole blocks"
#endif

#include "gemm_product.h"

/* R rows of C from `row`, V vectors of W columns (type T) from `col`,
 * over this block's k in [k0, k1): the block's multiply-adds summed from
 * zero, A and B walked by pointer, then alpha times the sum added to C's
 * running sum (or to its start). Leaving alpha out of the k loop saves a
 * multiply per row and step. */
#define ROWS_BLOCK_OF(R, V, T, W)                                                       \
  {                                                                                    \
    T acc[R][V];                                                                       \
    _Pragma("unroll") for (int i = 0; i < R; ++i) {                                    \
      _Pragma("unroll") for (int j = 0; j < V; ++j) acc[i][j] = (T)(0);                \
    }                                                                                  \
    __global const storage* a = A + row * a_rs + k0 * a_ks;                            \
    __global const storage* b = B + k0 * b_rs + col;                                   \
    for (int k = k0; k < k1; ++k, a += a_ks, b += b_rs) {                              \
      T bv[V];                                                                         \
      _Pragma("unroll") for (int j = 0; j < V; ++j) bv[j] = VLOAD(W, b + W * j);       \
      _Pragma("unroll") for (int i = 0; i < R; ++i) {                                  \
        const T av = (T)(a[i * a_rs]);                                                 \
        _Pragma("unroll") for (int j = 0; j < V; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]); \
      }                                                                                \
    }                                                                                  \
    _Pragma("unroll") for (int i = 0; i < R; ++i) {                                    \
      __global storage* cr = C + (long)(row + i) * ldc + col;                          \
      _Pragma("unroll") for (int j = 0; j < V; ++j) {                                  \
        const T sum = !first            ? VLOAD(W, cr + W * j)                         \
                      : beta != (real)0 ? beta * VLOAD(W, cr + W * j)                  \
                                        : (T)(0);                                      \
        VSTORE(W, fma((T)(alpha), acc[i][j], sum), cr + W * j);                        \
      }                                                                                \
    }                                                                                  \
  }
#define ROWS_BLOCK(R, V) ROWS_BLOCK_OF(R, V, realV, VW)

/* The sum of a vector's elements, halves first. */
real sum_of(realV v) {
  const realH h = v.lo + v.hi;
  const realQ q = h.lo + h.hi;
#if VQ == 4
  const float2 t = q.lo + q.hi;
  return t.x + t.y;
#else
  return q.x + q.y;
#endif
}

/* R rows of C from `row` over the last `tail` columns (fewer than VQ) from
 * col_quarters, each a dot product over all of K (the kernel's comment
 * says why), then C = alpha * sum + beta * C. */
#define ROWS_DOTS(R)                                                                    \
  {                                                                                    \
    realV acc[R][VQ - 1];                                                              \
    _Pragma("unroll") for (int i = 0; i < R; ++i) {                                    \
      _Pragma("unroll") for (int j = 0; j < VQ - 1; ++j) acc[i][j] = (realV)(0);       \
    }                                                                                  \
    int k = 0;                                                                         \
    if (a_ks == 1) {                                                                   \
      for (; k + VW <= K; k += VW) {                                                   \
        realV av[R];                                                                   \
        _Pragma("unroll") for (int i = 0; i < R; ++i) av[i] = LOADV(A + (row + i) * a_rs + k); \
        _Pragma("unroll") for (int j = 0; j < VQ - 1; ++j) {                           \
          if (j < tail) {                                                              \
            __global const storage* b = B + col_quarters + j + k * b_rs;               \
            realV bv;                                                                  \
            if (b_rs == 1) {                                                           \
              bv = LOADV(b);                                                           \
            } else {                                                                   \
              real e[VW];                                                              \
              _Pragma("unroll") for (int q = 0; q < VW; ++q) e[q] = b[q * b_rs];       \
              bv = LOADV(e);                                                           \
            }                                                                          \
            _Pragma("unroll") for (int i = 0; i < R; ++i) acc[i][j] = fma(av[i], bv, acc[i][j]); \
          }                                                                            \
        }                                                                              \
      }                                                                                \
    }                                                                                  \
    _Pragma("unroll") for (int j = 0; j < VQ - 1; ++j) {                               \
      const int col = col_quarters + j;                                                \
      if (j < tail) _Pragma("unroll") for (int i = 0; i < R; ++i) {                    \
        __global const storage* a = A + (row + i) * a_rs;                              \
        real p = a_ks == 1 ? sum_of(acc[i][j]) : (real)0;                              \
        for (int kk = k; kk < K; ++kk) p = fma(a[kk * a_ks], B[kk * b_rs + col], p);   \
        __global storage* c = C + (long)(row + i) * ldc + col;                         \
        *c = fma(alpha, p, beta != (real)0 ? beta * *c : (real)0);                     \
      }                                                                                \
    }                                                                                  \
  }

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void gemm_rows(GEMM_ARGUMENTS) {
  const int z = (int)get_group_id(2);
  GEMM_PRODUCT(z);
  A += a_offset + (long)k_begin * a_ks;
  B += b_offset + (long)k_begin * b_rs;
  C += c_offset;
  const int row0 = (int)get_group_id(1) * MWG, row_end = min(row0 + MWG, M);
  const int col0 = (int)get_group_id(0) * NWG, col_end = min(col0 + NWG, N);

  /* K = 0 (or alpha 0): C = beta * C; op(B) = B^T: an element at a time. */
  if (K == 0 || b_trans) {
    for (int row = row0; row < row_end; ++row) {
      for (int col = col0; col < col_end; ++col) {
        real s = (real)0;
        for (int k = 0; k < K; ++k) s += A[row * a_rs + k * a_ks] * B[k * b_rs + col * b_cs];
        __global storage* c = C + (long)row * ldc + col;
        *c = (K == 0 ? (real)0 : alpha * s) + (beta != (real)0 ? beta * *c : (real)0);
      }
    }
    return;
  }
  /* The stripe in blocks of NV vectors, then of one vector, of a half and
   * of a quarter of one, then the columns after them one at a time (at 4 x
   * 1465 x 244 the last stripe's 441 columns left 57 to that loop with
   * blocks of 4 vectors alone). */
  const int col_blocks = col0 + (col_end - col0) / (VW * NV) * (VW * NV);
  const int col_vectors = col_blocks + (col_end - col_blocks) / VW * VW;
  const int col_halves = col_vectors + (col_end - col_vectors) / VH * VH;
  const int col_quarters = col_halves + (col_end - col_halves) / VQ * VQ;
  for (int k0 = 0; k0 < K; k0 += KWG) {
    const int k1 = min(k0 + KWG, K);
    const int first = k0 == 0;
    for (int col = col0; col < col_blocks; col += VW * NV) {
      int row = row0;
      for (; row + MB <= row_end; row += MB) ROWS_BLOCK(MB, NV)
      for (; row < row_end; ++row) ROWS_BLOCK(1, NV)
    }
    for (int col = col_blocks; col < col_vectors; col += VW) {
      int row = row0;
      for (; row + MB <= row_end; row += MB) ROWS_BLOCK(MB, 1)
      for (; row < row_end; ++row) ROWS_BLOCK(1, 1)
    }
    for (int col = col_vectors; col < col_halves; col += VH) {
      int row = row0;
      for (; row + MB <= row_end; row += MB) ROWS_BLOCK_OF(MB, 1, realH, VH)
      for (; row < row_end; ++row) ROWS_BLOCK_OF(1, 1, realH, VH)
    }
    for (int col = col_halves; col < col_quarters; col += VQ) {
      int row = row0;
      for (; row + MB <= row_end; row += MB) ROWS_BLOCK_OF(MB, 1, realQ, VQ)
      for (; row < row_end; ++row) ROWS_BLOCK_OF(1, 1, realQ, VQ)
    }
  }
  /* The last columns (fewer than VQ) an element at a time, each over all of
   * K: where A's rows lie along K, as dot products of VW elements a step
   * (a sum of one element a step waits on the last multiply-add: 8000 x 1 x
   * 1000 ran at 3.5 GFLOP/s so on Intel's CPU runtime, 2 Xeon cores), R
   * rows at a time, so that a step's vector of B, gathered down its column
   * where that is not contiguous, serves R rows. */
  const int tail = col_end - col_quarters;
  if (tail > 0) {
    int row = row0;
    for (; row + MB <= row_end; row += MB) ROWS_DOTS(MB)
    for (; row < row_end; ++row) ROWS_DOTS(1)
  }
}
