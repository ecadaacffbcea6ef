/* Experiment: SGEMM with warp-shaped tiles (row-major C = A * B, whole
 * tiles only: M % BM == N % BN == K % BK == 0, rows aligned to 4 floats).
 * matmul_blocked's arguments. A work-group of NT work-items computes a BM x
 * BN tile; warp w covers a WM x WN part of it (WR x WC lanes), each lane TM
 * x TN elements as (TM/4) x (TN/4) blocks of 4 x 4 strided by the warp's
 * lanes, so that a warp's float4 reads of staged A and B touch WR and WC
 * distinct float4s (one wavefront each). Slices double-buffered in local
 * memory, the next slice fetched into registers before this one's FMAs. */
#ifndef PADA
#define PADA 4
#endif
#ifndef STASH_AT
#define STASH_AT (BK - 1)
#endif
#define NT ((BM / TM) * (BN / TN))
#define WM (WR * TM)
#define WN (WC * TN)
#define WARPS_N (BN / WN)
#define A_F4 ((BM * BK / 4) / NT)
#define B_F4 ((BK * BN / 4) / NT)
#define AROW (BM + PADA)
#if (WR * WC) != 32 || BM % WM || BN % WN || (BM * BK / 4) % NT || (BK * BN / 4) % NT
#error "wt.cl: bad shape"
#endif

__kernel __attribute__((reqd_work_group_size(32, NT / 32, 1)))
void sgemm_wt(const int M, const int N, const int K,
              __global const float* restrict A,
              __global const float* restrict B,
              __global float* restrict C,
              const long a_offset, const int lda,
              const long b_offset, const int ldb,
              const int ldc, const int accumulate) {
  __local float As[2 * BK * AROW] __attribute__((aligned(16)));
  __local float4 Bs[2 * BK * (BN / 4)];
  const int tid = (int)get_local_id(1) * 32 + (int)get_local_id(0);
  const int lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int tr = lane / WC, tc = lane % WC;
  const int row0 = (int)get_group_id(1) * BM, col0 = (int)get_group_id(0) * BN;
  __global const float* Ab = A + a_offset + (long)row0 * lda;
  __global const float* Bb = B + b_offset + col0;

  float4 ra[A_F4], rb[B_F4];
#define FETCH(kk)                                                                    \
  _Pragma("unroll") for (int l = 0; l < A_F4; ++l) {                                 \
    const int idx = l * NT + tid, r = idx / (BK / 4), kq = idx % (BK / 4);           \
    ra[l] = *(__global const float4*)(Ab + (long)r * lda + (kk) + kq * 4);          \
  }                                                                                  \
  _Pragma("unroll") for (int l = 0; l < B_F4; ++l) {                                 \
    const int idx = l * NT + tid, k = idx / (BN / 4), nq = idx % (BN / 4);           \
    rb[l] = *(__global const float4*)(Bb + (long)((kk) + k) * ldb + nq * 4);        \
  }
#define STASH(buf)                                                                   \
  _Pragma("unroll") for (int l = 0; l < A_F4; ++l) {                                 \
    const int idx = l * NT + tid, r = idx / (BK / 4), kq = idx % (BK / 4);           \
    __local float* d = As + (buf) * (BK * AROW) + (kq * 4) * AROW + r;              \
    d[0] = ra[l].x; d[AROW] = ra[l].y; d[2 * AROW] = ra[l].z; d[3 * AROW] = ra[l].w; \
  }                                                                                  \
  _Pragma("unroll") for (int l = 0; l < B_F4; ++l) {                                 \
    const int idx = l * NT + tid, k = idx / (BN / 4), nq = idx % (BN / 4);           \
    Bs[(buf) * (BK * (BN / 4)) + k * (BN / 4) + nq] = rb[l];                         \
  }

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  FETCH(0)
  STASH(0)
  barrier(CLK_LOCAL_MEM_FENCE);
  const int a_lane = wm * WM + tr * 4, b_lane = (wn * WN + tc * 4) / 4;
  int cur = 0;
  for (int kk = 0; kk < K; kk += BK) {
    const int more = kk + BK < K;
    if (more) { FETCH(kk + BK) }
    __local const float* as = As + cur * (BK * AROW) + a_lane;
    __local const float4* bs = Bs + cur * (BK * (BN / 4)) + b_lane;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {
        const float4 v = *(__local const float4*)(as + k * AROW + i * WR * 4);
        a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {
        const float4 v = bs[k * (BN / 4) + j * WC];
        b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = mad(a[i], b[j], acc[i][j]);
      if (k == STASH_AT && more) { STASH(cur ^ 1) }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    cur ^= 1;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + wm * WM + (i / 4) * WR * 4 + tr * 4 + (i % 4);
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int col = col0 + wn * WN + j * WC * 4 + tc * 4;
      __global float* p = C + (long)row * ldc + col;
      float4 v = (float4)(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
      if (accumulate) v += *(__global float4*)p;
      *(__global float4*)p = v;
    }
  }
}
