// Kernel-alone comparison: matmul_blocked vs gemm_blocked, same point, same data.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s: %d line %d\n", #x, e_, __LINE__); exit(1);} } while (0)
static std::string slurp(const char* p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
int main(int argc, char** argv) {
  const char* plat_sub = getenv("PLAT") ? getenv("PLAT") : "Portable";
  int n = argc > 1 ? atoi(argv[1]) : 2048;
  std::string point = argc > 2 ? argv[2] : "-DMWG=32 -DNWG=64 -DKWG=8 -DMDIMC=4 -DNDIMC=4 -DVWM=1 -DVWN=16 -DSA=0 -DSB=0 -DKWI=8 -DPF=0 -DFMA=1";
  int mwg = 32, nwg = 64, mdimc = 4, ndimc = 4;
  if (argc > 6) { mwg = atoi(argv[3]); nwg = atoi(argv[4]); mdimc = atoi(argv[5]); ndimc = atoi(argv[6]); }
  int pad = getenv("PAD") ? atoi(getenv("PAD")) : 16;
  cl_uint np; clGetPlatformIDs(0, nullptr, &np); std::vector<cl_platform_id> ps(np); clGetPlatformIDs(np, ps.data(), nullptr);
  cl_platform_id pl = nullptr;
  for (auto p : ps) { char b[256]; clGetPlatformInfo(p, CL_PLATFORM_NAME, 256, b, nullptr); if (strstr(b, plat_sub)) pl = p; }
  cl_device_id d; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &d, nullptr));
  cl_int e; cl_context ctx = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e); CK(e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, nullptr, &e); CK(e);
  auto build = [&](const char* file, std::string opts) {
    std::string s = slurp(file); const char* src = s.c_str();
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &e); CK(e);
    opts += " -I/work/main/kernels";
    if (clBuildProgram(p, 1, &d, opts.c_str(), nullptr, nullptr)) { char log[20000]; clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr); fprintf(stderr, "%s\n", log); exit(1); }
    return p;
  };
  cl_program pm = build(getenv("MATMUL") ? getenv("MATMUL") : "/work/main/kernels/matmul_blocked.cl", point + " -DDB=0 -DVWA=1");
  cl_program pg = build(getenv("GEMM") ? getenv("GEMM") : "/work/main/kernels/gemm_blocked.cl", point + " -DPRECISION=32");
  cl_kernel km = clCreateKernel(pm, "matmul_blocked", &e); CK(e);
  cl_kernel kg = clCreateKernel(pg, "gemm_blocked", &e); CK(e);
  int M = n, N = n, K = n, lda = K, ldb = N + pad, ldc = N;
  std::vector<float> A((size_t)M * lda), B((size_t)K * ldb), C((size_t)M * ldc);
  for (auto& x : A) x = rand() / (float)RAND_MAX - 0.5f;
  for (auto& x : B) x = rand() / (float)RAND_MAX - 0.5f;
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, A.size() * 4, A.data(), &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, B.size() * 4, B.data(), &e);
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, C.size() * 4, nullptr, &e);
  cl_mem dummy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &e);
  long zero = 0; int izero = 0;
  int i = 0;
  clSetKernelArg(km, i++, 4, &M); clSetKernelArg(km, i++, 4, &N); clSetKernelArg(km, i++, 4, &K);
  clSetKernelArg(km, i++, 8, &a); clSetKernelArg(km, i++, 8, &b); clSetKernelArg(km, i++, 8, &c);
  clSetKernelArg(km, i++, 8, &zero); clSetKernelArg(km, i++, 4, &lda); clSetKernelArg(km, i++, 8, &zero);
  clSetKernelArg(km, i++, 4, &ldb); clSetKernelArg(km, i++, 4, &ldc); clSetKernelArg(km, i++, 4, &izero);
  float one = 1, fz = 0;
  i = 0;
  clSetKernelArg(kg, i++, 4, &M); clSetKernelArg(kg, i++, 4, &N); clSetKernelArg(kg, i++, 4, &K);
  clSetKernelArg(kg, i++, 4, &izero); clSetKernelArg(kg, i++, 4, &izero);
  clSetKernelArg(kg, i++, 4, &one); clSetKernelArg(kg, i++, 4, &fz);
  clSetKernelArg(kg, i++, 8, &a); clSetKernelArg(kg, i++, 8, &zero); clSetKernelArg(kg, i++, 4, &lda);
  clSetKernelArg(kg, i++, 4, &izero); clSetKernelArg(kg, i++, 8, &zero);
  clSetKernelArg(kg, i++, 8, &b); clSetKernelArg(kg, i++, 8, &zero); clSetKernelArg(kg, i++, 4, &ldb);
  clSetKernelArg(kg, i++, 4, &izero); clSetKernelArg(kg, i++, 8, &zero);
  clSetKernelArg(kg, i++, 8, &c); clSetKernelArg(kg, i++, 8, &zero); clSetKernelArg(kg, i++, 4, &ldc);
  clSetKernelArg(kg, i++, 8, &zero);
  clSetKernelArg(kg, i++, 8, &dummy); clSetKernelArg(kg, i++, 8, &dummy); clSetKernelArg(kg, i++, 4, &izero);
  size_t g[3] = {(size_t)(N / nwg * ndimc), (size_t)(M / mwg * mdimc), 1}, l[3] = {(size_t)ndimc, (size_t)mdimc, 1};
  std::vector<double> tm, tg;
  int reps = getenv("REPS") ? atoi(getenv("REPS")) : 7;
  for (int r = 0; r < reps + 1; ++r) {
    for (int which = 0; which < 2; ++which) {
      auto t0 = std::chrono::steady_clock::now();
      CK(clEnqueueNDRangeKernel(q, which ? kg : km, 2, nullptr, g, l, 0, nullptr, nullptr));
      CK(clFinish(q));
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r) (which ? tg : tm).push_back(ms);
      // check one element
      if (r == 1) {
        CK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, C.size() * 4, C.data(), 0, nullptr, nullptr));
        double ref = 0; int ii = M - 3, jj = N - 5;
        for (int k = 0; k < K; ++k) ref += (double)A[(size_t)ii * lda + k] * B[(size_t)k * ldb + jj];
        if (std::abs(ref - C[(size_t)ii * ldc + jj]) > 1e-2) printf("WRONG %s %f %f\n", which ? "gemm" : "matmul", ref, C[(size_t)ii * ldc + jj]);
      }
    }
  }
  std::sort(tm.begin(), tm.end()); std::sort(tg.begin(), tg.end());
  double f = 2.0 * M * N * K / 1e6;
  printf("n=%d matmul %.2f ms (%.1f GF)  gemm %.2f ms (%.1f GF)  gemm/matmul speed %.3f\n", n, tm[reps / 2], f / tm[reps / 2], tg[reps / 2], f / tg[reps / 2], tm[reps / 2] / tg[reps / 2]);
}
