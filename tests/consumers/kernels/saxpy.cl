/* A consumer's kernel: y = a*x + y, WPT elements per work-item. */
#include "saxpy_common.h"

__kernel void saxpy(const int n, const float a, __global const float* x, __global float* y) {
  const int base = (int)get_global_id(0) * WPT;
  for (int i = 0; i < WPT; ++i) {
    if (base + i < n) y[base + i] = SAXPY(a, x[base + i], y[base + i]);
  }
}
