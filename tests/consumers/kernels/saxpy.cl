/* A consumer's kernel: z = a*x + y, WPT chunks of VW elements per work-item. */
#include "saxpy_common.h"

__kernel void saxpy(const int n, const float a, __global const float* x,
                    __global const float* y, __global float* z) {
  const int base = (int)get_global_id(0) * (WPT * VW);
  for (int i = 0; i < WPT * VW; ++i) {
    const int j = base + i;
    if (j < n) z[j] = SAXPY(a, x[j], y[j]);
  }
}
