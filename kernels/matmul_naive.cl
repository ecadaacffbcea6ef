/* Naive global-memory SGEMM, the baseline: row-major C[M x N] = A[M x K] *
 * B[K x N], or C += A * B when `accumulate` is set. A and B start at element
 * offsets a_offset and b_offset and have rows of lda and ldb floats; C has
 * rows of ldc. One work-item per element of C; the global size may be rounded
 * up past the matrix, so the store is guarded. No compile-time parameters. */
__kernel void matmul_naive(const int M, const int N, const int K,
                           __global const float* restrict A,
                           __global const float* restrict B,
                           __global float* restrict C,
                           const long a_offset, const int lda,
                           const long b_offset, const int ldb,
                           const int ldc, const int accumulate) {
  const int col = (int)get_global_id(0);
  const int row = (int)get_global_id(1);
  if (row >= M || col >= N) return;
  __global const float* a = A + a_offset + (long)row * lda;
  __global const float* b = B + b_offset + col;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    acc += a[k] * b[(long)k * ldb];
  }
  __global float* c = C + (long)row * ldc + col;
  *c = accumulate ? *c + acc : acc;
}
