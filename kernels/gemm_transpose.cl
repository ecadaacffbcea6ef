/* op(A) = A^T and op(B) = B^T packed for the GEMM points that read A and
 * B from global memory (gemm_blocked.cl's with SA = 0, SB = 0, the
 * CPU-shaped ones): their loads of B run along N, which B^T does not hold
 * contiguously (B^T through the guarded path ran at a tenth of their speed
 * on both CPU runtimes), and A^T read in place cost 1.3 to 1.5 times NN's
 * time in single precision and 2 to 2.5 times in double (1024^3, PoCL and
 * Intel's CPU runtime, 2 Zen 4 cores, 2026-12-03). The pass:
 * T[t_offset + z * rows * cols + c * rows + r] = X[z][r][c] for a rows x
 * cols row-major X with leading dimension ld, product z of the batch at
 * offset + z * stride, or, where `per_batch`, at batch_offsets[3z + which]
 * (the GEMM's three offsets per product: 0 A's, 1 B's); T packed, cols x
 * rows per product. Elements are
 * copied as bits (BITS 16, 32, 64), whatever their type. A work-group of
 * TILE x TILE work-items moves one TILE x TILE block through local memory:
 * it reads the block's rows of X along dimension 0 and writes its rows of
 * T along dimension 0, both contiguous (one work-item per element, its
 * reads a row of X apart, took 2.3 to 5 ms for 1024 x 1024 floats, this
 * 1.1 to 2.2 ms, on PoCL and Intel's CPU runtime, 2 Zen 4 cores,
 * 2026-12-02). The host rounds the NDRange up to whole blocks. */
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
#define TILE 16

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void gemm_transpose(const int rows, const int cols, __global const element* restrict X,
                    const long offset, const int ld, const long stride,
                    __global const long* restrict batch_offsets, const int per_batch,
                    const int which, __global element* restrict T, const long t_offset) {
  /* One column of padding: the column reads below fall in different banks. */
  __local element block[TILE][TILE + 1];
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
  const int r0 = (int)get_group_id(1) * TILE, c0 = (int)get_group_id(0) * TILE;
  const int z = (int)get_global_id(2);
  const long base = per_batch ? batch_offsets[3 * z + which] : offset + z * stride;
  /* X's row r0 + ly, column c0 + lx. */
  if (r0 + ly < rows && c0 + lx < cols) block[ly][lx] = X[base + (long)(r0 + ly) * ld + c0 + lx];
  barrier(CLK_LOCAL_MEM_FENCE);
  /* T's row c0 + ly (X's column), column r0 + lx (X's row). */
  if (c0 + ly < cols && r0 + lx < rows) {
    T[t_offset + (long)z * rows * cols + (long)(c0 + ly) * rows + r0 + lx] = block[lx][ly];
  }
}
