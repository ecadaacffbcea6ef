/* op(A) = A^T and op(B) = B^T packed for the GEMM points that read the
 * operand from global memory (gemm_blocked.cl's with SA = 0 or SB = 0, the
 * CPU-shaped ones): their loads run along K for A and along N for B, which
 * A^T and B^T do not hold contiguously; B^T through the guarded path ran at
 * a tenth of their speed on both CPU runtimes. One work-item per element:
 * T[z][c][r] = X[z][r][c] for a rows x cols row-major X with leading
 * dimension ld, product z of the batch at offset + z * stride, or, where
 * `per_batch`, at batch_offsets[3z + which]; T packed, cols x rows per
 * product. Elements are copied as bits (BITS 16, 32, 64), whatever their
 * type. Dimension 0 runs along T's rows, so that the stores are
 * contiguous (on PoCL and Intel's runtime that ran faster than contiguous
 * loads). */
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

__kernel void gemm_transpose(const int rows, const int cols, __global const element* restrict X,
                             const long offset, const int ld, const long stride,
                             __global const long* restrict batch_offsets, const int which,
                             const int per_batch, __global element* restrict T) {
  const int r = (int)get_global_id(0), c = (int)get_global_id(1), z = (int)get_global_id(2);
  if (r >= rows || c >= cols) return;
  const long base = per_batch ? batch_offsets[3 * z + which] : offset + z * stride;
  T[(long)z * rows * cols + (long)c * rows + r] = X[base + (long)r * ld + c];
}
