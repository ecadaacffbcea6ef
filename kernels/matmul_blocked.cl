/* Register-blocked SGEMM: row-major C[M x N] = A[M x K] * B[K x N], or
 * C += A * B when `accumulate` is set (the host splits long K into chunks).
 *
 * Where M x N gives too few work-groups for the device, the host splits K
 * over dimension 2 of the NDRange with matmul_blocked_split: part z of Z
 * takes the KWG slices from z * k_part on and writes its partial product
 * into plane z of its workspace W, and matmul_splitk_sum adds the planes in
 * order (deterministic).
 *
 * A work-group of MDIMC x NDIMC work-items (NDIMC along dimension 0, the
 * columns of C) computes an MWG x NWG tile of C. Each work-item keeps an
 * MWI x NWI block of it in registers: MWI = MWG / MDIMC contiguous rows
 * (ty*MWI + i) and NWI = NWG / NDIMC columns as NVW = NWI / VWN vectors of
 * VWN floats, strided so that neighbouring work-items own neighbouring
 * vectors (vector j of work-item tx starts at column (j*NDIMC + tx)*VWN):
 * their reads of B and writes of C are contiguous.
 *
 * K is walked in slices of KWG, unrolled by KWI. A is staged through __local
 * memory when SA = 1 (loaded as VWM-float vectors along K and stored
 * transposed, k-major), else read straight from global memory; B likewise
 * with SB (loaded as VWN-float vectors along N). GPU-shaped variants stage
 * both; CPU-shaped ones stage nothing and keep a wide block per work-item.
 *
 * Edges: where M >= MWG the last row of tiles is moved up to end at row M,
 * and where N >= NWG the last column of tiles left to end at column N; a
 * moved tile computes the rows and columns it shares with its neighbour
 * again and stores only its own. So every tile is whole and its fast path
 * needs no guard and no clamp. A slice whose K lies inside A and B takes
 * the fast path for A where the tiles are whole in rows, for B where they
 * are whole in columns: vector loads, aligned ones where the leading
 * dimension and offset (and, for B, the tile's first column) are multiples
 * of the vector width, else vloadN, chosen once for the whole slice. Any
 * other slice, and every slice where M < MWG or N < NWG, takes the guarded
 * path (scalar loads, zeros outside the matrices). Stores are vectors
 * where the tile is whole, in place and C's rows aligned, else guarded
 * scalars. Every condition is uniform over the work-group, so every
 * work-item reaches every barrier. Any M, N, K >= 1 is correct.
 *
 * PF = 1 fetches the next slice into registers before computing this one.
 * DB = 1 (with PF = 1 and a staged operand) double-buffers the staged
 * slices: the next slice, fetched before this one's multiply-adds, is
 * stashed into the other half of __local memory after them, so a slice
 * takes one barrier instead of two (twice the local memory).
 *
 * VWA = 4 (with SA) reads a work-item's MWI values of the staged A slice
 * as float4s instead of one float at a time: a quarter of the loads from
 * __local memory for A (VWA = 1: scalars).
 *
 * FMA = 1 accumulates with fma() (one fused instruction where the device has
 * it, CL_FP_FMA; emulated and slow where it has not), FMA = 0 with mad()
 * (the driver's choice: NVIDIA fuses it, PoCL multiplies then adds). The
 * choice has to be in the kernel: a SPIR-V module carries no contraction
 * that the driver could apply later, so a*b+c reaches PoCL as mad.
 *
 * Compile-time parameters: MWG NWG KWG MDIMC NDIMC VWM VWN SA SB KWI PF FMA DB
 * VWA. */
#if !defined(MWG) || !defined(NWG) || !defined(KWG) || !defined(MDIMC) || !defined(NDIMC) || \
    !defined(VWM) || !defined(VWN) || !defined(SA) || !defined(SB) || !defined(KWI) ||      \
    !defined(PF) || !defined(FMA) || !defined(DB) || !defined(VWA)
#error "matmul_blocked.cl: define MWG NWG KWG MDIMC NDIMC VWM VWN SA SB KWI PF FMA DB VWA"
#endif
#if FMA
#define MULADD(a, b, c) fma(a, b, c)
#else
#define MULADD(a, b, c) mad(a, b, c)
#endif

#define WGS (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define NVW (NWI / VWN)

#if MWG % MDIMC || NWG % (NDIMC * VWN) || KWG % KWI || KWG % VWM
#error "matmul_blocked.cl: the tile must divide into work-items, vectors and K unrolling"
#endif
#if SA && (MWG * KWG) % (VWM * WGS)
#error "matmul_blocked.cl: the A slice must divide into VWM-vectors per work-item"
#endif
#if SB && (KWG * NWG) % (VWN * WGS)
#error "matmul_blocked.cl: the B slice must divide into VWN-vectors per work-item"
#endif
#if DB && (!PF || !(SA || SB))
#error "matmul_blocked.cl: DB double-buffers a staged slice fetched ahead (PF = 1, SA or SB)"
#endif
#if VWA != 1 && (VWA != 4 || !SA || MWI % 4)
#error "matmul_blocked.cl: VWA reads staged A as float4 (SA = 1, MWI a multiple of 4) or not (1)"
#endif

/* Rows of the staged slices: where the next slice is stashed (STASHED) and
 * where this one is read (STAGED); with DB they alternate between the two
 * halves, starting at st and cp. */
#if DB
#define SLICE_ROWS (2 * KWG)
#define STASHED(k) (st + (k))
#define STAGED(k) (cp + (k))
#else
#define SLICE_ROWS KWG
#define STASHED(k) k
#define STAGED(k) k
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VWN == 1
#define floatN float
#define VLOADN(i, p) ((p)[i])
#define VSTOREN(v, i, p) ((p)[i] = (v))
#else
#define floatN CAT(float, VWN)
#define VLOADN(i, p) CAT(vload, VWN)(i, p)
#define VSTOREN(v, i, p) CAT(vstore, VWN)(v, i, p)
#endif
#if VWM == 1
#define floatM float
#define VLOADM(i, p) ((p)[i])
#define VSTOREM(v, i, p) ((p)[i] = (v))
#else
#define floatM CAT(float, VWM)
#define VLOADM(i, p) CAT(vload, VWM)(i, p)
#define VSTOREM(v, i, p) CAT(vstore, VWM)(v, i, p)
#endif

/* The transposed A slice is padded by 4 floats a row (bank conflicts on the
 * transposed stores) and keeps each row 16-byte aligned. */
#define PADA 4

/* One element of A at (row, k) with zeros outside the matrix. */
#define A_GUARDED(row, k) \
  (((row) < M && (k) < K) ? A[a_offset + (long)(row) * lda + (k)] : 0.0f)

#define A_LOADS ((MWG * KWG) / (VWM * WGS)) /* VWM-vectors of A per work-item and slice */
#define B_LOADS ((KWG * NWG) / (VWN * WGS)) /* VWN-vectors of B per work-item and slice */

/* FETCH(k): the A and B slices starting at column/row k into the registers
 * ra and rb, as vectors where the slice is inside (aligned ones, or vloadN
 * where the leading dimension, offset or first column is not a multiple
 * of the width: one branch for the whole slice, not a choice per load),
 * else as guarded scalars. STASH(): those registers into As (transposed)
 * and Bs. */
#if SA
#define FETCH_A_VECTORS(kn, LOAD)                                                         \
  for (int l = 0; l < A_LOADS; ++l) {                                                     \
    const int idx = l * WGS + tid, r = idx / (KWG / VWM), kv = idx % (KWG / VWM);        \
    __global const float* p = A + a_offset + (long)(row0 + r) * lda + (kn);               \
    ra[l] = LOAD;                                                                         \
  }
#define FETCH_A(kn, fast_n)                                                               \
  if ((fast_n) && rows_whole && a_aligned) {                                              \
    FETCH_A_VECTORS(kn, ((__global const floatM*)p)[kv])                                  \
  } else if ((fast_n) && rows_whole) {                                                    \
    FETCH_A_VECTORS(kn, VLOADM(kv, p))                                                    \
  } else {                                                                                \
    for (int l = 0; l < A_LOADS; ++l) {                                                   \
      const int idx = l * WGS + tid, r = idx / (KWG / VWM), kv = idx % (KWG / VWM);      \
      float t[VWM];                                                                       \
      for (int c = 0; c < VWM; ++c) t[c] = A_GUARDED(row0 + r, (kn) + kv * VWM + c);     \
      ra[l] = VLOADM(0, t);                                                               \
    }                                                                                     \
  }
#define STASH_A()                                                                         \
  for (int l = 0; l < A_LOADS; ++l) {                                                     \
    const int idx = l * WGS + tid, r = idx / (KWG / VWM), kv = idx % (KWG / VWM);        \
    float t[VWM];                                                                         \
    VSTOREM(ra[l], 0, t);                                                                 \
    for (int c = 0; c < VWM; ++c) As[STASHED(kv * VWM + c)][r] = t[c];                    \
  }
#else
#define FETCH_A(kn, fast_n)
#define STASH_A()
#endif
#if SB
#define FETCH_B_VECTORS(kn, LOAD)                                                         \
  for (int l = 0; l < B_LOADS; ++l) {                                                     \
    const int idx = l * WGS + tid, k = idx / (NWG / VWN), nv = idx % (NWG / VWN);        \
    __global const float* p = B + b_offset + (long)((kn) + k) * ldb + col0;               \
    rb[l] = LOAD;                                                                         \
  }
#define FETCH_B(kn, fast_n)                                                               \
  if ((fast_n) && cols_whole && b_aligned) {                                              \
    FETCH_B_VECTORS(kn, ((__global const floatN*)p)[nv])                                  \
  } else if ((fast_n) && cols_whole) {                                                    \
    FETCH_B_VECTORS(kn, VLOADN(nv, p))                                                    \
  } else {                                                                                \
    for (int l = 0; l < B_LOADS; ++l) {                                                   \
      const int idx = l * WGS + tid, k = idx / (NWG / VWN), nv = idx % (NWG / VWN);      \
      const long brow = b_offset + (long)((kn) + k) * ldb;                                \
      float t[VWN];                                                                       \
      for (int c = 0; c < VWN; ++c) {                                                     \
        const int col = col0 + nv * VWN + c;                                              \
        t[c] = ((kn) + k < K && col < N) ? B[brow + col] : 0.0f;                          \
      }                                                                                   \
      rb[l] = VLOADN(0, t);                                                               \
    }                                                                                     \
  }
#define STASH_B()                                                                         \
  for (int l = 0; l < B_LOADS; ++l) {                                                     \
    const int idx = l * WGS + tid, k = idx / (NWG / VWN), nv = idx % (NWG / VWN);        \
    Bs[STASHED(k)][nv] = rb[l];                                                           \
  }
#else
#define FETCH_B(kn, fast_n)
#define STASH_B()
#endif
#define FETCH(kn)                                                       \
  do {                                                                  \
    const int fast_n = (kn) + KWG <= K;                                 \
    FETCH_A(kn, fast_n)                                                 \
    FETCH_B(kn, fast_n)                                                 \
  } while (0)
#define STASH() \
  do {          \
    STASH_A()   \
    STASH_B()   \
  } while (0)

/* The work-group's tile: the product of both kernels below, each of which
 * declares the staged slices (__local memory belongs to a kernel). Inlined
 * into each already in the module: PoCL 3.1 with SPIR-V intake failed to
 * run the module with it as a called function (undefined symbol
 * _group_id_x, 2026-12-01). */
#if SA && SB
#define STAGED_PARAMS , __local float (*As)[MWG + PADA], __local floatN (*Bs)[NWG / VWN]
#define STAGED_ARGS , As, Bs
#elif SA
#define STAGED_PARAMS , __local float (*As)[MWG + PADA]
#define STAGED_ARGS , As
#elif SB
#define STAGED_PARAMS , __local floatN (*Bs)[NWG / VWN]
#define STAGED_ARGS , Bs
#else
#define STAGED_PARAMS
#define STAGED_ARGS
#endif
#if SA
#if VWA > 1
/* A row of As is MWG + PADA floats, a multiple of 4: aligned base, aligned rows. */
#define DECLARE_A_SLICE __local float As[SLICE_ROWS][MWG + PADA] __attribute__((aligned(16)));
#else
#define DECLARE_A_SLICE __local float As[SLICE_ROWS][MWG + PADA];
#endif
#else
#define DECLARE_A_SLICE
#endif
#if SB
#define DECLARE_B_SLICE __local floatN Bs[SLICE_ROWS][NWG / VWN];
#else
#define DECLARE_B_SLICE
#endif

static __attribute__((always_inline)) void blocked_tile(const int M, const int N, const int K,
                         __global const float* restrict A, __global const float* restrict B,
                         __global float* restrict C, const long a_offset, const int lda,
                         const long b_offset, const int ldb, const int ldc,
                         const int accumulate STAGED_PARAMS) {
  const int tx = (int)get_local_id(0);
  const int ty = (int)get_local_id(1);
  /* The tile's own first row and column, and where it computes from: the
   * last tiles moved back to end at M and N where the matrix holds a whole
   * tile (uniform over the work-group). */
  const int own_row0 = (int)get_group_id(1) * MWG;
  const int own_col0 = (int)get_group_id(0) * NWG;
  const int rows_whole = M >= MWG;
  const int cols_whole = N >= NWG;
  const int row0 = rows_whole ? min(own_row0, M - MWG) : own_row0;
  const int col0 = cols_whole ? min(own_col0, N - NWG) : own_col0;
#if SA || SB
  const int tid = ty * NDIMC + tx;
#endif
#if SA
  floatM ra[A_LOADS];
  const int a_aligned = VWM == 1 || (lda % VWM == 0 && a_offset % VWM == 0);
#endif
#if SB
  floatN rb[B_LOADS];
  const int b_aligned = ldb % VWN == 0 && b_offset % VWN == 0 && col0 % VWN == 0;
#endif
  /* Vector stores where the tile is whole and in place and C's rows are
   * aligned (col0 is then a multiple of NWG, so of VWN). */
  const int c_vectors = cols_whole && col0 == own_col0 && ldc % VWN == 0;

  floatN acc[MWI][NVW];
#pragma unroll
  for (int i = 0; i < MWI; ++i) {
#pragma unroll
    for (int j = 0; j < NVW; ++j) acc[i][j] = (floatN)(0.0f);
  }

#if SA || SB
  /* Staging goes global -> registers (FETCH) -> __local (STASH). With PF the
   * next slice is fetched before this one is computed, hiding its latency
   * behind the multiply-adds. */
  FETCH(0);
#endif
#if DB
  int st = 0, cp = 0;
  STASH();
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  for (int kk = 0; kk < K; kk += KWG) {
    /* The copy of the slice's loop that reads unstaged operands unguarded. */
    const int fast = (SA || rows_whole) && (SB || cols_whole) && kk + KWG <= K;
#if DB
    cp = st;
    st = KWG - st;
    if (kk + KWG < K) FETCH(kk + KWG);
#elif SA || SB
    STASH();
    barrier(CLK_LOCAL_MEM_FENCE);
#if PF
    if (kk + KWG < K) FETCH(kk + KWG);
#endif
#endif

    /* The slice's multiply-adds. Operands not staged come from global
     * memory, in one of two copies of the loop, each free of branches: on
     * the fast path B with vloadN (whatever its alignment: as fast as an
     * aligned vector load on PoCL, 2026-12-01) and A unguarded, else
     * guarded scalars. */
#if SA && SB
#define SLICE_VARIANTS 1
#else
#define SLICE_VARIANTS 2
#endif
#pragma unroll
    for (int variant = 0; variant < SLICE_VARIANTS; ++variant) {
      if ((SLICE_VARIANTS == 1) || (variant == 0) == (fast != 0)) {
        const int guarded = SLICE_VARIANTS == 2 && variant == 1;
        for (int k0 = 0; k0 < KWG; k0 += KWI) {
#pragma unroll
          for (int kw = 0; kw < KWI; ++kw) {
            const int k = k0 + kw;
            floatN b[NVW];
#pragma unroll
            for (int j = 0; j < NVW; ++j) {
#if SB
              b[j] = Bs[STAGED(k)][j * NDIMC + tx];
#else
              const long brow = b_offset + (long)(kk + k) * ldb;
              if (!guarded) {
                b[j] = VLOADN(j * NDIMC + tx, B + brow + col0);
              } else {
                float t[VWN];
#pragma unroll
                for (int c = 0; c < VWN; ++c) {
                  const int col = col0 + (j * NDIMC + tx) * VWN + c;
                  t[c] = (kk + k < K && col < N) ? B[brow + col] : 0.0f;
                }
                b[j] = VLOADN(0, t);
              }
#endif
            }
#if VWA > 1
            float av[MWI];
#pragma unroll
            for (int q = 0; q < MWI / 4; ++q) {
              vstore4(((__local const float4*)&As[STAGED(k)][ty * MWI])[q], q, av);
            }
#endif
#pragma unroll
            for (int i = 0; i < MWI; ++i) {
#if VWA > 1
              const float a = av[i];
#elif SA
              const float a = As[STAGED(k)][ty * MWI + i];
#else
              const int row = row0 + ty * MWI + i;
              const float a = guarded ? A_GUARDED(row, kk + k) : A[a_offset + (long)row * lda + kk + k];
#endif
#pragma unroll
              for (int j = 0; j < NVW; ++j) acc[i][j] = MULADD((floatN)(a), b[j], acc[i][j]);
            }
          }
        }
      }
    }
#if DB
    /* The next slice into the other half: every work-item has read this
     * half's previous slice (the barrier before this one was computed). */
    if (kk + KWG < K) {
      STASH();
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#elif SA || SB
    /* The next slice overwrites the staged tiles: wait until all have read. */
    barrier(CLK_LOCAL_MEM_FENCE);
#if !PF
    if (kk + KWG < K) FETCH(kk + KWG);
#endif
#endif
  }

  /* Store the block's own rows and columns inside C: vectors where the
   * tile is whole, in place and aligned, guarded scalars otherwise. */
#pragma unroll
  for (int i = 0; i < MWI; ++i) {
    const int row = row0 + ty * MWI + i;
    if (row < own_row0 || row >= M) continue;
    __global float* crow = C + (long)row * ldc;
#pragma unroll
    for (int j = 0; j < NVW; ++j) {
      const int cv = j * NDIMC + tx;
      if (c_vectors) {
        __global floatN* p = (__global floatN*)(crow + col0) + cv;
        *p = accumulate ? *p + acc[i][j] : acc[i][j];
      } else {
        float t[VWN];
        VSTOREN(acc[i][j], 0, t);
#pragma unroll
        for (int c = 0; c < VWN; ++c) {
          const int col = col0 + cv * VWN + c;
          if (col >= own_col0 && col < N) crow[col] = accumulate ? crow[col] + t[c] : t[c];
        }
      }
    }
  }
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void matmul_blocked(const int M, const int N, const int K,
                    __global const float* restrict A,
                    __global const float* restrict B,
                    __global float* restrict C,
                    const long a_offset, const int lda,
                    const long b_offset, const int ldb,
                    const int ldc, const int accumulate) {
  DECLARE_A_SLICE
  DECLARE_B_SLICE
  blocked_tile(M, N, K, A, B, C, a_offset, lda, b_offset, ldb, ldc, accumulate STAGED_ARGS);
}

/* K split over dimension 2: this part's KWG slices into its plane of W
 * (the host's workspace, planes of M x ldw floats), written, never added to
 * (the arguments are matmul_blocked's; `accumulate` is ignored). A kernel
 * of its own, so that the plain product computes no part: on PoCL that
 * cost the CPU points about a tenth of their speed. */
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void matmul_blocked_split(const int M, const int N, const int K,
                          __global const float* restrict A,
                          __global const float* restrict B,
                          __global float* restrict W,
                          const long a_offset, const int lda,
                          const long b_offset, const int ldb,
                          const int ldw, const int accumulate) {
  DECLARE_A_SLICE
  DECLARE_B_SLICE
  const int parts = (int)get_num_groups(2), part = (int)get_group_id(2);
  const int k_part = ((K + parts - 1) / parts + KWG - 1) / KWG * KWG;
  const int k_begin = part * k_part;
  blocked_tile(M, N, max(0, min(k_part, K - k_begin)), A, B, W + (long)part * M * ldw,
               a_offset + k_begin, lda, b_offset + (long)k_begin * ldb, ldb, ldw, 0 STAGED_ARGS);
}

#include "matmul_splitk_sum.h"
