/* Lean kernels for a strided batch of 32x32x32 row-major NN products, beta 0. */
#ifndef NP
#define NP 2
#endif
__kernel __attribute__((reqd_work_group_size(32, NP, 1)))
void lane_col(__global const float4* restrict A, __global const float* restrict B,
              __global float* restrict C, const int batch, const float alpha) {
  __local float4 As[NP][32][9];
  const int j = get_local_id(0), w = get_local_id(1);
  const int z = get_group_id(0) * NP + w;
  const int live = z < batch;
  float b[32];
  if (live) {
    __global const float4* a = A + (long)z * 256;
    #pragma unroll
    for (int t = 0; t < 8; ++t) { const int q = j + 32 * t; As[w][q / 8][q % 8] = a[q]; }
    __global const float* bz = B + (long)z * 1024 + j;
    #pragma unroll
    for (int k = 0; k < 32; ++k) b[k] = bz[k * 32];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!live) return;
  __global float* c = C + (long)z * 1024 + j;
  #pragma unroll 4
  for (int i = 0; i < 32; ++i) {
    float acc = 0;
    #pragma unroll
    for (int q = 0; q < 8; ++q) {
      const float4 a = As[w][i][q];
      acc = mad(a.x, b[4 * q], acc); acc = mad(a.y, b[4 * q + 1], acc);
      acc = mad(a.z, b[4 * q + 2], acc); acc = mad(a.w, b[4 * q + 3], acc);
    }
    c[i * 32] = alpha * acc;
  }
}
/* Two columns a lane, a warp per product (16 lanes x 2 columns)? No: 4 rows x 1 column
 * a lane over 8 row groups... keep it simple: lane_col2 = lane j has columns j, and
 * accumulates 4 rows at once (ILP). */
__kernel __attribute__((reqd_work_group_size(32, NP, 1)))
void lane_col4(__global const float4* restrict A, __global const float* restrict B,
               __global float* restrict C, const int batch, const float alpha) {
  __local float4 As[NP][32][9];
  const int j = get_local_id(0), w = get_local_id(1);
  const int z = get_group_id(0) * NP + w;
  const int live = z < batch;
  float b[32];
  if (live) {
    __global const float4* a = A + (long)z * 256;
    #pragma unroll
    for (int t = 0; t < 8; ++t) { const int q = j + 32 * t; As[w][q / 8][q % 8] = a[q]; }
    __global const float* bz = B + (long)z * 1024 + j;
    #pragma unroll
    for (int k = 0; k < 32; ++k) b[k] = bz[k * 32];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!live) return;
  __global float* c = C + (long)z * 1024 + j;
  for (int i = 0; i < 32; i += 4) {
    float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
    #pragma unroll
    for (int q = 0; q < 8; ++q) {
      const float4 a0 = As[w][i][q], a1 = As[w][i + 1][q], a2 = As[w][i + 2][q], a3 = As[w][i + 3][q];
      acc0 = mad(a0.x, b[4*q], acc0); acc0 = mad(a0.y, b[4*q+1], acc0); acc0 = mad(a0.z, b[4*q+2], acc0); acc0 = mad(a0.w, b[4*q+3], acc0);
      acc1 = mad(a1.x, b[4*q], acc1); acc1 = mad(a1.y, b[4*q+1], acc1); acc1 = mad(a1.z, b[4*q+2], acc1); acc1 = mad(a1.w, b[4*q+3], acc1);
      acc2 = mad(a2.x, b[4*q], acc2); acc2 = mad(a2.y, b[4*q+1], acc2); acc2 = mad(a2.z, b[4*q+2], acc2); acc2 = mad(a2.w, b[4*q+3], acc2);
      acc3 = mad(a3.x, b[4*q], acc3); acc3 = mad(a3.y, b[4*q+1], acc3); acc3 = mad(a3.z, b[4*q+2], acc3); acc3 = mad(a3.w, b[4*q+3], acc3);
    }
    c[i * 32] = alpha * acc0; c[(i + 1) * 32] = alpha * acc1; c[(i + 2) * 32] = alpha * acc2; c[(i + 3) * 32] = alpha * acc3;
  }
}
/* No local memory: B's column in registers, A's rows read uniformly from global memory. */
__kernel __attribute__((reqd_work_group_size(32, NP, 1)))
void lane_glob(__global const float4* restrict A, __global const float* restrict B,
               __global float* restrict C, const int batch, const float alpha) {
  const int j = get_local_id(0), w = get_local_id(1);
  const int z = get_group_id(0) * NP + w;
  if (z >= batch) return;
  float b[32];
  __global const float* bz = B + (long)z * 1024 + j;
  #pragma unroll
  for (int k = 0; k < 32; ++k) b[k] = bz[k * 32];
  __global const float4* a = A + (long)z * 256;
  __global float* c = C + (long)z * 1024 + j;
  #pragma unroll 2
  for (int i = 0; i < 32; ++i) {
    float acc = 0;
    #pragma unroll
    for (int q = 0; q < 8; ++q) {
      const float4 av = a[i * 8 + q];
      acc = mad(av.x, b[4 * q], acc); acc = mad(av.y, b[4 * q + 1], acc);
      acc = mad(av.z, b[4 * q + 2], acc); acc = mad(av.w, b[4 * q + 3], acc);
    }
    c[i * 32] = alpha * acc;
  }
}
/* The memory pattern of lane_col without the product: C(i, j) = B(i, j) + A(i, j). */
__kernel __attribute__((reqd_work_group_size(32, NP, 1)))
void lane_copy(__global const float4* restrict A, __global const float* restrict B,
               __global float* restrict C, const int batch, const float alpha) {
  __local float4 As[NP][32][9];
  const int j = get_local_id(0), w = get_local_id(1);
  const int z = get_group_id(0) * NP + w;
  const int live = z < batch;
  float b[32];
  if (live) {
    __global const float4* a = A + (long)z * 256;
    #pragma unroll
    for (int t = 0; t < 8; ++t) { const int q = j + 32 * t; As[w][q / 8][q % 8] = a[q]; }
    __global const float* bz = B + (long)z * 1024 + j;
    #pragma unroll
    for (int k = 0; k < 32; ++k) b[k] = bz[k * 32];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!live) return;
  __global float* c = C + (long)z * 1024 + j;
  #pragma unroll
  for (int i = 0; i < 32; ++i) c[i * 32] = alpha * (b[i] + ((__local float*)As[w][i])[j]);
}
/* R warps a product (R = NP here): A and B staged, each warp 32 / R rows, lane j column j. */
__kernel __attribute__((reqd_work_group_size(32, NP, 1)))
void lane_split(__global const float4* restrict A, __global const float4* restrict B,
                __global float* restrict C, const int batch, const float alpha) {
  __local float4 As[32][9];
  __local float Bs[32][33];
  const int j = get_local_id(0), w = get_local_id(1), tid = w * 32 + j;
  const int z = get_group_id(0);
  __global const float4* a = A + (long)z * 256;
  __global const float4* bg = B + (long)z * 256;
  #pragma unroll
  for (int t = 0; t < 8 / NP; ++t) {
    const int q = tid + 32 * NP * t;
    As[q / 8][q % 8] = a[q];
    const float4 v = bg[q];
    Bs[q / 8][(q % 8) * 4] = v.x; Bs[q / 8][(q % 8) * 4 + 1] = v.y;
    Bs[q / 8][(q % 8) * 4 + 2] = v.z; Bs[q / 8][(q % 8) * 4 + 3] = v.w;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float b[32];
  #pragma unroll
  for (int k = 0; k < 32; ++k) b[k] = Bs[k][j];
  float acc[32 / NP];
  #pragma unroll
  for (int r = 0; r < 32 / NP; ++r) acc[r] = 0;
  #pragma unroll
  for (int q = 0; q < 8; ++q) {
    #pragma unroll
    for (int r = 0; r < 32 / NP; ++r) {
      const float4 av = As[w * (32 / NP) + r][q];
      acc[r] = mad(av.x, b[4 * q], acc[r]); acc[r] = mad(av.y, b[4 * q + 1], acc[r]);
      acc[r] = mad(av.z, b[4 * q + 2], acc[r]); acc[r] = mad(av.w, b[4 * q + 3], acc[r]);
    }
  }
  __global float* c = C + (long)z * 1024 + w * (32 / NP) * 32 + j;
  #pragma unroll
  for (int r = 0; r < 32 / NP; ++r) c[r * 32] = alpha * acc[r];
}
/* lane_split (NP = 2), with the blocked kernel's habits one at a time:
 * Z3: the product from get_group_id(2) (a 3-D grid, as gemm_blocked);
 * KMAJ: A staged k-major (As[k][row]) and read as 4 rows at a k;
 * BLDS: b read from local memory at each k instead of held in registers. */
__kernel __attribute__((reqd_work_group_size(32, 2, 1)))
void lane_var(__global const float4* restrict A, __global const float4* restrict B,
              __global float* restrict C, const int batch, const float alpha) {
#if KMAJ
  __local float As[32][36];
#else
  __local float4 As[32][9];
#endif
  __local float Bs[32][33];
  const int j = get_local_id(0), w = get_local_id(1), tid = w * 32 + j;
#if Z3
  const int z = get_group_id(2);
#else
  const int z = get_group_id(0);
#endif
  __global const float4* a = A + (long)z * 256;
  __global const float4* bg = B + (long)z * 256;
  #pragma unroll
  for (int t = 0; t < 4; ++t) {
    const int q = tid + 64 * t;
    const float4 va = a[q];
#if KMAJ
    const int r = q / 8, k = (q % 8) * 4;
    As[k][r] = va.x; As[k + 1][r] = va.y; As[k + 2][r] = va.z; As[k + 3][r] = va.w;
#else
    As[q / 8][q % 8] = va;
#endif
    const float4 v = bg[q];
    Bs[q / 8][(q % 8) * 4] = v.x; Bs[q / 8][(q % 8) * 4 + 1] = v.y;
    Bs[q / 8][(q % 8) * 4 + 2] = v.z; Bs[q / 8][(q % 8) * 4 + 3] = v.w;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float acc[16];
  #pragma unroll
  for (int r = 0; r < 16; ++r) acc[r] = 0;
#if !BLDS
  float b[32];
  #pragma unroll
  for (int k = 0; k < 32; ++k) b[k] = Bs[k][j];
#define BK(k) b[k]
#else
#define BK(k) Bs[k][j]
#endif
#if KMAJ
  #pragma unroll 8
  for (int k = 0; k < 32; ++k) {
    const float bk = BK(k);
    #pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float4 av = vload4(0, &As[k][w * 16 + 4 * q]);
      acc[4 * q] = mad(av.x, bk, acc[4 * q]); acc[4 * q + 1] = mad(av.y, bk, acc[4 * q + 1]);
      acc[4 * q + 2] = mad(av.z, bk, acc[4 * q + 2]); acc[4 * q + 3] = mad(av.w, bk, acc[4 * q + 3]);
    }
  }
#else
  #pragma unroll
  for (int q = 0; q < 8; ++q) {
    #pragma unroll
    for (int r = 0; r < 16; ++r) {
      const float4 av = As[w * 16 + r][q];
      acc[r] = mad(av.x, BK(4 * q), acc[r]); acc[r] = mad(av.y, BK(4 * q + 1), acc[r]);
      acc[r] = mad(av.z, BK(4 * q + 2), acc[r]); acc[r] = mad(av.w, BK(4 * q + 3), acc[r]);
    }
  }
#endif
  __global float* c = C + (long)z * 1024 + w * 16 * 32 + j;
  #pragma unroll
  for (int r = 0; r < 16; ++r) c[r * 32] = alpha * acc[r];
}
