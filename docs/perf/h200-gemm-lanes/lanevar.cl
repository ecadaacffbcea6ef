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
