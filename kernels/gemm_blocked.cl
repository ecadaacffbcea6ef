/* Register-blocked GEMM in every BLAS form: C = alpha * op(A) * op(B) +
 * beta * C, row-major (the host turns a column-major call into the
 * row-major product of the transposed operands, swapped), op(X) = X or X^T,
 * in half, single or double precision, over a batch of products.
 *
 * The tile machinery is matmul_blocked.cl's (read its comment first): a
 * work-group of MDIMC x NDIMC work-items computes an MWG x NWG tile of C,
 * each work-item an MWI x NWI block in registers; K in slices of KWG,
 * unrolled by KWI; A and B staged through __local memory where SA / SB,
 * else read from global memory; edge tiles moved back to end at M and N;
 * a guarded path (scalar loads, zeros outside the matrices) wherever a
 * slice is not whole. What this kernel adds:
 *
 * - op(A) and op(B) at run time (a_trans, b_trans; uniform over the
 *   launch): a staged operand is loaded as vectors along whichever of its
 *   dimensions is contiguous in memory (K for A, N for B when not
 *   transposed; M for A^T, K for B^T) and stored into the same __local
 *   layout, so the slice's multiply-adds do not change. Both directions
 *   share one path (the vector's position and the step of its __local
 *   stores are chosen, not its code): with a path per direction ptxas gave
 *   the 128 x 128 tile 255 registers instead of 172, and the 128 x 256 tile
 *   544 bytes of spills instead of 32 (sm_90, 2026-12-02). An operand read
 *   from global memory (SA = 0, SB = 0) is never transposed: the host
 *   packs A^T and B^T into row-major copies first
 *   (kernels/gemm_transpose.cl) and passes a_trans = 0, b_trans = 0, and
 *   the kernel reads them with strides known here. With the strides left
 *   to run time the CPU points ran at 0.7 of this speed (1024^3 on PoCL, 2
 *   Zen 4 cores, 2026-12-02).
 * - alpha and beta: C = alpha * AB + beta * C, C not read where beta is 0
 *   (a NaN there is ignored, as BLAS says), A and B not read where alpha is
 *   0 or K is 0 (C = beta * C then). `accumulate` (the second and later
 *   parts of a K that the host splits into launches) makes beta 1.
 * - Offsets for A, B and C, and a batch over dimension 2 of the NDRange:
 *   product z at offsets a_offset + z * a_stride (and so on) with the
 *   scalar alpha and beta, or, where `per_batch`, at the offsets
 *   batch_offsets[3z .. 3z+2] (A, B, C) with alpha and beta from
 *   batch_scalars[2z], [2z+1].
 * - PRECISION 16, 32 or 64: the element type in memory (half, float,
 *   double). Half is stored as half and computed in float (vload_half /
 *   vstore_half, rounded to nearest even once per element of C); alpha and
 *   beta are then floats, in the arguments and in batch_scalars alike.
 *
 * FMA = 1 accumulates with fma(), FMA = 0 with mad() (matmul_blocked.cl
 * says why the choice is in the kernel). DB = 1 double-buffers the staged
 * slices and VWA = 4 reads a work-item's values of the staged A slice as
 * 4-vectors, as in matmul_blocked.cl; DB = 0 and VWA = 1 are this kernel as
 * it was before them (every earlier point preprocesses to the same tokens).
 *
 * Compile-time parameters: PRECISION MWG NWG KWG MDIMC NDIMC VWM VWN SA SB
 * KWI PF FMA DB VWA. */
#if !defined(PRECISION) || !defined(MWG) || !defined(NWG) || !defined(KWG) || \
    !defined(MDIMC) || !defined(NDIMC) || !defined(VWM) || !defined(VWN) || !defined(SA) || \
    !defined(SB) || !defined(KWI) || !defined(PF) || !defined(FMA) || !defined(DB) ||      \
    !defined(VWA)
#error "gemm_blocked.cl: define PRECISION MWG NWG KWG MDIMC NDIMC VWM VWN SA SB KWI PF FMA DB VWA"
#endif

#define WGS (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define NVW (NWI / VWN)

#if MWG % MDIMC || NWG % (NDIMC * VWN) || KWG % KWI || KWG % VWM
#error "gemm_blocked.cl: the tile must divide into work-items, vectors and K unrolling"
#endif
#if SA && ((MWG * KWG) % (VWM * WGS) || MWG % VWM)
#error "gemm_blocked.cl: the A slice must divide into VWM-vectors per work-item, either way"
#endif
#if SB && ((KWG * NWG) % (VWN * WGS) || KWG % VWN)
#error "gemm_blocked.cl: the B slice must divide into VWN-vectors per work-item, either way"
#endif
#if DB && (!PF || !(SA || SB))
#error "gemm_blocked.cl: DB double-buffers a staged slice fetched ahead (PF = 1, SA or SB)"
#endif
#if VWA != 1 && (VWA != 4 || !SA || MWI % 4)
#error "gemm_blocked.cl: VWA reads staged A as 4-vectors (SA = 1, MWI a multiple of 4) or not (1)"
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
#define TYPE_(a, b) a##b
#define TYPE(a, b) TYPE_(a, b)

/* storage: the element in memory; real: what is computed with. LOAD1 /
 * STORE1 one element at index i of p; LOADV(W) a W-vector of reals at
 * vector index i of p (any alignment); LOADA(W) and STOREA(W) the same
 * where p + i * W is aligned to the vector. */
#if PRECISION == 16
#define storage half
#define real float
#define LOAD1(i, p) vload_half(i, p)
#define STORE1(v, i, p) vstore_half(v, i, p)
#define LOADV_1(i, p) vload_half(i, p)
#define LOADV_2(i, p) vload_half2(i, p)
#define LOADV_4(i, p) vload_half4(i, p)
#define LOADV_8(i, p) vload_half8(i, p)
#define LOADV_16(i, p) vload_half16(i, p)
#define STOREV_1(v, i, p) vstore_half(v, i, p)
#define STOREV_2(v, i, p) vstore_half2(v, i, p)
#define STOREV_4(v, i, p) vstore_half4(v, i, p)
#define STOREV_8(v, i, p) vstore_half8(v, i, p)
#define STOREV_16(v, i, p) vstore_half16(v, i, p)
#define LOADA_(W, i, p) CAT(LOADV_, W)(i, p)
#define STOREA_(W, v, i, p) CAT(STOREV_, W)(v, i, p)
#elif PRECISION == 32 || PRECISION == 64
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define storage double
#define real double
#else
#define storage float
#define real float
#endif
#define LOAD1(i, p) ((p)[i])
#define STORE1(v, i, p) ((p)[i] = (v))
#define LOADV_1(i, p) ((p)[i])
#define LOADV_2(i, p) vload2(i, p)
#define LOADV_4(i, p) vload4(i, p)
#define LOADV_8(i, p) vload8(i, p)
#define LOADV_16(i, p) vload16(i, p)
#define STOREV_1(v, i, p) ((p)[i] = (v))
#define STOREV_2(v, i, p) vstore2(v, i, p)
#define STOREV_4(v, i, p) vstore4(v, i, p)
#define STOREV_8(v, i, p) vstore8(v, i, p)
#define STOREV_16(v, i, p) vstore16(v, i, p)
#define LOADA_(W, i, p) (((__global const VEC(W)*)(p))[i])
#define STOREA_(W, v, i, p) (((__global VEC(W)*)(p))[i] = (v))
#else
#error "gemm_blocked.cl: PRECISION is 16, 32 or 64"
#endif
#define VEC_1 real
#define VEC_2 TYPE(real, 2)
#define VEC_4 TYPE(real, 4)
#define VEC_8 TYPE(real, 8)
#define VEC_16 TYPE(real, 16)
#define VEC(W) CAT(VEC_, W)
#define LOADV(W, i, p) CAT(LOADV_, W)(i, p)
#define LOADA(W, i, p) LOADA_(W, i, p)
#define STOREA(W, v, i, p) STOREA_(W, v, i, p)
/* A vector from / to a private array of reals. */
#if VWN == 1
#define PACKN(t) ((t)[0])
#define UNPACKN(v, t) ((t)[0] = (v))
#else
#define PACKN(t) CAT(vload, VWN)(0, t)
#define UNPACKN(v, t) CAT(vstore, VWN)(v, 0, t)
#endif
#if VWM == 1
#define PACKM(t) ((t)[0])
#define UNPACKM(v, t) ((t)[0] = (v))
#else
#define PACKM(t) CAT(vload, VWM)(0, t)
#define UNPACKM(v, t) CAT(vstore, VWM)(v, 0, t)
#endif
#define realN VEC(VWN)
#define realM VEC(VWM)

#if FMA
#define MULADD(a, b, c) fma(a, b, c)
#else
#define MULADD(a, b, c) mad(a, b, c)
#endif

/* The transposed A slice is padded by 4 elements a row (bank conflicts on
 * the transposed stores); the B slice by one vector, for B^T's stores down
 * K (without it a warp's stores met 8 banks, with it 16; NT and TT ran 4-6 %
 * behind NN on the H200 at 4096^3, 2026-12-03). */
#define PADA 4

/* op(A)(row, k) and op(B)(k, col) through their strides, zeros outside. */
#define A_AT(row, k) A[(long)(row) * a_rs + (long)(k) * a_ks]
#define B_AT(k, col) B[(long)(k) * b_rs + (long)(col) * b_cs]
#define A_GUARDED(row, k) (((row) < M && (k) < K) ? LOAD1(0, &A_AT(row, k)) : (real)0)
#define B_GUARDED(k, col) (((k) < K && (col) < N) ? LOAD1(0, &B_AT(k, col)) : (real)0)

#define A_LOADS ((MWG * KWG) / (VWM * WGS)) /* VWM-vectors of A per work-item and slice */
#define B_LOADS ((KWG * NWG) / (VWN * WGS)) /* VWN-vectors of B per work-item and slice */

/* FETCH(k): the A and B slices starting at K index k into registers ra,
 * rb; STASH(): those into As (k-major: As[k][row]) and Bs (Bs[k][column
 * vector]). Not transposed, a vector runs along K of a row of A (index ->
 * row r, vector kv) and along N of a row of B (index -> k, vector nv);
 * transposed, along M of A^T's row k (index -> k, vector mv) and along K of
 * B^T's row `col` (index -> column c, vector kv). */
#if SA
/* The l-th A vector of a work-item: its first element op(A)(row0 + r, kn +
 * k) and, where a_trans, the next ones down M (else along K). */
#define A_VECTOR(l, r, k)                                                                     \
  const int idx = (l) * WGS + tid;                                                            \
  const int r = a_trans ? (idx % (MWG / VWM)) * VWM : idx / (KWG / VWM);                     \
  const int k = a_trans ? idx / (MWG / VWM) : (idx % (KWG / VWM)) * VWM
#define FETCH_A(kn, fast_n)                                                                   \
  for (int l = 0; l < A_LOADS; ++l) {                                                         \
    A_VECTOR(l, r, k);                                                                        \
    __global const storage* p = &A_AT(row0 + r, (kn) + k);                                    \
    if ((fast_n) && rows_whole && a_aligned) {                                                \
      ra[l] = LOADA(VWM, 0, p);                                                               \
    } else if ((fast_n) && rows_whole) {                                                      \
      ra[l] = LOADV(VWM, 0, p);                                                               \
    } else {                                                                                  \
      real t[VWM];                                                                            \
      /* The vector's elements inside op(A): it runs along M or K. */                       \
      const int inside = a_trans ? ((kn) + k < K ? M - (row0 + r) : 0)                        \
                                 : (row0 + r < M ? K - ((kn) + k) : 0);                       \
      for (int c = 0; c < VWM; ++c) t[c] = c < inside ? LOAD1(c, p) : (real)0;                \
      ra[l] = PACKM(t);                                                                       \
    }                                                                                         \
  }
#define STASH_A()                                                                             \
  for (int l = 0; l < A_LOADS; ++l) {                                                         \
    A_VECTOR(l, r, k);                                                                        \
    real t[VWM];                                                                              \
    UNPACKM(ra[l], t);                                                                        \
    __local real* as = &As[STASHED(k)][r];                                                    \
    for (int c = 0; c < VWM; ++c) as[a_trans ? c : c * (MWG + PADA)] = t[c];                  \
  }
#else
#define FETCH_A(kn, fast_n)
#define STASH_A()
#endif
#if SB
/* The l-th B vector of a work-item: its first element op(B)(kn + k, col0 +
 * c) and, where b_trans, the next ones down K (else along N). */
#define B_VECTOR(l, k, c)                                                                     \
  const int idx = (l) * WGS + tid;                                                            \
  const int k = b_trans ? (idx % (KWG / VWN)) * VWN : idx / (NWG / VWN);                     \
  const int c = b_trans ? idx / (KWG / VWN) : (idx % (NWG / VWN)) * VWN
#define FETCH_B(kn, fast_n)                                                                   \
  for (int l = 0; l < B_LOADS; ++l) {                                                         \
    B_VECTOR(l, k, c);                                                                        \
    __global const storage* p = &B_AT((kn) + k, col0 + c);                                    \
    if ((fast_n) && cols_whole && b_aligned) {                                                \
      rb[l] = LOADA(VWN, 0, p);                                                               \
    } else if ((fast_n) && cols_whole) {                                                      \
      rb[l] = LOADV(VWN, 0, p);                                                               \
    } else {                                                                                  \
      real t[VWN];                                                                            \
      /* The vector's elements inside op(B): it runs along K or N. */                       \
      const int inside = b_trans ? (col0 + c < N ? K - ((kn) + k) : 0)                        \
                                 : ((kn) + k < K ? N - (col0 + c) : 0);                       \
      for (int e = 0; e < VWN; ++e) t[e] = e < inside ? LOAD1(e, p) : (real)0;                \
      rb[l] = PACKN(t);                                                                       \
    }                                                                                         \
  }
#define STASH_B()                                                                             \
  for (int l = 0; l < B_LOADS; ++l) {                                                         \
    B_VECTOR(l, k, c);                                                                        \
    if (!b_trans) {                                                                           \
      Bs[STASHED(k)][c / VWN] = rb[l];                                                        \
    } else {                                                                                  \
      real t[VWN];                                                                            \
      UNPACKN(rb[l], t);                                                                      \
      __local real* bs = (__local real*)Bs + STASHED(k) * (NWG + VWN) + c;                    \
      for (int e = 0; e < VWN; ++e) bs[e * (NWG + VWN)] = t[e];                               \
    }                                                                                         \
  }
#else
#define FETCH_B(kn, fast_n)
#define STASH_B()
#endif
#define FETCH(kn)                           \
  do {                                      \
    const int fast_n = (kn) + KWG <= K;     \
    FETCH_A(kn, fast_n)                     \
    FETCH_B(kn, fast_n)                     \
  } while (0)
#define STASH() \
  do {          \
    STASH_A()   \
    STASH_B()   \
  } while (0)

/* A slice's multiply-adds, unguarded (0) or guarded (1, where an operand is
 * read from global memory: zeros outside the matrices); the unguarded copy
 * reads that operand with strides known here. */
#define SLICE_MULADDS(kk, guarded)                                                            \
  for (int k0 = 0; k0 < KWG; k0 += KWI) {                                                     \
    _Pragma("unroll") for (int kw = 0; kw < KWI; ++kw) {                                      \
      const int k = k0 + kw;                                                                  \
      realN b[NVW];                                                                           \
      _Pragma("unroll") for (int j = 0; j < NVW; ++j) { B_OPERAND(kk, k, j, guarded); }      \
      A_VECTORS(k)                                                                            \
      _Pragma("unroll") for (int i = 0; i < MWI; ++i) {                                       \
        A_OPERAND(kk, k, i, guarded);                                                         \
        _Pragma("unroll") for (int j = 0; j < NVW; ++j) {                                     \
          acc[i][j] = MULADD((realN)(a), b[j], acc[i][j]);                                    \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
#if SB
#define B_OPERAND(kk, k, j, guarded) b[j] = Bs[STAGED(k)][j * NDIMC + tx]
#else
#define B_OPERAND(kk, k, j, guarded)                                                          \
  if (!(guarded)) {                                                                           \
    b[j] = LOADV(VWN, j * NDIMC + tx, B + (long)((kk) + k) * b_rs + col0);                    \
  } else {                                                                                    \
    real t[VWN];                                                                              \
    _Pragma("unroll") for (int c = 0; c < VWN; ++c) {                                         \
      t[c] = B_GUARDED((kk) + k, col0 + (j * NDIMC + tx) * VWN + c);                          \
    }                                                                                         \
    b[j] = PACKN(t);                                                                          \
  }
#endif
/* A_VECTORS(k) before a k's multiply-adds, A_OPERAND each row's value:
 * with VWA > 1 the work-item's MWI values of the staged A slice read as
 * 4-vectors into av, else one at a time. */
#if VWA > 1
#define A_VECTORS(k)                                                                          \
  real av[MWI];                                                                               \
  _Pragma("unroll") for (int q = 0; q < MWI / 4; ++q) {                                       \
    vstore4(((__local const VEC(4)*)&As[STAGED(k)][ty * MWI])[q], q, av);                     \
  }
#define A_OPERAND(kk, k, i, guarded) const real a = av[i]
#elif SA
#define A_VECTORS(k)
#define A_OPERAND(kk, k, i, guarded) const real a = As[STAGED(k)][ty * MWI + i]
#else
#define A_VECTORS(k)
#define A_OPERAND(kk, k, i, guarded)                                                          \
  const int row = row0 + ty * MWI + i;                                                        \
  const real a = (guarded) ? A_GUARDED(row, (kk) + k) : LOAD1(0, &A[(long)row * lda + (kk) + k])
#endif
/* Before a slice's multiply-adds: the staged operands stashed (and the next
 * slice fetched, PF); after them, the next slice fetched (no PF). */
#if DB
/* Double-buffered: this slice was stashed by the last one (or before the
 * loop); the next is fetched now and stashed into the other half after
 * this one's multiply-adds (every work-item has read that half's previous
 * slice: the barrier before this one was computed). */
#define SLICE_STAGED_BEFORE(kk) \
  cp = st;                      \
  st = KWG - st;                \
  if ((kk) + KWG < K) FETCH((kk) + KWG);
#define SLICE_STAGED_AFTER(kk)    \
  if ((kk) + KWG < K) {           \
    STASH();                      \
    barrier(CLK_LOCAL_MEM_FENCE); \
  }
#elif SA || SB
#define SLICE_STAGED(kk) \
  STASH();               \
  barrier(CLK_LOCAL_MEM_FENCE);
#if PF
#define SLICE_STAGED_BEFORE(kk) \
  SLICE_STAGED(kk)              \
  if ((kk) + KWG < K) FETCH((kk) + KWG);
#define SLICE_STAGED_AFTER(kk) barrier(CLK_LOCAL_MEM_FENCE);
#else
#define SLICE_STAGED_BEFORE(kk) SLICE_STAGED(kk)
#define SLICE_STAGED_AFTER(kk)    \
  barrier(CLK_LOCAL_MEM_FENCE);   \
  if ((kk) + KWG < K) FETCH((kk) + KWG);
#endif
#else
#define SLICE_STAGED_BEFORE(kk)
#define SLICE_STAGED_AFTER(kk)
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_blocked(const int M, const int N, int K, const int k_begin, const int accumulate,
                  const real alpha_arg, const real beta_arg,
                  __global const storage* restrict A_arg, const long a_offset_arg, const int lda,
                  const int a_trans, const long a_stride,
                  __global const storage* restrict B_arg, const long b_offset_arg, const int ldb,
                  const int b_trans, const long b_stride,
                  __global storage* restrict C_arg, const long c_offset_arg, const int ldc,
                  const long c_stride,
                  __global const long* restrict batch_offsets,
                  __global const real* restrict batch_scalars, const int per_batch) {
#if SA && VWA > 1
  /* A row of As is MWG + PADA elements, a multiple of 4: aligned rows. */
  __local real As[SLICE_ROWS][MWG + PADA] __attribute__((aligned(4 * sizeof(real))));
#elif SA
  __local real As[SLICE_ROWS][MWG + PADA];
#endif
#if SB
  __local realN Bs[SLICE_ROWS][NWG / VWN + 1];
#endif
  __global const storage* restrict A = A_arg;
  __global const storage* restrict B = B_arg;
  __global storage* restrict C = C_arg;
  const int tx = (int)get_local_id(0);
  const int ty = (int)get_local_id(1);
  const int z = (int)get_group_id(2);

  /* This product of the batch: its offsets, alpha and beta. */
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
  /* alpha = 0 reads neither A nor B: the product is then empty. */
  if (alpha == (real)0) K = 0;
  /* op(A)(row, k) at row * a_rs + k * a_ks; op(B)(k, col) at k * b_rs +
   * col * b_cs. This launch's part of K starts at k_begin. */
  const long a_rs = a_trans ? 1 : lda, a_ks = a_trans ? lda : 1;
#if SB
  const long b_rs = b_trans ? 1 : ldb, b_cs = b_trans ? ldb : 1;
#else
  /* Likewise B: rows contiguous. */
  const long b_rs = ldb;
#define b_cs 1
#endif
  A += a_offset + (long)k_begin * a_ks;
  B += b_offset + (long)k_begin * b_rs;
  C += c_offset;

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
  realM ra[A_LOADS];
  const int a_aligned =
      VWM == 1 || (lda % VWM == 0 && (A - A_arg) % VWM == 0 && (!a_trans || row0 % VWM == 0));
#endif
#if SB
  realN rb[B_LOADS];
  const int b_aligned =
      VWN == 1 || (ldb % VWN == 0 && (B - B_arg) % VWN == 0 && (b_trans || col0 % VWN == 0));
#endif
  const int c_vectors = cols_whole && col0 == own_col0 && ldc % VWN == 0 && c_offset % VWN == 0;

  realN acc[MWI][NVW];
#pragma unroll
  for (int i = 0; i < MWI; ++i) {
#pragma unroll
    for (int j = 0; j < NVW; ++j) acc[i][j] = (realN)(0);
  }

#if SA || SB
  FETCH(0);
#endif
#if DB
  int st = 0, cp = 0;
  STASH();
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  /* The whole slices of a whole tile unguarded, then the rest guarded: two
   * loops, not a choice inside one. With both copies in one loop PoCL
   * compiled the unguarded copy of the CPU points poorly: at 1024^3 they ran
   * at 0.74 to 0.95 of matmul_blocked's speed on the same data, by point;
   * with two loops every CPU point ran at 195 to 212 GFLOP/s, level with it
   * or above (2 Zen 4 cores, 2026-12-04). Staged operands are guarded as
   * they are fetched: there every slice is the same. */
#if SA && SB
  const int k_whole = K;
#else
  const int whole = (SA || rows_whole) && (SB || cols_whole);
  const int k_whole = whole ? K / KWG * KWG : 0;
#endif
  int kk = 0;
  for (; kk < k_whole; kk += KWG) {
    SLICE_STAGED_BEFORE(kk)
    SLICE_MULADDS(kk, 0)
    SLICE_STAGED_AFTER(kk)
  }
#if !(SA && SB)
  for (; kk < K; kk += KWG) {
    SLICE_STAGED_BEFORE(kk)
    SLICE_MULADDS(kk, 1)
    SLICE_STAGED_AFTER(kk)
  }
#endif

  /* C = alpha * AB + beta * C for the block's own rows and columns inside
   * C; C is read only where beta is not 0. */
  if (K == 0) alpha = (real)0;
#pragma unroll
  for (int i = 0; i < MWI; ++i) {
    const int row = row0 + ty * MWI + i;
    if (row < own_row0 || row >= M) continue;
    __global storage* crow = C + (long)row * ldc;
#pragma unroll
    for (int j = 0; j < NVW; ++j) {
      const int cv = j * NDIMC + tx;
      if (c_vectors) {
        realN v = alpha * acc[i][j];
        if (beta != (real)0) v += beta * LOADA(VWN, cv, crow + col0);
        STOREA(VWN, v, cv, crow + col0);
      } else {
        real t[VWN];
        UNPACKN(acc[i][j], t);
#pragma unroll
        for (int c = 0; c < VWN; ++c) {
          const int col = col0 + cv * VWN + c;
          if (col >= own_col0 && col < N) {
            real v = alpha * t[c];
            if (beta != (real)0) v += beta * LOAD1(col, crow);
            STORE1(v, col, crow);
          }
        }
      }
    }
  }
}
