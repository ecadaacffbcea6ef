// Explicit float16 vectors: a work-item owns NV vectors of 16 columns of a chunk, all MT rows
// in blocks of MB; work-group of WGS work-items side by side along N.
__kernel void rows(const int M, const int N, const int K, __global const float* restrict A,
          __global const float* restrict B, __global float* restrict C) {
  const int w = get_global_id(0);      // which stripe of WC columns
  const int n0 = w * WC;
  for (int kb = 0; kb < K; kb += KB) {
    for (int nc = 0; nc < WC; nc += 16 * NV) {
      const int n = n0 + nc;
      for (int mb = 0; mb < MT; mb += MB) {
        float16 acc[MB][NV];
        if (kb == 0) {
          _Pragma("unroll") for (int i = 0; i < MB; ++i) _Pragma("unroll") for (int j = 0; j < NV; ++j) acc[i][j] = 0.0f;
        } else {
          _Pragma("unroll") for (int i = 0; i < MB; ++i) _Pragma("unroll") for (int j = 0; j < NV; ++j) acc[i][j] = vload16(0, C + (mb + i) * N + n + 16 * j);
        }
        for (int kk = 0; kk < KB; ++kk) {
          float16 b[NV];
          _Pragma("unroll") for (int j = 0; j < NV; ++j) b[j] = vload16(0, B + (kb + kk) * N + n + 16 * j);
          _Pragma("unroll") for (int i = 0; i < MB; ++i) {
            const float av = A[(mb + i) * K + kb + kk];
            _Pragma("unroll") for (int j = 0; j < NV; ++j) acc[i][j] = fma((float16)av, b[j], acc[i][j]);
          }
        }
        _Pragma("unroll") for (int i = 0; i < MB; ++i) _Pragma("unroll") for (int j = 0; j < NV; ++j) vstore16(acc[i][j], 0, C + (mb + i) * N + n + 16 * j);
      }
    }
  }
}
