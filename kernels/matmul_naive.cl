/* Naive global-memory SGEMM, the baseline: row-major C[M x N] = A[M x K] * B[K x N].
 * One work-item per element of C; the global size may be rounded up past the
 * matrix, so the store is guarded. No compile-time parameters. */
__kernel void matmul_naive(const int M, const int N, const int K,
                           __global const float* restrict A,
                           __global const float* restrict B,
                           __global float* restrict C) {
  const int col = (int)get_global_id(0);
  const int row = (int)get_global_id(1);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  }
  C[(size_t)row * N + col] = acc;
}
