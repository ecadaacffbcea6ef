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
 * moves the whole 16 x 16 blocks, a work-item each: its rows read as
 * vectors into private memory, its columns written as vectors, no local
 * memory, no barrier and no branch;
 * gemm_transpose_edge, launched after it where rows or cols is not a
 * multiple of 16, the rest element by element. The host's NDRange leaves
 * the work-group to the driver. For 1024 x 1024 floats on 2 Zen 4 cores
 * (2026-12-03) the block pass took 0.2 ms on Intel's CPU runtime and
 * 0.4-0.7 on PoCL; with the edge blocks in the same kernel behind a
 * branch, 0.7 and 0.5-0.9 (Intel's vectorizer took both paths); moving a
 * block through local memory (16 x 16 work-groups, one work-item per
 * element), 1.6 and 1.9-2.7: on a CPU the work-items of a group are a
 * loop, and the block's vectors are what its cores move well. (Only the
 * CPU-shaped points take a pass.) */
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
#define B 16
#define VLOAD_(n) vload##n
#define VLOAD(n) VLOAD_(n)
#define VSTORE_(n) vstore##n
#define VSTORE(n) VSTORE_(n)

/* NDRange {cols / B, rows / B, batch}: block (r0, c0) of product z. */
__kernel void gemm_transpose(const int rows, const int cols, __global const element* restrict X,
                             const long offset, const int ld, const long stride,
                             __global const long* restrict batch_offsets, const int per_batch,
                             const int which, __global element* restrict T,
                             const long t_offset, const int t_ld) {
  const int r0 = (int)get_global_id(1) * B, c0 = (int)get_global_id(0) * B;
  const int z = (int)get_global_id(2);
  __global const element* x =
      X + (per_batch ? batch_offsets[3 * z + which] : offset + z * stride);
  __global element* t = T + t_offset + (long)z * cols * t_ld;
  element block[B][B];
  for (int i = 0; i < B; ++i) VSTORE(B)(VLOAD(B)(0, x + (long)(r0 + i) * ld + c0), 0, block[i]);
  for (int j = 0; j < B; ++j) {
    element column[B];
    for (int i = 0; i < B; ++i) column[i] = block[i][j];
    VSTORE(B)(VLOAD(B)(0, column), 0, t + (long)(c0 + j) * t_ld + r0);
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
  const int whole_rows = rows / B * B, whole_cols = cols / B * B;
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
