/* The second pass of a skinny product whose K was split over `splits`
 * work-groups: each wrote its partial C (M x N, rows of N floats) into W,
 * one after the other; this adds them in split order (0, 1, ...), so the
 * result does not depend on scheduling, and stores C = sum, or C += sum
 * when `accumulate` is set. One work-item per element of C. */
__kernel void matmul_splitk_sum(const int M, const int N, const int splits,
                                __global const float* restrict W,
                                __global float* restrict C, const int ldc,
                                const int accumulate) {
  const int col = (int)get_global_id(0);
  const int row = (int)get_global_id(1);
  if (row >= M || col >= N) return;
  const long plane = (long)M * N;
  float sum = 0.0f;
  for (int s = 0; s < splits; ++s) sum += W[s * plane + (long)row * N + col];
  __global float* c = C + (long)row * ldc + col;
  *c = accumulate ? *c + sum : sum;
}
