// Feasibility harness (not part of the tree): small strided-batch GEMM kernels, 32^3.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>
static const char* src = R"CLC(
#ifndef PERSIST
#define PERSIST 1
#endif
__kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void pk(__global const float4* restrict A, __global const float4* restrict B,
        __global float4* restrict C, const int batch) {
  __local float As[32][36];
  __local float4 Bs[32][8];
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * 8 + tx;
  float4 ra[4], rb[4];
  int z = get_group_id(0);
  const int step = PERSIST ? get_num_groups(0) : batch;
  if (z < batch) {
    for (int l = 0; l < 4; ++l) { ra[l] = A[z * 256 + l * 64 + tid]; rb[l] = B[z * 256 + l * 64 + tid]; }
  }
  for (; z < batch; z += step) {
    for (int l = 0; l < 4; ++l) {
      const int idx = l * 64 + tid, r = idx / 8, k = (idx % 8) * 4;
      As[k][r] = ra[l].x; As[k + 1][r] = ra[l].y; As[k + 2][r] = ra[l].z; As[k + 3][r] = ra[l].w;
      Bs[idx / 8][idx % 8] = rb[l];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int zn = z + step;
    if (zn < batch) {
      for (int l = 0; l < 4; ++l) { ra[l] = A[zn * 256 + l * 64 + tid]; rb[l] = B[zn * 256 + l * 64 + tid]; }
    }
    float4 acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
#pragma unroll 8
    for (int k = 0; k < 32; ++k) {
      const float4 b = Bs[k][tx];
      const float4 a = vload4(0, &As[k][ty * 4]);
      acc0 = mad((float4)(a.x), b, acc0); acc1 = mad((float4)(a.y), b, acc1);
      acc2 = mad((float4)(a.z), b, acc2); acc3 = mad((float4)(a.w), b, acc3);
    }
    __global float4* c = C + z * 256 + ty * 4 * 8 + tx;
    c[0] = acc0; c[8] = acc1; c[16] = acc2; c[24] = acc3;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
__kernel void stream(__global const float4* restrict A, __global const float4* restrict B,
                     __global float4* restrict C, const int n) {
  const int i = get_global_id(0);
  if (i < n) C[i] = A[i] + B[i];
}
)CLC";
#define CK(e) do { cl_int _e = (e); if (_e) { printf("error %d at %d\n", _e, __LINE__); exit(1); } } while (0)
int main(int argc, char** argv) {
  const int batch = argc > 1 ? atoi(argv[1]) : 10000;
  cl_platform_id pl; CK(clGetPlatformIDs(1, &pl, nullptr));
  cl_device_id dev; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err; cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CK(err);
  const size_t n = size_t(batch) * 1024;
  std::vector<float> ha(n), hb(n), hc(n);
  std::mt19937 rng(1); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : ha) x = u(rng); for (auto& x : hb) x = u(rng);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, ha.data(), &err); CK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, hb.data(), &err); CK(err);
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &err); CK(err);
  auto timeit = [&](cl_kernel k, size_t g, size_t l, bool two_d, const char* name, bool check) {
    int bt = batch; int n4 = int(n / 4);
    CK(clSetKernelArg(k, 0, sizeof a, &a)); CK(clSetKernelArg(k, 1, sizeof b, &b));
    CK(clSetKernelArg(k, 2, sizeof c, &c));
    CK(clSetKernelArg(k, 3, sizeof(int), two_d ? &bt : &n4));
    size_t gs[2] = {g * (two_d ? 8 : 1), two_d ? 8 : 1}, ls[2] = {two_d ? 8 : l, two_d ? 8 : 1};
    std::vector<double> t;
    for (int r = 0; r < 40; ++r) {
      if (check && r == 0) { float nan = NAN; CK(clEnqueueFillBuffer(q, c, &nan, 4, 0, n * 4, 0, nullptr, nullptr)); CK(clFinish(q)); }
      auto t0 = std::chrono::steady_clock::now();
      CK(clEnqueueNDRangeKernel(q, k, 2, nullptr, gs, ls, 0, nullptr, nullptr));
      CK(clFinish(q));
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      if (check && r == 0) {
        CK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, n * 4, hc.data(), 0, nullptr, nullptr));
        double worst = 0;
        for (int z : {0, 1, batch / 2, batch - 1})
          for (int i = 0; i < 32; ++i) for (int j = 0; j < 32; ++j) {
            double s = 0; for (int p = 0; p < 32; ++p) s += double(ha[z*1024+i*32+p]) * hb[z*1024+p*32+j];
            double e = std::fabs(s - hc[z*1024+i*32+j]); if (!(e <= worst)) worst = e;
          }
        printf("%s check: worst abs error %g\n", name, worst);
      }
    }
    std::sort(t.begin(), t.end());
    printf("%-28s G=%6zu  median %7.1f us  min %7.1f us  (%.2f TB/s of 12 KB a product at median)\n", name, g, t[20], t[0], batch * 12288.0 / t[20] / 1e6);
  };
  for (const char* opts : {"-DPERSIST=1", "-DPERSIST=0"}) {
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err); CK(err);
    err = clBuildProgram(p, 1, &dev, opts, nullptr, nullptr);
    if (err) { char log[20000]; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr); printf("%s\n", log); return 1; }
    cl_kernel k = clCreateKernel(p, "pk", &err); CK(err);
    if (opts[10] == '1') {
      for (int per : {4, 8, 12, 16, 24, 32}) timeit(k, 132 * per, 64, true, "persistent", per == 8);
    } else {
      timeit(k, batch, 64, true, "one product a group", true);
      cl_kernel s = clCreateKernel(p, "stream", &err); CK(err);
      timeit(s, (n / 4 + 255) / 256 * 256, 256, false, "stream A+B->C", false);
    }
  }
  return 0;
}
