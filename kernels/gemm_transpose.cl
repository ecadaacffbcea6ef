/* op(A) = A^T and op(B) = B^T packed for the GEMM points that read A and
 * B from global memory (gemm_blocked.cl's with SA = 0, SB = 0, the
 * CPU-shaped ones): their loads of B run along N, which B^T does not hold
 * contiguously (B^T through the guarded path ran at a tenth of their speed
 * on both CPU runtimes), and A^T read in place took 1.7 times NN's time
 * (the 32 x 64 tile in single precision, PoCL) and 2.5 times in double
 * (1024^3, 2 Zen 4 cores, 2026-12-03). The pass:
 * T[t_offset + z * cols * t_ld + c * t_ld + r] = X[z][r][c] for a rows x
 * cols row-major X with leading dimension ld, product z of the batch at
 * offset + z * stride, or, where `per_batch`, at batch_offsets[3z + which]
 * (the GEMM's three offsets per product: 0 A's, 1 B's); T cols x rows per
 * product, rows t_ld apart (t_ld = rows, packed, unless those rows would
 * lie a multiple of 4 KiB apart: see matmul_padded_ldb). Elements are
 * copied as bits (BITS 16, 32, 64), whatever their type. gemm_transpose
 * moves the whole BR x BC blocks (8 rows of X, 16 columns), a work-item
 * each, as 4 x 4 pieces: four rows read as vectors, transposed in
 * registers, written as four vectors down T; no local memory, no barrier,
 * no branch. gemm_transpose_edge, launched after it where rows is not a
 * multiple of BR or cols of BC, moves the rest element by element. The
 * host's NDRange leaves the work-group to the driver. A block reads 8 rows
 * at once, not 16: rows of X a multiple of 4 KiB apart share a cache set,
 * and 16 of them overflowed the L1's ways. On 2 Zen 4 cores (2026-12-04,
 * single precision, microseconds on PoCL / Intel's CPU runtime), against
 * 16 x 16 blocks moved through a private array a column at a time:
 * 256^2 55-59 / 13-15 (was 84-118 / 15-16), 512^2 107-144 / 55-79 (was
 * 224-330 / 46), 1024^2 203-226 / 99-193 (was 811-1292 / 152-167), 2048^2
 * 0.9-1.6 ms / 0.8 (was 2.0-3.8 / 1.8), 128 x 2048 91-128 / 35-55 (was
 * 150-230 / 47-49). Moving a block through local memory (16 x 16
 * work-groups, one work-item per element) was slower still: on a CPU the
 * work-items of a group are a loop, and a block's vectors are what its
 * cores move well. (Only the CPU-shaped points take a pass.) */
#if !defined(BITS)
#error "gemm_transpose.cl: define BITS"
#endif
#if BITS == 16
#define element ushort
#elif BITS == 32
#define element uint
#elif BITS == 64
#define element ulong
#else
#error "gemm_transpose.cl: BITS is 16, 32 or 64"
#endif
#include "gemm_transpose_block.h"
#define BR GEMM_TRANSPOSE_BLOCK_ROWS
#define BC GEMM_TRANSPOSE_BLOCK_COLS
#define VEC4_(e) e##4
#define VEC4(e) VEC4_(e)
typedef VEC4(element) element4;

/* NDRange {cols / BC, rows / BR, batch}: block (r0, c0) of product z. */
__kernel void gemm_transpose(const int rows, const int cols, __global const element* restrict X,
                             const long offset, const int ld, const long stride,
                             __global const long* restrict batch_offsets, const int per_batch,
                             const int which, __global element* restrict T,
                             const long t_offset, const int t_ld) {
  const int r0 = (int)get_global_id(1) * BR, c0 = (int)get_global_id(0) * BC;
  const int z = (int)get_global_id(2);
  __global const element* x =
      X + (per_batch ? batch_offsets[3 * z + which] : offset + z * stride);
  __global element* t = T + t_offset + (long)z * cols * t_ld;
  for (int j = 0; j < BC; j += 4) {
    for (int i = 0; i < BR; i += 4) {
      __global const element* from = x + (long)(r0 + i) * ld + c0 + j;
      const element4 a = vload4(0, from), b = vload4(0, from + ld),
                     c = vload4(0, from + 2 * (long)ld), d = vload4(0, from + 3 * (long)ld);
      __global element* to = t + (long)(c0 + j) * t_ld + r0 + i;
      vstore4((element4)(a.s0, b.s0, c.s0, d.s0), 0, to);
      vstore4((element4)(a.s1, b.s1, c.s1, d.s1), 0, to + t_ld);
      vstore4((element4)(a.s2, b.s2, c.s2, d.s2), 0, to + 2 * (long)t_ld);
      vstore4((element4)(a.s3, b.s3, c.s3, d.s3), 0, to + 3 * (long)t_ld);
    }
  }
}

/* NDRange {max(rows, cols), 1, batch}: work-item i moves row i's columns
 * past the last whole block, and column i's rows past it (below the whole
 * blocks' columns only, so that the corner is moved once). */
__kernel void gemm_transpose_edge(const int rows, const int cols, __global const element* restrict X,
                                  const long offset, const int ld, const long stride,
                                  __global const long* restrict batch_offsets, const int per_batch,
                                  const int which, __global element* restrict T,
                                  const long t_offset, const int t_ld) {
  const int i = (int)get_global_id(0);
  const int whole_rows = rows / BR * BR, whole_cols = cols / BC * BC;
  const int z = (int)get_global_id(2);
  __global const element* x =
      X + (per_batch ? batch_offsets[3 * z + which] : offset + z * stride);
  __global element* t = T + t_offset + (long)z * cols * t_ld;
  if (i < rows) {
    for (int c = whole_cols; c < cols; ++c) t[(long)c * t_ld + i] = x[(long)i * ld + c];
  }
  if (i < whole_cols) {
    for (int r = whole_rows; r < rows; ++r) t[(long)i * t_ld + r] = x[(long)r * ld + i];
  }
}
