/* gemm_blocked.cl's arguments (read its comment), which gemm_naive.cl,
 * gemm_lanes.cl and gemm_rows.cl take too, so that the entry points launch
 * any of them. (gemm_blocked.cl spells them out: a change to its text
 * would void its shipped source-tier entries.) */
#define GEMM_ARGUMENTS                                                                  \
  const int M, const int N, int K, const int k_begin, const int accumulate,             \
      const real alpha_arg, const real beta_arg, __global const storage* restrict A,    \
      const long a_offset_arg, const int lda, const int a_trans, const long a_stride,   \
      __global const storage* restrict B, const long b_offset_arg, const int ldb,       \
      const int b_trans, const long b_stride, __global storage* restrict C,             \
      const long c_offset_arg, const int ldc, const long c_stride,                      \
      __global const long* restrict batch_offsets,                                      \
      __global const real* restrict batch_scalars, const int per_batch

/* The product of the batch that a work-group of these kernels computes, from
 * those arguments: product z's offsets a_offset, b_offset, c_offset and
 * its alpha and beta (per_batch: from batch_offsets and batch_scalars; else
 * the arguments, z strides further), beta 1 where `accumulate`, K 0 where
 * alpha is 0 (A and B are then not read), and the steps a_rs, a_ks, b_rs,
 * b_cs: op(A)(row, k) at row * a_rs + k * a_ks, op(B)(k, col) at k * b_rs +
 * col * b_cs. (gemm_blocked.cl keeps its own copy of these lines: a change
 * to its text would void its shipped source-tier entries until they are
 * measured again.) */
#define GEMM_PRODUCT(z)                                        \
  long a_offset, b_offset, c_offset;                           \
  real alpha, beta;                                            \
  if (per_batch) {                                             \
    a_offset = batch_offsets[3 * (z)];                         \
    b_offset = batch_offsets[3 * (z) + 1];                     \
    c_offset = batch_offsets[3 * (z) + 2];                     \
    alpha = batch_scalars[2 * (z)];                            \
    beta = batch_scalars[2 * (z) + 1];                         \
  } else {                                                     \
    a_offset = a_offset_arg + (z) * a_stride;                  \
    b_offset = b_offset_arg + (z) * b_stride;                  \
    c_offset = c_offset_arg + (z) * c_stride;                  \
    alpha = alpha_arg;                                         \
    beta = beta_arg;                                           \
  }                                                            \
  if (accumulate) beta = (real)1;                              \
  if (alpha == (real)0) K = 0;                                 \
  const long a_rs = a_trans ? 1 : lda, a_ks = a_trans ? lda : 1; \
  const long b_rs = b_trans ? 1 : ldb, b_cs = b_trans ? ldb : 1
