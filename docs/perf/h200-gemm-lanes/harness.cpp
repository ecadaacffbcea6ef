// Times candidate kernels for a strided batch of 32^3 row-major NN products
// (beta 0) back to back (200 calls between clFinish, median of rounds,
// interleaved), beside CLBlast's GemmStridedBatched; each checked once.
// cands.txt lines: label|file|ptx or src|kernel|NDIMC|MDIMC|gemm or lean|build options
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <clblast.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
using Clock = std::chrono::steady_clock;
#define CK(e) do { cl_int _e = (e); if (_e) { printf("error %d at line %d\n", _e, __LINE__); exit(1); } } while (0)
static std::string slurp(const std::string& p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
static std::vector<std::string> split(const std::string& s, char c) { std::vector<std::string> out; std::string cur; for (char x : s) { if (x == c) { out.push_back(cur); cur.clear(); } else cur += x; } out.push_back(cur); return out; }
int main(int argc, char** argv) {
  const int batch = atoi(argv[1]), reps = atoi(argv[2]); const std::string list = argv[3];
  const int n = 32;
  cl_platform_id pl; CK(clGetPlatformIDs(1, &pl, nullptr));
  cl_device_id dev; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err; cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CK(err);
  const size_t per = n * n, total = per * batch;
  std::vector<float> ha(total), hb(total), hc(total);
  std::mt19937 rng(7); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : ha) x = u(rng);
  for (auto& x : hb) x = u(rng);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, ha.data(), &err); CK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, hb.data(), &err); CK(err);
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total * 4, nullptr, &err); CK(err);
  cl_mem dummy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err); CK(err);
  struct Cand { std::string name; std::function<void(cl_command_queue)> run; };
  std::vector<Cand> cands;
  cands.push_back({"CLBlast", [&](cl_command_queue qq) {
    auto s = clblast::GemmStridedBatched<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, n, n, n, 1.f, a, 0, n, per, b, 0, n, per, 0.f, c, 0, n, per, batch, &qq, nullptr);
    if (s != clblast::StatusCode::kSuccess) { printf("clblast %d\n", int(s)); exit(1); } }});
  {
    const char* src = "__kernel void stream(__global const float4* restrict A, __global const float4* restrict B, __global float4* restrict C, const int n) { const int i = get_global_id(0); if (i < n) C[i] = A[i] + B[i]; }";
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err); CK(err);
    CK(clBuildProgram(p, 1, &dev, "", nullptr, nullptr));
    cl_kernel k = clCreateKernel(p, "stream", &err); CK(err);
    int n4 = int(total / 4);
    CK(clSetKernelArg(k, 0, sizeof a, &a)); CK(clSetKernelArg(k, 1, sizeof b, &b)); CK(clSetKernelArg(k, 2, sizeof c, &c)); CK(clSetKernelArg(k, 3, 4, &n4));
    cands.push_back({"stream A+B->C (no check)", [=](cl_command_queue qq) {
      size_t g = (total / 4 + 255) / 256 * 256, l = 256;
      CK(clEnqueueNDRangeKernel(qq, k, 1, nullptr, &g, &l, 0, nullptr, nullptr)); }});
  }
  std::istringstream lines(slurp(list));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split(line, '|');
    const std::string label = f[0], file = f[1], how = f[2], kname = f[3], args = f[6], opts = f[7];
    const size_t nd = std::stoul(f[4]), md = std::stoul(f[5]);
    cl_program p;
    const std::string text = slurp(file);
    if (how == "ptx") {
      const unsigned char* bin = (const unsigned char*)text.data(); size_t len = text.size(); cl_int st;
      p = clCreateProgramWithBinary(ctx, 1, &dev, &len, &bin, &st, &err); CK(err);
    } else {
      const char* s = text.c_str(); p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err); CK(err);
    }
    if (clBuildProgram(p, 1, &dev, opts.c_str(), nullptr, nullptr)) {
      char log[20000] = {0}; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr);
      printf("build failed %s: %.2000s\n", label.c_str(), log); continue; }
    cl_kernel k = clCreateKernel(p, kname.c_str(), &err); CK(err);
    if (args == "lean") {
      int bt = batch; float alpha = 1;
      CK(clSetKernelArg(k, 0, sizeof a, &a)); CK(clSetKernelArg(k, 1, sizeof b, &b)); CK(clSetKernelArg(k, 2, sizeof c, &c)); CK(clSetKernelArg(k, 3, 4, &bt)); CK(clSetKernelArg(k, 4, 4, &alpha));
    } else {
      int M = n, N = n, K = n, zero = 0, lda = n, ldb = n, ldc = n; float alpha = 1, beta = 0; long off = 0, stride = per;
      int ai = 0;
      CK(clSetKernelArg(k, ai++, 4, &M)); CK(clSetKernelArg(k, ai++, 4, &N)); CK(clSetKernelArg(k, ai++, 4, &K));
      CK(clSetKernelArg(k, ai++, 4, &zero)); CK(clSetKernelArg(k, ai++, 4, &zero));
      CK(clSetKernelArg(k, ai++, 4, &alpha)); CK(clSetKernelArg(k, ai++, 4, &beta));
      CK(clSetKernelArg(k, ai++, sizeof a, &a)); CK(clSetKernelArg(k, ai++, 8, &off)); CK(clSetKernelArg(k, ai++, 4, &lda)); CK(clSetKernelArg(k, ai++, 4, &zero)); CK(clSetKernelArg(k, ai++, 8, &stride));
      CK(clSetKernelArg(k, ai++, sizeof b, &b)); CK(clSetKernelArg(k, ai++, 8, &off)); CK(clSetKernelArg(k, ai++, 4, &ldb)); CK(clSetKernelArg(k, ai++, 4, &zero)); CK(clSetKernelArg(k, ai++, 8, &stride));
      CK(clSetKernelArg(k, ai++, sizeof c, &c)); CK(clSetKernelArg(k, ai++, 8, &off)); CK(clSetKernelArg(k, ai++, 4, &ldc)); CK(clSetKernelArg(k, ai++, 8, &stride));
      CK(clSetKernelArg(k, ai++, sizeof dummy, &dummy)); CK(clSetKernelArg(k, ai++, sizeof dummy, &dummy)); CK(clSetKernelArg(k, ai++, 4, &zero));
    }
    size_t g[3] = {nd, md, size_t(batch)}, l[3] = {nd, md, 1};
    cands.push_back({label, [=](cl_command_queue qq) { CK(clEnqueueNDRangeKernel(qq, k, 3, nullptr, g, l, 0, nullptr, nullptr)); }});
  }
  for (auto& cd : cands) {
    if (cd.name.find("no check") != std::string::npos) continue;
    float nan = NAN; CK(clEnqueueFillBuffer(q, c, &nan, 4, 0, total * 4, 0, nullptr, nullptr)); CK(clFinish(q));
    cd.run(q); CK(clFinish(q));
    CK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, total * 4, hc.data(), 0, nullptr, nullptr));
    double worst = 0;
    for (int z : {0, 1, batch / 2, batch - 1})
      for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) {
        double s = 0; for (int p = 0; p < n; ++p) s += double(ha[z * per + i * n + p]) * hb[z * per + p * n + j];
        double e = std::fabs(s - hc[z * per + i * n + j]); if (!(e <= worst)) worst = e;
      }
    if (!(worst < 1e-4)) { printf("WRONG %s: %g\n", cd.name.c_str(), worst); cd.name += " WRONG"; }
  }
  std::vector<std::vector<double>> b2b(cands.size());
  for (int r = 0; r < reps; ++r) {
    for (size_t i = 0; i < cands.size(); ++i) {
      CK(clFinish(q));
      const int calls = 200;
      auto t0 = Clock::now();
      for (int j = 0; j < calls; ++j) cands[i].run(q);
      CK(clFinish(q));
      b2b[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    }
  }
  printf("batch %d of 32^3, median of %d rounds, 200 calls between finishes\n", batch, reps);
  for (size_t i = 0; i < cands.size(); ++i) {
    auto v = b2b[i]; std::sort(v.begin(), v.end());
    printf("%-40s %7.2f us (min %7.2f, max %7.2f)\n", cands[i].name.c_str(), v[v.size() / 2], v.front(), v.back());
  }
}
