/* Local-memory tiled SGEMM: row-major C[M x N] = A[M x K] * B[K x N], or
 * C += A * B when `accumulate` is set. A and B start at element offsets
 * a_offset and b_offset and have rows of lda and ldb floats; C has rows of
 * ldc.
 *
 * A work-group of TILE x TILE work-items computes one TILE x TILE tile of C.
 * For every TILE-wide slice of K it loads a tile of A and a tile of B into
 * __local memory (rows padded to TILE + 1 against bank conflicts), adjacent
 * work-items reading adjacent addresses; then each work-item accumulates TILE
 * products from local memory. Loads outside the matrices write 0 and the
 * store is guarded, so any M, N, K >= 1 works; every work-item reaches every
 * barrier (no barrier sits in divergent control flow).
 *
 * Compile-time parameter: TILE (the work-group is TILE x TILE). */
#ifndef TILE
#error "matmul_tiled.cl: define TILE (e.g. -DTILE=16)"
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_tiled(const int M, const int N, const int K,
                  __global const float* restrict A,
                  __global const float* restrict B,
                  __global float* restrict C,
                  const long a_offset, const int lda,
                  const long b_offset, const int ldb,
                  const int ldc, const int accumulate) {
  __local float As[TILE][TILE + 1];
  __local float Bs[TILE][TILE + 1];
  const int tx = (int)get_local_id(0); /* column inside the tile */
  const int ty = (int)get_local_id(1); /* row inside the tile */
  const int col = (int)get_group_id(0) * TILE + tx;
  const int row = (int)get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  const int tiles = (K + TILE - 1) / TILE;
  for (int t = 0; t < tiles; ++t) {
    const int ka = t * TILE + tx; /* column of A this work-item loads */
    const int kb = t * TILE + ty; /* row of B this work-item loads */
    As[ty][tx] = (row < M && ka < K) ? A[a_offset + (long)row * lda + ka] : 0.0f;
    Bs[ty][tx] = (kb < K && col < N) ? B[b_offset + (long)kb * ldb + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      acc += As[ty][k] * Bs[k][tx];
    }
    /* The next iteration overwrites the tiles: wait until all have read. */
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    __global float* c = C + (long)row * ldc + col;
    *c = accumulate ? *c + acc : acc;
  }
}
