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
 * the batch, as in gemm_blocked.cl).
 *
 * op(B) = B^T lies along K, so a block of K of it is first transposed
 * into a tile in local memory (TW = NV vectors wide, KWG deep: 16 KiB in
 * single precision, 16 or 8 in double), which the same blocks then read
 * along its rows. The work-item is then a share of C that the host sets
 * by the NDRange (rows_grid in gemm/src/families.cpp: a few hundred rows,
 * a stripe of whole tiles), so that each transposed tile serves a few
 * hundred rows. Packed by a pass of its own first, B^T had
 * cost 1.53 and 1.22 times row NN's time at 256^3 and 512^3; transposed a
 * tile at a time, 1.03-1.06 and 1.00 (Intel's CPU runtime, 2 Xeon cores,
 * 2026-12-07). op(A) = A^T is read in place, or copied a block at a time
 * into local memory where B is not transposed (copy_a).
 *
 * Half precision is stored as half and computed in float, as in
 * gemm_blocked.cl; its running sum is kept in float, not in C: a work-item
 * takes its share of C a chunk of MWG x NWG at a time, the chunk's sum in
 * local memory (csum, MWG x NWG floats) between blocks of K, C written once.
 *
 * Compile-time parameters: PRECISION (16, 32 or 64), MWG, NWG, KWG, MB, NV,
 * and MDIMC = NDIMC = 1 (the launch's work-group). */
#if !defined(PRECISION) || !defined(MWG) || !defined(NWG) || !defined(KWG) || !defined(MB) || \
    !defined(NV) || !defined(MDIMC) || !defined(NDIMC)
#error "gemm_rows.cl: define PRECISION MWG NWG KWG MB NV MDIMC NDIMC"
#endif

/* Vectors of VW columns (a register), then of VH and VQ (a half and a
 * quarter of one) for a stripe's last columns and for products narrower
 * than a register (where op(B) = B, more than VQ of them one vector padded,
 * ROWS_PADDED): at 1000 x 8 x 1000 the columns an element at a time
 * ran at 3.9 GFLOP/s (Intel's CPU runtime, 2 Xeon cores, 2026-12-06). */
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#define realV double8
#define realH double4
#define realQ double2
#define realF double4
/* ROWS_PADDED's lanes: vectors of integers as wide as realV and realH. */
#define maskV long8
#define maskH long4
#define LANES_V ((maskV)(0, 1, 2, 3, 4, 5, 6, 7))
#define LANES_H ((maskH)(0, 1, 2, 3))
#define VW 8
#define VH 4
#define VQ 2
#elif PRECISION == 32 || PRECISION == 16
#if PRECISION == 32
#define storage float
#else
#define storage half
#endif
#define real float
#define realV float16
#define realH float8
#define realQ float4
#define realF float4
#define maskV int16
#define maskH int8
#define LANES_V ((maskV)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define LANES_H ((maskH)(0, 1, 2, 3, 4, 5, 6, 7))
#define VW 16
#define VH 8
#define VQ 4
#else
#error "gemm_rows.cl: PRECISION is 16, 32 or 64"
#endif
/* VLOAD and VSTORE: W reals in local or private memory; GLOAD and GSTORE:
 * W elements of A, B or C in global memory, as reals (half converted). */
#define VLOAD_(W, p) vload##W(0, p)
#define VLOAD(W, p) VLOAD_(W, p)
#define VSTORE_(W, v, p) vstore##W(v, 0, p)
#define VSTORE(W, v, p) VSTORE_(W, v, p)
#if PRECISION == 16
#define GLOAD_(W, p) vload_half##W(0, p)
#define GSTORE_(W, v, p) vstore_half##W(v, 0, p)
#define vload_half1(o, p) vload_half(o, p)
#define vstore_half1(v, o, p) vstore_half(v, o, p)
#define RUNNING 1
#else
#define GLOAD_(W, p) vload##W(0, p)
#define GSTORE_(W, v, p) vstore##W(v, 0, p)
#define RUNNING 0
#endif
#define GLOAD(W, p) GLOAD_(W, p)
#define GSTORE(W, v, p) GSTORE_(W, v, p)
/* A "vector" of one element, for ROWS_TAIL's blocks. */
#define vload1(o, p) ((p)[o])
#define vstore1(v, o, p) ((p)[o] = (v))
/* Where ROWS_BLOCK_OF reads A or B (its AS and BS): glob, an operand in
 * global memory, or loc, a copy of its block in local memory (as reals). */
#define PTR_glob __global const storage
#define PTR_loc __local const real
#define LD_glob(W, p) GLOAD(W, p)
#define LD_loc(W, p) VLOAD(W, p)

#if MDIMC != 1 || NDIMC != 1 || NWG % (VW * NV) || MWG % MB
#error "gemm_rows.cl: one work-item a group, the stripe whole vectors, the rows whole blocks"
#endif

#include "gemm_product.h"

/* C's element(s) at CP (W of them, type T) += alpha * ACC: the block's sum
 * added to the running sum, started from beta * C on the first block of K
 * (from 0 where beta is 0: C is then not read). The running sum is C
 * itself, or in half precision the chunk's csum at SP, C written on the
 * last block only. */
#if RUNNING
#define ROWS_ADD(T, W, ACC, CP, SP)                                                     \
  {                                                                                     \
    const T sum = !first            ? VLOAD(W, SP)                                      \
                  : beta != (real)0 ? beta * GLOAD(W, CP)                               \
                                    : (T)(0);                                           \
    const T v = fma((T)(alpha), ACC, sum);                                              \
    if (last) {                                                                         \
      GSTORE(W, v, CP);                                                                 \
    } else {                                                                            \
      VSTORE(W, v, SP);                                                                 \
    }                                                                                   \
  }
#else
#define ROWS_ADD(T, W, ACC, CP, SP)                                                     \
  {                                                                                     \
    const T sum = !first            ? GLOAD(W, CP)                                      \
                  : beta != (real)0 ? beta * GLOAD(W, CP)                               \
                                    : (T)(0);                                           \
    GSTORE(W, fma((T)(alpha), ACC, sum), CP);                                           \
  }
#endif

/* R rows of C from `row`, V vectors of W columns (type T) from `col`,
 * over this block's k in [k0, k1): the block's multiply-adds summed from
 * zero, A and B walked by pointer, then alpha times the sum added to C's
 * running sum (or to its start). Leaving alpha out of the k loop saves a
 * multiply per row and step. Where A and B are read from is the stripe's
 * (ROWS_STRIPE): op(A)(row, k0) at AT, in AS (glob or loc), rows ARS and
 * steps of K AKS apart; op(B)(k0, col) at BT in BS, rows BSTEP apart. */
#define ROWS_BLOCK_OF(R, V, T, W, AS, AT, ARS, AKS, BS, BT, BSTEP)                      \
  {                                                                                     \
    T acc[R][V];                                                                        \
    _Pragma("unroll") for (int i = 0; i < R; ++i) {                                     \
      _Pragma("unroll") for (int j = 0; j < V; ++j) acc[i][j] = (T)(0);                 \
    }                                                                                   \
    PTR_##AS* a = AT;                                                                   \
    PTR_##BS* b = BT;                                                                   \
    for (int k = k0; k < k1; ++k, a += AKS, b += BSTEP) {                               \
      T bv[V];                                                                          \
      _Pragma("unroll") for (int j = 0; j < V; ++j) bv[j] = LD_##BS(W, b + W * j);      \
      _Pragma("unroll") for (int i = 0; i < R; ++i) {                                   \
        const T av = (T)(LD_##AS(1, a + i * ARS));                                      \
        _Pragma("unroll") for (int j = 0; j < V; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]);\
      }                                                                                 \
    }                                                                                   \
    _Pragma("unroll") for (int i = 0; i < R; ++i) {                                     \
      __global storage* cr = C + (long)(row + i) * ldc + col;                           \
      _Pragma("unroll") for (int j = 0; j < V; ++j) {                                   \
        ROWS_ADD(T, W, acc[i][j], cr + W * j,                                           \
                 csum + (row + i - row0) * chunk_cols + (col - col0) + W * j)           \
      }                                                                                 \
    }                                                                                   \
  }

/* C's rows [RB, RE) and columns [CB, CE) over this block of K (CE - CB a
 * whole number of quarter vectors): the columns in blocks of NV vectors,
 * then of one vector, of a half and of a quarter of one, each over the
 * rows MB at a time, then one at a time; A and B read as ROWS_BLOCK_OF
 * says (AT and BT name `row` and `col`). */
#define ROWS_STRIPE(RB, RE, CB, CE, AS, AT, ARS, AKS, BS, BT, BSTEP)                    \
  {                                                                                     \
    const int col_blocks = CB + (CE - CB) / (VW * NV) * (VW * NV);                      \
    const int col_vectors = col_blocks + (CE - col_blocks) / VW * VW;                   \
    const int col_halves = col_vectors + (CE - col_vectors) / VH * VH;                  \
    for (int col = CB; col < col_blocks; col += VW * NV) {                              \
      int row = RB;                                                                     \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_BLOCK_OF(MB, NV, realV, VW, AS, AT, ARS, AKS, BS, BT, BSTEP)               \
      for (; row < RE; ++row)                                                           \
        ROWS_BLOCK_OF(1, NV, realV, VW, AS, AT, ARS, AKS, BS, BT, BSTEP)                \
    }                                                                                   \
    for (int col = col_blocks; col < col_vectors; col += VW) {                          \
      int row = RB;                                                                     \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_BLOCK_OF(MB, 1, realV, VW, AS, AT, ARS, AKS, BS, BT, BSTEP)                \
      for (; row < RE; ++row)                                                           \
        ROWS_BLOCK_OF(1, 1, realV, VW, AS, AT, ARS, AKS, BS, BT, BSTEP)                 \
    }                                                                                   \
    for (int col = col_vectors; col < col_halves; col += VH) {                          \
      int row = RB;                                                                     \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_BLOCK_OF(MB, 1, realH, VH, AS, AT, ARS, AKS, BS, BT, BSTEP)                \
      for (; row < RE; ++row)                                                           \
        ROWS_BLOCK_OF(1, 1, realH, VH, AS, AT, ARS, AKS, BS, BT, BSTEP)                 \
    }                                                                                   \
    for (int col = col_halves; col < CE; col += VQ) {                                   \
      int row = RB;                                                                     \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_BLOCK_OF(MB, 1, realQ, VQ, AS, AT, ARS, AKS, BS, BT, BSTEP)                \
      for (; row < RE; ++row)                                                           \
        ROWS_BLOCK_OF(1, 1, realQ, VQ, AS, AT, ARS, AKS, BS, BT, BSTEP)                 \
    }                                                                                   \
  }

/* Where op(A) = A^T: the stripe's last columns (fewer than VQ, after
 * col_quarters) over this block of K, each a column of one-element blocks
 * of ROWS_BLOCK_OF (op(B)(k0, col) read from B in place), over C's rows
 * [RB, RE), A read as there. (Dot products along K, ROWS_DOTS, need A's
 * rows along K: an element at a time down A^T's columns, 333 x 1111 x 222
 * took 1.34 times NN's time, Intel's CPU runtime, 2 Xeon cores,
 * 2026-12-07.) */
#define ROWS_TAIL(RB, RE, AS, AT, ARS, AKS)                                             \
  {                                                                                     \
    for (int col = col_quarters; col < col_end; ++col) {                                \
      int row = RB;                                                                     \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_BLOCK_OF(MB, 1, real, 1, AS, AT, ARS, AKS, glob,                           \
                      B + k0 * b_rs + col * b_cs, b_rs)                                 \
      for (; row < RE; ++row)                                                           \
        ROWS_BLOCK_OF(1, 1, real, 1, AS, AT, ARS, AKS, glob,                            \
                      B + k0 * b_rs + col * b_cs, b_rs)                                 \
    }                                                                                   \
  }

/* The tile's width: a block of NV vectors. */
#define TW (VW * NV)

/* op(B) = B^T: elements k0 .. k1 of B^T's rows col0 .. col0 + w (B^T's
 * rows lie along K), into `tile` (row k - k0, column col - col0), in 4 x 4
 * blocks: four rows of B^T read as vectors, written as four vectors along
 * the tile's rows; the edges an element at a time. */
void fill_tile(__local real* tile, __global const storage* B, const long ldb, const int col0,
               const int w, const int k0, const int k1) {
  const int kw = k1 - k0;
  for (int c = 0; c < w; c += 4) {
    __global const storage* bt = B + (long)(col0 + c) * ldb + k0;
    int kk = 0;
    if (c + 4 <= w) {
      for (; kk + 4 <= kw; kk += 4) {
        const realF r0 = GLOAD(4, bt + kk), r1 = GLOAD(4, bt + ldb + kk),
                    r2 = GLOAD(4, bt + 2 * ldb + kk), r3 = GLOAD(4, bt + 3 * ldb + kk);
        __local real* t = tile + kk * TW + c;
        vstore4((realF)(r0.s0, r1.s0, r2.s0, r3.s0), 0, t);
        vstore4((realF)(r0.s1, r1.s1, r2.s1, r3.s1), 0, t + TW);
        vstore4((realF)(r0.s2, r1.s2, r2.s2, r3.s2), 0, t + 2 * TW);
        vstore4((realF)(r0.s3, r1.s3, r2.s3, r3.s3), 0, t + 3 * TW);
      }
    }
    for (int cc = c; cc < min(c + 4, w); ++cc) {
      for (int q = kk; q < kw; ++q) tile[q * TW + cc] = GLOAD(1, bt + (cc - c) * ldb + q);
    }
  }
}

/* The sum of a vector's elements, halves first, through an array: as
 * `v.lo + v.hi`, the swizzles' shuffles made Oclgrind take every sum for an
 * uninitialised value. */
real sum_of(realV v) {
  real e[VW];
  VSTORE(VW, v, e);
  _Pragma("unroll") for (int q = 0; q < VW / 2; ++q) e[q] += e[q + VW / 2];
  _Pragma("unroll") for (int q = 0; q < VW / 4; ++q) e[q] += e[q + VW / 4];
  _Pragma("unroll") for (int q = 0; q < VW / 8; ++q) e[q] += e[q + VW / 8];
#if VW == 16
  e[0] += e[1];
#endif
  return e[0];
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
        _Pragma("unroll") for (int i = 0; i < R; ++i) av[i] = GLOAD(VW, A + (row + i) * a_rs + k); \
        _Pragma("unroll") for (int j = 0; j < VQ - 1; ++j) {                           \
          if (j < tail) {                                                              \
            __global const storage* b = B + (col_quarters + j) * b_cs + k * b_rs;      \
            realV bv;                                                                  \
            if (b_rs == 1) {                                                           \
              bv = GLOAD(VW, b);                                                       \
            } else {                                                                   \
              real e[VW];                                                              \
              _Pragma("unroll") for (int q = 0; q < VW; ++q) e[q] = GLOAD(1, b + q * b_rs); \
              bv = VLOAD(VW, e);                                                       \
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
        for (int kk = k; kk < K; ++kk)                                                 \
          p = fma(GLOAD(1, a + kk * a_ks), GLOAD(1, B + kk * b_rs + col * b_cs), p);   \
        __global storage* c = C + (long)(row + i) * ldc + col;                         \
        GSTORE(1, fma(alpha, p, beta != (real)0 ? beta * GLOAD(1, c) : (real)0), c);   \
      }                                                                                \
    }                                                                                  \
  }

/* Products narrower than a register's vector (W columns, fewer than VW)
 * where A's rows lie along K: R rows of C from `row` over K's chunk [k0,
 * k1) as dot products of VW elements a step, DG columns at a time, A's rows
 * read along K and B's chunk from `tile`, where fill_columns put each of
 * its columns along K, KC apart; each sum added to C's running sum
 * (ROWS_ADD). A step of the quarter-vector blocks (ROWS_STRIPE) broadcasts
 * one element of A into four lanes: 4000 x 4 x 4000 ran at 19 GFLOP/s that
 * way, 4000 x 3 x 4000 as dot products with B gathered down its columns
 * (ROWS_DOTS) at 30 (Intel's CPU runtime, 2 Xeon cores, 2026-12-07). */
#define DG 4
#define ROWS_DOT_BLOCK(R, W, KC)                                                       \
  {                                                                                   \
    for (int cg = 0; cg < W; cg += DG) {                                              \
      realV acc[R][DG];                                                               \
      _Pragma("unroll") for (int i = 0; i < R; ++i) {                                 \
        _Pragma("unroll") for (int j = 0; j < DG; ++j) acc[i][j] = (realV)(0);        \
      }                                                                               \
      __global const storage* a = A + (long)row * a_rs + k0;                          \
      int kk = 0;                                                                     \
      for (; kk + VW <= k1 - k0; kk += VW) {                                          \
        realV av[R];                                                                  \
        _Pragma("unroll") for (int i = 0; i < R; ++i) av[i] = GLOAD(VW, a + i * a_rs + kk); \
        _Pragma("unroll") for (int j = 0; j < DG; ++j) {                              \
          if (cg + j < W) {                                                           \
            const realV bv = VLOAD(VW, tile + (cg + j) * KC + kk);                    \
            _Pragma("unroll") for (int i = 0; i < R; ++i) acc[i][j] = fma(av[i], bv, acc[i][j]); \
          }                                                                           \
        }                                                                             \
      }                                                                               \
      _Pragma("unroll") for (int j = 0; j < DG; ++j) {                                \
        const int col = col0 + cg + j;                                                \
        if (cg + j < W) _Pragma("unroll") for (int i = 0; i < R; ++i) {               \
          real p = sum_of(acc[i][j]);                                                 \
          for (int q = kk; q < k1 - k0; ++q)                                          \
            p = fma((real)GLOAD(1, a + i * a_rs + q), tile[(cg + j) * KC + q], p);    \
          ROWS_ADD(real, 1, p, C + (long)(row + i) * ldc + col,                       \
                   csum + (row + i - row0) * chunk_cols + (col - col0))               \
        }                                                                             \
      }                                                                               \
    }                                                                                 \
  }

/* Elements k0 .. k1 of op(B)'s columns col0 .. col0 + w into `tile`, each
 * column along K (column c from c * kc), for ROWS_DOT_BLOCK: op(B) = B
 * read along its rows, w elements a row; op(B) = B^T, whose columns lie
 * along K, a column at a time. */
void fill_columns(__local real* tile, __global const storage* B, const long b_rs,
                  const long b_cs, const int col0, const int w, const int k0, const int k1,
                  const int kc) {
  if (b_rs == 1) {
    for (int c = 0; c < w; ++c) {
      __global const storage* from = B + (long)(col0 + c) * b_cs;
      for (int k = k0; k < k1; ++k) tile[c * kc + (k - k0)] = GLOAD(1, from + k);
    }
    return;
  }
  for (int k = k0; k < k1; ++k) {
    __global const storage* from = B + (long)k * b_rs + (long)col0 * b_cs;
    for (int c = 0; c < w; ++c) tile[c * kc + (k - k0)] = GLOAD(1, from + c * b_cs);
  }
}

/* R rows of C from `row` over the WIDTH columns from pc that follow the
 * chunk's whole vectors (more than a quarter vector, fewer than W: a
 * vector T's width), as one vector padded, over k in [KB, KE): op(B)'s
 * rows read as whole vectors up to k_safe, their last lanes (past the
 * columns: the row's padding or the next row's first elements, whatever
 * they hold, NaN or denormals) set to zero before they reach a
 * multiply-add (`keep`, lanes of integer type MT from LANES), the rows
 * after it element by element (a whole vector there would end past B's
 * last row); A read as ROWS_BLOCK_OF reads it (AS, AT
 * at `row` and KB, ARS, AKS); the sum added to C's running sum (ROWS_ADD,
 * `first` and `last` the caller's) in pieces of a half, a quarter and one
 * element. A half and a quarter vector a pass each (ROWS_STRIPE) read A
 * twice and broadcast each element of it twice; 12 columns so ran at a
 * third of 16's rate. Padded, 9 to 15 columns of 2000 x N x 1000 ran 2.3
 * to 2.6 times as fast under Intel's CPU runtime and 1.3 to 1.7 under
 * PoCL, 5 to 8 columns in a half vector 1.25 to 1.6 and 0.9 to 1.2, and
 * 12 columns after a whole vector (28) 1.1 to 1.3 and 1.35 to 1.6
 * (medians of three and five runs of nine, 2 Zen 4 cores, 2026-12-07;
 * docs/PERFORMANCE.md). */
/* Row i's running sum at column pc in half precision (ROWS_ADD's SP). */
#define ROWS_SP (csum + (row + i - row0) * chunk_cols + (pc - col0))
#define ROWS_PADDED(R, WIDTH, T, W, MT, LANES, AS, AT, ARS, AKS, KB, KE)                \
  {                                                                                     \
    T acc[R];                                                                           \
    _Pragma("unroll") for (int i = 0; i < R; ++i) acc[i] = (T)(0);                      \
    PTR_##AS* a = AT;                                                                   \
    __global const storage* b = B + (long)(KB) * b_rs + pc;                             \
    const MT keep = LANES < (MT)(WIDTH);                                                \
    int k = KB;                                                                         \
    for (const int ks = min(KE, k_safe); k < ks; ++k, a += AKS, b += b_rs) {            \
      const T bv = select((T)(0), GLOAD(W, b), keep);                                   \
      _Pragma("unroll") for (int i = 0; i < R; ++i)                                     \
        acc[i] = fma((T)(LD_##AS(1, a + i * ARS)), bv, acc[i]);                         \
    }                                                                                   \
    for (; k < KE; ++k, a += AKS, b += b_rs) {                                          \
      real e[W];                                                                        \
      for (int q = 0; q < W; ++q) e[q] = q < WIDTH ? (real)GLOAD(1, b + q) : (real)0;   \
      const T bv = VLOAD(W, e);                                                         \
      _Pragma("unroll") for (int i = 0; i < R; ++i)                                     \
        acc[i] = fma((T)(LD_##AS(1, a + i * ARS)), bv, acc[i]);                         \
    }                                                                                   \
    _Pragma("unroll") for (int i = 0; i < R; ++i) {                                     \
      real part[W];                                                                     \
      VSTORE(W, acc[i], part);                                                          \
      __global storage* cr = C + (long)(row + i) * ldc + pc;                            \
      int j = 0;                                                                        \
      if (W > VH && WIDTH >= VH) {                                                      \
        ROWS_ADD(realH, VH, VLOAD(VH, part), cr, ROWS_SP)                               \
        j = VH;                                                                         \
      }                                                                                 \
      if (WIDTH - j >= VQ) {                                                            \
        ROWS_ADD(realQ, VQ, VLOAD(VQ, part + j), cr + j, ROWS_SP + j)                   \
        j += VQ;                                                                        \
      }                                                                                 \
      for (; j < WIDTH; ++j) ROWS_ADD(real, 1, part[j], cr + j, ROWS_SP + j)            \
    }                                                                                   \
  }
/* ROWS_PADDED over rows [RB, RE), MB at a time, then one at a time. */
#define ROWS_PADDED_ROWS(RB, RE, AS, AT, ARS, AKS, KB, KE)                              \
  {                                                                                     \
    int row = RB;                                                                       \
    if (pad > VH) {                                                                     \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_PADDED(MB, pad, realV, VW, maskV, LANES_V, AS, AT, ARS, AKS, KB, KE)       \
      for (; row < RE; ++row)                                                           \
        ROWS_PADDED(1, pad, realV, VW, maskV, LANES_V, AS, AT, ARS, AKS, KB, KE)        \
    } else {                                                                            \
      for (; row + MB <= RE; row += MB)                                                 \
        ROWS_PADDED(MB, pad, realH, VH, maskH, LANES_H, AS, AT, ARS, AKS, KB, KE)       \
      for (; row < RE; ++row)                                                           \
        ROWS_PADDED(1, pad, realH, VH, maskH, LANES_H, AS, AT, ARS, AKS, KB, KE)        \
    }                                                                                   \
  }

/* The rows of op(A) = A^T's block that ROWS_STRIPE reads a chunk at a time
 * (32 floats or 16 doubles: 2 KiB a step of K). */
#if PRECISION == 64
#define AC 16
#else
#define AC 32
#endif

/* Elements k0 .. k1 of op(A)'s rows rc .. rc + rows into `at` (row k - k0,
 * column row - rc), so that the block's steps of K lie AC elements apart.
 * op(A) = A^T, whose rows lie along M: a row of A^T at a time, and not a
 * row of A^T apart (at 2048 x 2048 x 128, 8 KiB: every step a new page, all
 * of them in the same few cache sets). op(A) = A (half precision: its
 * elements converted once, not once for each block of columns): a row of
 * A's block at a time, four steps of K a load. */
void copy_a(__local real* at, __global const storage* A, const long a_rs, const long a_ks,
            const int rc, const int rows, const int k0, const int k1) {
  if (a_rs == 1) {
    for (int k = k0; k < k1; ++k) {
      __global const storage* from = A + (long)k * a_ks + rc;
      __local real* to = at + (k - k0) * AC;
      int r = 0;
      for (; r + 4 <= rows; r += 4) vstore4(GLOAD(4, from + r), 0, to + r);
      for (; r < rows; ++r) to[r] = GLOAD(1, from + r);
    }
    return;
  }
  for (int r = 0; r < rows; ++r) {
    __global const storage* from = A + (long)(rc + r) * a_rs;
    __local real* to = at + r;
    int k = k0;
    for (; k + 4 <= k1; k += 4) {
      const realF v = GLOAD(4, from + k);
      to[(k - k0) * AC] = v.s0;
      to[(k - k0 + 1) * AC] = v.s1;
      to[(k - k0 + 2) * AC] = v.s2;
      to[(k - k0 + 3) * AC] = v.s3;
    }
    for (; k < k1; ++k) to[(k - k0) * AC] = GLOAD(1, from + k);
  }
}

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void gemm_rows(GEMM_ARGUMENTS) {
  /* op(B) = B^T: B read along its rows from a tile in local memory, each
   * block of K's tile transposed from B^T's rows there first (fill_tile). */
  __local real tile[KWG * TW];
  /* op(A) = A^T: its block copied a chunk of rows at a time (copy_a). */
  __local real a_tile[KWG * AC];
#if RUNNING
  /* Half precision: the chunk's running sum (ROWS_ADD). */
  __local real csum[MWG * NWG];
#endif
  const int z = (int)get_group_id(2);
  GEMM_PRODUCT(z);
  A += a_offset + (long)k_begin * a_ks;
  B += b_offset + (long)k_begin * b_rs;
  C += c_offset;
  /* A stripe of NWG columns and MWG rows a work-item; with op(B) = B^T,
   * N's and M's shares of the NDRange's dimensions (the host's, rows_grid),
   * the columns whole tiles, the rows whole blocks of MB, so that a tile of
   * B, transposed, serves a few hundred rows. */
  int share_row0, share_row_end, share_col0, share_col_end;
  if (b_trans) {
    const int stripes = (int)get_num_groups(0), groups = (int)get_num_groups(1);
    const int cols = ((N + stripes - 1) / stripes + TW - 1) / TW * TW;
    const int rows = ((M + groups - 1) / groups + MB - 1) / MB * MB;
    share_row0 = (int)get_group_id(1) * rows, share_row_end = min(share_row0 + rows, M);
    share_col0 = (int)get_group_id(0) * cols, share_col_end = min(share_col0 + cols, N);
  } else {
    share_row0 = (int)get_group_id(1) * MWG, share_row_end = min(share_row0 + MWG, M);
    share_col0 = (int)get_group_id(0) * NWG, share_col_end = min(share_col0 + NWG, N);
  }
  if (share_row0 >= M || share_col0 >= N) return;

  /* K = 0 (or alpha 0): C = beta * C, an element at a time. */
  if (K == 0) {
    for (int row = share_row0; row < share_row_end; ++row) {
      for (int col = share_col0; col < share_col_end; ++col) {
        __global storage* c = C + (long)row * ldc + col;
        GSTORE(1, beta != (real)0 ? beta * GLOAD(1, c) : (real)0, c);
      }
    }
    return;
  }
  /* The share in one chunk, or in half precision in chunks as large as
   * csum: MWG x NWG (the share itself where B is not transposed), with op(B)
   * = B^T a tile wide and as many rows as fit, so that each transposed tile
   * serves them all (in chunks of 16 x 512, 512^3 with B^T ran at 0.79 of
   * 32 x 256's speed, Intel's CPU runtime, 2 Xeon cores, 2026-12-07). */
  const int chunk_rows = !RUNNING ? share_row_end - share_row0 : b_trans ? MWG * NWG / TW : MWG;
  const int chunk_cols = !RUNNING ? share_col_end - share_col0 : b_trans ? TW : NWG;
  for (int row0 = share_row0; row0 < share_row_end; row0 += chunk_rows) {
    for (int col0 = share_col0; col0 < share_col_end; col0 += chunk_cols) {
      const int row_end = min(row0 + chunk_rows, share_row_end);
      const int col_end = min(col0 + chunk_cols, share_col_end);
      /* The chunk's last columns past whole vectors, more than a quarter
       * vector of them where op(B) = B: ROWS_PADDED's padded vector, over
       * all of K where the chunk has no whole vector (A read once), else
       * beside ROWS_STRIPE's blocks of K. */
      const int rem = (col_end - col0) % VW;
      const int pad = !b_trans && rem > VQ ? rem : 0;
      const int narrow = col_end - col0 < VW;
      /* Other chunks of a quarter vector to a vector's width where op(A) =
       * A (op(B) = B^T, or a quarter vector of columns): all of it as dot
       * products (ROWS_DOT_BLOCK), over chunks of K as long as the tile
       * holds for its columns, so that each row is read a few KiB along at
       * a time (in blocks of KWG, a new page every 256 bytes, 4000 x 1 x
       * 4000 took 4.1 ms where ROWS_DOTS, each row along all of K, took
       * 1.5). Narrower chunks stay with ROWS_DOTS, their B's column read in
       * place: 4000 x 1 x 4000 and 4000 x 2 x 4000 took 2.5 and 2.8 ms here,
       * 1.5 and 2.4 there. */
      if (!pad && !a_trans && col_end - col0 >= VQ && narrow) {
        const int w = col_end - col0;
        const int kc = max(VW, KWG * TW / w / VW * VW);
        for (int k0 = 0; k0 < K; k0 += kc) {
          const int k1 = min(k0 + kc, K);
          const int first = k0 == 0, last = k1 == K;
          fill_columns(tile, B, b_rs, b_cs, col0, w, k0, k1, kc);
          int row = row0;
          for (; row + MB <= row_end; row += MB) ROWS_DOT_BLOCK(MB, w, kc)
          for (; row < row_end; ++row) ROWS_DOT_BLOCK(1, w, kc)
        }
        continue;
      }
      /* The chunk's columns up to col_quarters in ROWS_STRIPE's blocks (NV
       * vectors, then one vector, a half and a quarter of one), then the
       * columns after them one at a time (at 4 x 1465 x 244 the last
       * stripe's 441 columns left 57 to that loop with blocks of 4 vectors
       * alone). */
      const int col_quarters = pad ? col_end - pad : col_end - (col_end - col0) % VQ;
      /* The padded columns' start, and the rows of B whose vector from
       * there ends inside B's last row (ROWS_PADDED). */
      const int pc = col_quarters;
      const long span = (long)(K - 1) * b_rs + N - pc - (pad > VH ? VW : VH);
      const int k_safe = span < 0 ? 0 : (int)min((long)K, span / b_rs + 1);
      /* A chunk narrower than a vector, padded: over all of K at once. */
      if (pad && narrow) {
        const int first = 1, last = 1;
        ROWS_PADDED_ROWS(row0, row_end, glob, A + row * a_rs, a_rs, a_ks, 0, K)
        continue;
      }
      for (int k0 = 0; k0 < K; k0 += KWG) {
        const int k1 = min(k0 + KWG, K);
        const int first = k0 == 0, last = k1 == K;
        if (b_trans) {
          /* A^T, if so, in place: a copy a tile's width of columns would
           * have to serve took 1.18 times the time at 256^3 (Intel's CPU
           * runtime, 2 Xeon cores, 2026-12-07). */
          for (int cb = col0; cb < col_quarters; cb += TW) {
            const int ce = min(cb + TW, col_quarters);
            fill_tile(tile, B, b_cs, cb, ce - cb, k0, k1);
            ROWS_STRIPE(row0, row_end, cb, ce, glob, A + row * a_rs + k0 * a_ks, a_rs, a_ks,
                        loc, tile + (col - cb), TW)
          }
          if (a_trans) ROWS_TAIL(row0, row_end, glob, A + row * a_rs + k0 * a_ks, a_rs, a_ks)
        } else if ((a_trans || RUNNING) && col_end - col0 >= TW) {
          for (int rc = row0; rc < row_end; rc += AC) {
            const int rc_end = min(rc + AC, row_end);
            copy_a(a_tile, A, a_rs, a_ks, rc, rc_end - rc, k0, k1);
            ROWS_STRIPE(rc, rc_end, col0, col_quarters, loc, a_tile + (row - rc), 1, AC, glob,
                        B + k0 * b_rs + col, b_rs)
            if (a_trans && !pad) {
              ROWS_TAIL(rc, rc_end, loc, a_tile + (row - rc), 1, AC)
            }
            if (pad && !narrow) {
              ROWS_PADDED_ROWS(rc, rc_end, loc, a_tile + (row - rc), 1, AC, k0, k1)
            }
          }
        } else {
          /* (A^T in place too where the stripe is narrower than a tile:
           * copied for 8 columns, row TN took 1.8 times NN's time at 2000 x
           * 8 x 1000, in place 1.3.) */
          ROWS_STRIPE(row0, row_end, col0, col_quarters, glob, A + row * a_rs + k0 * a_ks, a_rs,
                      a_ks, glob, B + k0 * b_rs + col, b_rs)
          if (a_trans && !pad) {
            ROWS_TAIL(row0, row_end, glob, A + row * a_rs + k0 * a_ks, a_rs, a_ks)
          }
          if (pad && !narrow) {
            ROWS_PADDED_ROWS(row0, row_end, glob, A + row * a_rs + k0 * a_ks, a_rs, a_ks, k0, k1)
          }
        }
      }
      /* The last columns (fewer than VQ) an element at a time, each over
       * all of K: where A's rows lie along K, as dot products of VW elements
       * a step (a sum of one element a step waits on the last multiply-add:
       * 8000 x 1 x 1000 ran at 3.5 GFLOP/s so on Intel's CPU runtime, 2
       * Xeon cores), R rows at a time, so that a step's vector of B,
       * gathered down its column where that is not contiguous, serves R
       * rows. */
      const int tail = pad ? 0 : col_end - col_quarters;
      if (tail > 0 && !a_trans) {
        int row = row0;
        for (; row + MB <= row_end; row += MB) ROWS_DOTS(MB)
        for (; row < row_end; ++row) ROWS_DOTS(1)
      }
    }
  }
}
