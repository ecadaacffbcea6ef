/* GEMM for batches of small products, one column of C a work-item: C =
 * alpha * op(A) * op(B) + beta * C with gemm_blocked.cl's arguments, in
 * its order and with its meaning (read that file's comment: row-major,
 * op(X) = X or X^T at run time, alpha and beta with BLAS's reading rules,
 * offsets, a batch over dimension 2 of the NDRange with strides or
 * per-product offsets and scalars, `k_begin` / `accumulate` for a K split
 * into launches), so that the entry points launch either kernel alike.
 *
 * The layout is the one that brought 10,000 products of 32^3 on the H200
 * from gemm_blocked's 41.2-41.8 us to 36.3-37.7, where only streaming A, B
 * and C takes 31.7 (docs/perf/h200-gemm-batch-lean/, 2026-12-04): a
 * work-group of NDIMC x MDIMC work-items computes an MWG x NWG tile of C,
 * NDIMC = NWG (a work-item a column, a warp's lanes along a row of C), each
 * work-item MWG / MDIMC rows of its column. A K slice of A is staged
 * row by row (A(row, k) beside A(row, k + 1), read back as vectors of
 * along k that every lane of a warp shares), B's slice by column into
 * registers (the work-item's column, KWG values). gemm_blocked stages A
 * k-major; in this layout that took 69.6 us. Every load of a slice is in
 * flight before the first store to local memory (loaded and stored an
 * element at a time, the first version took 73 us).
 *
 * Each work-item's elements of a slice lie along the dimension contiguous
 * in memory, so that a warp's loads are coalesced whatever op(X) is; a
 * load outside the matrix reads its nearest element and keeps zero. With
 * VEC = 1, a product whose operands are not transposed, whose tile lies
 * inside M and N and whose rows are aligned to the vector (offsets and
 * leading dimensions multiples of 4 floats or 2 doubles) loads its whole
 * slices as vectors; the rest as above.
 *
 * Compile-time parameters: PRECISION (16: stored half, computed in float;
 * 32; 64), MWG, NWG, KWG, MDIMC, NDIMC, VEC. */
#if !defined(PRECISION) || !defined(MWG) || !defined(NWG) || !defined(KWG) || \
    !defined(MDIMC) || !defined(NDIMC) || !defined(VEC)
#error "gemm_lanes.cl: define PRECISION MWG NWG KWG MDIMC NDIMC VEC"
#endif

#define WGS (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)

#if NWG != NDIMC || MWG % MDIMC
#error "gemm_lanes.cl: a work-item a column (NWG = NDIMC), MWG a multiple of MDIMC"
#endif
#if WGS % MWG || WGS % NWG || WGS % KWG
#error "gemm_lanes.cl: MWG, NWG and KWG each divide the work-group's items"
#endif

/* storage: the element in memory; real: what is computed with; LV: the
 * vector a whole slice is loaded with (1: none), RV: the vector of reals
 * that staged A is read back as. */
#if PRECISION == 16
#define storage half
#define real float
#define LOAD1(i, p) vload_half(i, p)
#define STORE1(v, i, p) vstore_half(v, i, p)
#define LV 1
#define RV 4
#define realRV float4
#elif PRECISION == 32
#define storage float
#define real float
#define LOAD1(i, p) ((p)[i])
#define STORE1(v, i, p) ((p)[i] = (v))
#define LV 4
#define storageLV float4
#define RV 4
#define realRV float4
#elif PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#define LOAD1(i, p) ((p)[i])
#define STORE1(v, i, p) ((p)[i] = (v))
#define LV 2
#define storageLV double2
#define RV 2
#define realRV double2
#else
#error "gemm_lanes.cl: PRECISION is 16, 32 or 64"
#endif

#if KWG % RV || (VEC && (LV == 1 || WGS % (KWG / LV) || WGS % (NWG / LV)))
#error "gemm_lanes.cl: K slices of whole vectors; VEC where a vector is, its slices' rows divide the work-group"
#endif

/* A's slice, a row of KWG reals (and a vector of padding) per row of the
 * tile; B's, KWG rows of NWG reals, one more for stores down a column. */
#define A_PITCH (KWG / RV + 1)
#define B_PITCH (NWG + 1)
#define A_ITEMS (MWG * KWG / WGS)
#define B_ITEMS (KWG * NWG / WGS)

/* This work-item's column of the staged slice of B, then its rows of A
 * against it. */
#if RV == 4
#define MAD_RV(av, q, acc)                                                          \
  acc = mad(av.x, bk(4 * (q)), acc), acc = mad(av.y, bk(4 * (q) + 1), acc),         \
  acc = mad(av.z, bk(4 * (q) + 2), acc), acc = mad(av.w, bk(4 * (q) + 3), acc)
#else
#define MAD_RV(av, q, acc) \
  acc = mad(av.x, bk(2 * (q)), acc), acc = mad(av.y, bk(2 * (q) + 1), acc)
#endif
#if X_BLDS
#define BK_DECL
#define bk(k) Bs[k][j]
#else
#define BK_DECL real bkr[KWG]; _Pragma("unroll") for (int k = 0; k < KWG; ++k) bkr[k] = Bs[k][j];
#define bk(k) bkr[k]
#endif
#define MULTIPLY_SLICE()                                          \
  do {                                                            \
    BK_DECL                                                       \
    _Pragma("unroll") for (int q = 0; q < KWG / RV; ++q) {        \
      _Pragma("unroll") for (int r = 0; r < MWI; ++r) {           \
        const realRV av = As[w * MWI + r][q];                     \
        MAD_RV(av, q, acc[r]);                                    \
      }                                                           \
    }                                                             \
  } while (0)

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_lanes(const int M, const int N, int K, const int k_begin, const int accumulate,
                const real alpha_arg, const real beta_arg,
                __global const storage* restrict A, const long a_offset_arg, const int lda,
                const int a_trans, const long a_stride,
                __global const storage* restrict B, const long b_offset_arg, const int ldb,
                const int b_trans, const long b_stride,
                __global storage* restrict C, const long c_offset_arg, const int ldc,
                const long c_stride,
                __global const long* restrict batch_offsets,
                __global const real* restrict batch_scalars, const int per_batch) {
  __local realRV As[MWG][A_PITCH];
  __local real Bs[KWG][B_PITCH];
  __local real* const as = (__local real*)As;
  __local real* const bs = (__local real*)Bs;
  const int j = (int)get_local_id(0), w = (int)get_local_id(1), tid = w * NDIMC + j;
  const int row0 = (int)get_group_id(1) * MWG, col0 = (int)get_group_id(0) * NWG;
  const int z = (int)get_group_id(2);
  long a_offset, b_offset, c_offset;
  real alpha, beta;
  if (per_batch) {
    a_offset = batch_offsets[3 * z];
    b_offset = batch_offsets[3 * z + 1];
    c_offset = batch_offsets[3 * z + 2];
    alpha = batch_scalars[2 * z];
    beta = batch_scalars[2 * z + 1];
  } else {
    a_offset = a_offset_arg + z * a_stride;
    b_offset = b_offset_arg + z * b_stride;
    c_offset = c_offset_arg + z * c_stride;
    alpha = alpha_arg;
    beta = beta_arg;
  }
  if (accumulate) beta = (real)1;
  if (alpha == (real)0) K = 0;
  /* op(A)(row, k) at row * a_rs + k * a_ks, op(B)(k, col) at k * b_rs +
   * col * b_cs, from this launch's part of K on. */
  const long a_rs = a_trans ? 1 : lda, a_ks = a_trans ? lda : 1;
  const long b_rs = b_trans ? 1 : ldb, b_cs = b_trans ? ldb : 1;
  __global const storage* const a = A + a_offset + (long)k_begin * a_ks + (long)row0 * a_rs;
  __global const storage* const b = B + b_offset + (long)k_begin * b_rs + (long)col0 * b_cs;
  /* A slice's elements, WGS at a time along the dimension contiguous in
   * memory ("in": k for A, a column for B, and a row for A^T, k for B^T),
   * the next WGS / length of it further along the other ("out"): item t
   * of this work-item at p + t * step in global memory, at s + t * s_step
   * in local memory, inside the matrix where in < in_end and out + t * os
   * < out_end. */
  const int a_len = a_trans ? MWG : KWG, a_os = WGS / a_len;
  const int a_in = tid % a_len, a_out = tid / a_len;
  const long a_slice = a_trans ? (long)KWG * lda : KWG;
  const int a_s = a_trans ? a_in * (A_PITCH * RV) + a_out : a_out * (A_PITCH * RV) + a_in;
  const int a_s_step = a_trans ? a_os : a_os * (A_PITCH * RV);
  const int b_len = b_trans ? KWG : NWG, b_os = WGS / b_len;
  const int b_in = tid % b_len, b_out = tid / b_len;
  const long b_slice = b_trans ? KWG : (long)KWG * ldb;
  const int b_s = b_trans ? b_in * B_PITCH + b_out : b_out * B_PITCH + b_in;
  const int b_s_step = b_trans ? b_os : b_os * B_PITCH;
  real acc[MWI];
#pragma unroll
  for (int r = 0; r < MWI; ++r) acc[r] = (real)0;
  int k0 = 0;
#if VEC
  /* Whole slices as vectors, where both operands allow. */
  if (!a_trans && !b_trans && (a_offset + k_begin) % LV == 0 && lda % LV == 0 &&
      (b_offset + col0) % LV == 0 && ldb % LV == 0 && row0 + MWG <= M && col0 + NWG <= N) {
    __global const storageLV* va_p =
        (__global const storageLV*)(a + (long)(tid / (KWG / LV)) * lda) + tid % (KWG / LV);
    __global const storageLV* vb_p =
        (__global const storageLV*)(b + (long)(tid / (NWG / LV)) * ldb) + tid % (NWG / LV);
    const long va_step = (long)(WGS / (KWG / LV)) * lda / LV;
    const long vb_step = (long)(WGS / (NWG / LV)) * ldb / LV;
#if X_ONE
    {
#else
    for (; k0 + KWG <= K; k0 += KWG) {
#endif
      storageLV va[A_ITEMS / LV], vb[B_ITEMS / LV];
#pragma unroll
      for (int t = 0; t < A_ITEMS / LV; ++t) va[t] = va_p[t * va_step];
#pragma unroll
      for (int t = 0; t < B_ITEMS / LV; ++t) vb[t] = vb_p[t * vb_step];
      if (k0 > 0) barrier(CLK_LOCAL_MEM_FENCE); /* the last slice is read */
#pragma unroll
      for (int t = 0; t < A_ITEMS / LV; ++t) {
        const int q = tid + t * WGS;
        As[q / (KWG / LV)][q % (KWG / LV)] = va[t];
      }
#pragma unroll
      for (int t = 0; t < B_ITEMS / LV; ++t) {
        const int q = tid + t * WGS, k = q / (NWG / LV), c = q % (NWG / LV) * LV;
#if LV == 4
        Bs[k][c] = vb[t].x, Bs[k][c + 1] = vb[t].y, Bs[k][c + 2] = vb[t].z, Bs[k][c + 3] = vb[t].w;
#else
        Bs[k][c] = vb[t].x, Bs[k][c + 1] = vb[t].y;
#endif
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      MULTIPLY_SLICE();
      va_p += KWG / LV;
      vb_p += (long)KWG * ldb / LV;
#if X_ONE
      k0 = K;
#endif
    }
  }
#endif
  /* The other slices an element at a time, zeros outside the matrices. */
  __global const storage* pa0 = a + (a_trans ? (long)k0 * lda : k0);
  __global const storage* pb0 = b + (b_trans ? k0 : (long)k0 * ldb);
  for (; k0 < K; k0 += KWG) {
    const int a_in_end = a_trans ? M - row0 : K - k0, a_out_end = a_trans ? K - k0 : M - row0;
    const int b_in_end = b_trans ? K - k0 : N - col0, b_out_end = b_trans ? N - col0 : K - k0;
    real va[A_ITEMS], vb[B_ITEMS];
    {
      const int ai = min(a_in, a_in_end - 1);
#pragma unroll
      for (int t = 0; t < A_ITEMS; ++t) {
        const int o = min(a_out + t * a_os, a_out_end - 1);
        const real x = LOAD1(0, pa0 + (long)o * lda + ai);
        va[t] = a_in < a_in_end && a_out + t * a_os < a_out_end ? x : (real)0;
      }
      const int bi = min(b_in, b_in_end - 1);
#pragma unroll
      for (int t = 0; t < B_ITEMS; ++t) {
        const int o = min(b_out + t * b_os, b_out_end - 1);
        const real x = LOAD1(0, pb0 + (long)o * ldb + bi);
        vb[t] = b_in < b_in_end && b_out + t * b_os < b_out_end ? x : (real)0;
      }
    }
    if (k0 > 0) barrier(CLK_LOCAL_MEM_FENCE); /* the last slice is read */
#pragma unroll
    for (int t = 0; t < A_ITEMS; ++t) as[a_s + t * a_s_step] = va[t];
#pragma unroll
    for (int t = 0; t < B_ITEMS; ++t) bs[b_s + t * b_s_step] = vb[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    MULTIPLY_SLICE();
    pa0 += a_slice;
    pb0 += b_slice;
  }

#if X_EPI
  {
    __global storage* const c = C + c_offset + (long)(col0 + j) + (long)(row0 + w * MWI) * ldc;
#pragma unroll
    for (int r = 0; r < MWI; ++r) c[r * ldc] = alpha * acc[r];
    return;
  }
#endif
  const int col = col0 + j;
  if (col >= N) return;
  __global storage* const c = C + c_offset + (long)col;
#pragma unroll
  for (int r = 0; r < MWI; ++r) {
    const int row = row0 + w * MWI + r;
    if (row < M) {
      __global storage* const cp = c + (long)row * ldc;
      real out = K == 0 ? (real)0 : alpha * acc[r];
      if (beta != (real)0) out += beta * LOAD1(0, cp);
      STORE1(out, 0, cp);
    }
  }
}
