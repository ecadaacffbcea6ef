/* GEMM for batches of small products, one column of C a work-item: C =
 * alpha * op(A) * op(B) + beta * C with gemm_blocked.cl's arguments, in
 * its order and with its meaning (read that file's comment: row-major,
 * op(X) = X or X^T at run time, alpha and beta with BLAS's reading rules,
 * offsets, a batch over dimension 2 of the NDRange with strides or
 * per-product offsets and scalars, `k_begin` / `accumulate` for a K split
 * into launches), so that the entry points launch either kernel alike.
 *
 * The layout is the prototype's that brought 10,000 products of 32^3 on
 * the H200 from gemm_blocked's 41.2-41.8 us to 36.3-37.7, where only
 * streaming A, B and C takes 31.7 (docs/perf/h200-gemm-batch-lean/lean.cl,
 * lane_var, 2026-12-04): a work-group of NDIMC x MDIMC work-items computes
 * an MWG x NWG tile of C, NDIMC = NWG (a work-item a column, a warp's lanes
 * along a row of C), each work-item MWG / MDIMC rows of its column. A K
 * slice of A is staged row by row (A(row, k) beside A(row, k + 1), read
 * back as vectors along k that every lane of a warp shares), B's slice by
 * column into registers (the work-item's column, KWG values). gemm_blocked
 * stages A k-major; in this layout that took 69.6 us. Every load of a
 * slice is in flight before the first store to local memory (loaded and
 * stored an element at a time, a first version took 73 us).
 *
 * Whole slices of a tile inside M and N, both operands' rows aligned to
 * the vector (4 floats, 2 doubles; 1 half), are loaded as vectors along
 * the dimension contiguous in memory, whatever op(X) is (VEC = 1; stores
 * into local memory with strides known here: left to run time, LLVM kept
 * each store's address in a register of its own, and ptxas gave the
 * kernel 72 to 255 registers; 48 now for 4 x 32 work-items). Every other
 * slice is loaded an element at a time along that dimension, CH elements
 * before they are stored, a load outside the matrix reading zero.
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
#define realLV float
#define LOADLV(p) vload_half(0, p)
#define RV 4
#define realRV float4
#elif PRECISION == 32
#define storage float
#define real float
#define LOAD1(i, p) ((p)[i])
#define STORE1(v, i, p) ((p)[i] = (v))
#define LV 4
#define realLV float4
#define LOADLV(p) (*(__global const float4*)(p))
#define RV 4
#define realRV float4
#elif PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#define LOAD1(i, p) ((p)[i])
#define STORE1(v, i, p) ((p)[i] = (v))
#define LV 2
#define realLV double2
#define LOADLV(p) (*(__global const double2*)(p))
#define RV 2
#define realRV double2
#else
#error "gemm_lanes.cl: PRECISION is 16, 32 or 64"
#endif

#if KWG % RV || (VEC && (KWG % LV || MWG % LV || NWG % LV || WGS % (KWG / LV) || \
                         WGS % (MWG / LV) || WGS % (NWG / LV) || (MWG * KWG / LV) % WGS || \
                         (KWG * NWG / LV) % WGS))
#error "gemm_lanes.cl: K slices of whole vectors, and whole vectors of each slice per work-item"
#endif

/* A's slice, a row of KWG reals (and a vector of padding) per row of the
 * tile; B's, KWG rows of NWG reals, one more for stores down a column. */
#define A_PITCH (KWG / RV + 1)
#define B_PITCH (NWG + 1)
#define A_ROW (A_PITCH * RV)
#define A_ITEMS (MWG * KWG / WGS)
#define B_ITEMS (KWG * NWG / WGS)
/* The elements of a slice loaded before any is stored, off the vector path. */
#define CH 4
#if A_ITEMS % CH || B_ITEMS % CH
#error "gemm_lanes.cl: each work-item's elements of a slice come in groups of CH"
#endif

/* This work-item's column of the staged slice of B, then its rows of A
 * against it. */
#if RV == 4
#define MAD_RV(av, q, acc)                                                          \
  acc = mad(av.x, bk[4 * (q)], acc), acc = mad(av.y, bk[4 * (q) + 1], acc),         \
  acc = mad(av.z, bk[4 * (q) + 2], acc), acc = mad(av.w, bk[4 * (q) + 3], acc)
#else
#define MAD_RV(av, q, acc) \
  acc = mad(av.x, bk[2 * (q)], acc), acc = mad(av.y, bk[2 * (q) + 1], acc)
#endif
#define MULTIPLY_SLICE()                                          \
  do {                                                            \
    real bk[KWG];                                                 \
    _Pragma("unroll") for (int k = 0; k < KWG; ++k) bk[k] = Bs[k][j]; \
    _Pragma("unroll") for (int q = 0; q < KWG / RV; ++q) {        \
      _Pragma("unroll") for (int r = 0; r < MWI; ++r) {           \
        const realRV av = As[w * MWI + r][q];                     \
        MAD_RV(av, q, acc[r]);                                    \
      }                                                           \
    }                                                             \
  } while (0)

/* The vectors v[0 .. items) into local memory at p, vector t's element e
 * at t * st + e * se. */
#define STORE_SLICE(p, v, items, st, se)                                       \
  _Pragma("unroll") for (int t = 0; t < (items); ++t) {                        \
    _Pragma("unroll") for (int e = 0; e < LV; ++e)(p)[t * (st) + e * (se)] =   \
        ((real*)&(v)[t])[e];                                                   \
  }

/* An operand's slice an element at a time, `items` a work-item, CH loaded
 * before they are stored: element i of the slice at src + out * ld + in
 * (in = i % len along the dimension contiguous in memory, out = i / len),
 * zero where in >= in_end or out >= out_end, stored at dst[in * pitch +
 * out] where `trans` (the slice's rows run across memory's), else at
 * dst[out * pitch + in]. */
#define STAGE_ELEMENTS(src, ld, len, in_end, out_end, dst, trans, pitch, items)            \
  _Pragma("unroll 1") for (int t0 = 0; t0 < (items); t0 += CH) {                         \
    real v[CH];                                                                           \
    _Pragma("unroll") for (int c = 0; c < CH; ++c) {                                      \
      const int i = tid + (t0 + c) * WGS, in = i % (len), out = i / (len);                \
      v[c] = in < (in_end) && out < (out_end) ? LOAD1(0, (src) + (long)out * (ld) + in)   \
                                              : (real)0;                                  \
    }                                                                                     \
    _Pragma("unroll") for (int c = 0; c < CH; ++c) {                                      \
      const int i = tid + (t0 + c) * WGS, in = i % (len), out = i / (len);                \
      (dst)[(trans) ? in * (pitch) + out : out * (pitch) + in] = v[c];                    \
    }                                                                                     \
  }

#include "gemm_product.h"

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_lanes(GEMM_ARGUMENTS) {
  __local realRV As[MWG][A_PITCH];
  __local real Bs[KWG][B_PITCH];
  __local real* const as = (__local real*)As;
  __local real* const bs = (__local real*)Bs;
  const int j = (int)get_local_id(0), w = (int)get_local_id(1), tid = w * NDIMC + j;
  const int row0 = (int)get_group_id(1) * MWG, col0 = (int)get_group_id(0) * NWG;
  const int z = (int)get_group_id(2);
  GEMM_PRODUCT(z);
  const long a_at = a_offset + (long)k_begin * a_ks + (long)row0 * a_rs;
  const long b_at = b_offset + (long)k_begin * b_rs + (long)col0 * b_cs;
  __global const storage* const a = A + a_at;
  __global const storage* const b = B + b_at;
  real acc[MWI];
#pragma unroll
  for (int r = 0; r < MWI; ++r) acc[r] = (real)0;
  int k0 = 0;
#if VEC
  /* Whole slices, LV elements a load, where both tiles lie inside the
   * matrices and both operands' rows are aligned to LV elements: a slice's
   * vectors taken along the dimension contiguous in memory ("in": k of A
   * and of B^T, a row of A^T, a column of B), a_len of them across it, the
   * work-item's next one a_os further along the other dimension ("out"),
   * a_pt further in memory; each element stored into the staged slice at
   * s0 + t * st + e * se. */
  if (row0 + MWG <= M && col0 + NWG <= N && a_at % LV == 0 && lda % LV == 0 && b_at % LV == 0 &&
      ldb % LV == 0) {
    const int a_len = (a_trans ? MWG : KWG) / LV, a_os = WGS / a_len;
    const int a_iv = tid % a_len, a_o = tid / a_len;
    const int a_s0 = a_trans ? a_iv * LV * A_ROW + a_o : a_o * A_ROW + a_iv * LV;
    const long a_pt = (long)a_os * lda, a_slice = a_trans ? (long)KWG * lda : KWG;
    __global const storage* pa = a + (long)a_o * lda + a_iv * LV;
    const int b_len = (b_trans ? KWG : NWG) / LV, b_os = WGS / b_len;
    const int b_iv = tid % b_len, b_o = tid / b_len;
    const int b_s0 = b_trans ? b_iv * LV * B_PITCH + b_o : b_o * B_PITCH + b_iv * LV;
    const long b_pt = (long)b_os * ldb, b_slice = b_trans ? KWG : (long)KWG * ldb;
    __global const storage* pb = b + (long)b_o * ldb + b_iv * LV;
    for (; k0 + KWG <= K; k0 += KWG) {
      realLV va[A_ITEMS / LV], vb[B_ITEMS / LV];
#pragma unroll
      for (int t = 0; t < A_ITEMS / LV; ++t) va[t] = LOADLV(pa + t * a_pt);
#pragma unroll
      for (int t = 0; t < B_ITEMS / LV; ++t) vb[t] = LOADLV(pb + t * b_pt);
      if (k0 > 0) barrier(CLK_LOCAL_MEM_FENCE); /* the last slice is read */
      /* (Strides known here: with them left to run time, LLVM kept every
       * store's address in a register of its own.) */
      if (a_trans) {
        STORE_SLICE(as + a_s0, va, A_ITEMS / LV, WGS / (MWG / LV), A_ROW);
      } else {
        STORE_SLICE(as + a_s0, va, A_ITEMS / LV, WGS / (KWG / LV) * A_ROW, 1);
      }
      if (b_trans) {
        STORE_SLICE(bs + b_s0, vb, B_ITEMS / LV, WGS / (KWG / LV), B_PITCH);
      } else {
        STORE_SLICE(bs + b_s0, vb, B_ITEMS / LV, WGS / (NWG / LV) * B_PITCH, 1);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      MULTIPLY_SLICE();
      pa += a_slice;
      pb += b_slice;
    }
  }
#endif
  /* The other slices an element at a time (STAGE_ELEMENTS), zeros outside
   * the matrices. */
  for (; k0 < K; k0 += KWG) {
    __global const storage* const sa = a + (a_trans ? (long)k0 * lda : k0);
    __global const storage* const sb = b + (b_trans ? k0 : (long)k0 * ldb);
    const int a_len = a_trans ? MWG : KWG, b_len = b_trans ? KWG : NWG;
    const int a_in_end = a_trans ? M - row0 : K - k0, a_out_end = a_trans ? K - k0 : M - row0;
    const int b_in_end = b_trans ? K - k0 : N - col0, b_out_end = b_trans ? N - col0 : K - k0;
    if (k0 > 0) barrier(CLK_LOCAL_MEM_FENCE); /* the last slice is read */
    STAGE_ELEMENTS(sa, lda, a_len, a_in_end, a_out_end, as, a_trans, A_ROW, A_ITEMS);
    STAGE_ELEMENTS(sb, ldb, b_len, b_in_end, b_out_end, bs, b_trans, B_PITCH, B_ITEMS);
    barrier(CLK_LOCAL_MEM_FENCE);
    MULTIPLY_SLICE();
  }

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
