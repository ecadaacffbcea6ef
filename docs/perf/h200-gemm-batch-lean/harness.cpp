// 32^3 strided batch: candidate gemm_blocked points (PTX from the bundle and
// from source) vs fatcl auto, CLBlast and a stream kernel; back-to-back host
// clock and profiled kernel time.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <clblast.h>
#include <dirent.h>
#ifdef WITH_FATCL
#include <fatcl/gemm.hpp>
#endif
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
using Clock = std::chrono::steady_clock;
#define CK(e) do { cl_int _e = (e); if (_e) { printf("error %d at line %d\n", _e, __LINE__); exit(1); } } while (0)
static std::string slurp(const std::string& p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
static int param(const std::string& name, const char* key) {
  std::string k = std::string("_") + key; size_t at = name.find(k);
  while (at != std::string::npos && !isdigit(name[at + k.size()])) at = name.find(k, at + 1);
  return atoi(name.c_str() + at + k.size());
}
int main(int argc, char** argv) {
  const int batch = argc > 1 ? atoi(argv[1]) : 10000, n = 32, reps = argc > 2 ? atoi(argv[2]) : 9;
  const char* dir = argc > 3 ? argv[3] : "b32/bundle";
  cl_platform_id pl; CK(clGetPlatformIDs(1, &pl, nullptr));
  cl_device_id dev; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err; cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CK(err);
  cl_command_queue qp = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err); CK(err);
  const size_t per = n * n, total = per * batch;
  std::vector<float> ha(total), hb(total), hc(total);
  std::mt19937 rng(7); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : ha) x = u(rng);
  for (auto& x : hb) x = u(rng);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, ha.data(), &err); CK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, hb.data(), &err); CK(err);
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total * 4, nullptr, &err); CK(err);
  cl_mem dummy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err); CK(err);
  struct Cand { std::string name; std::function<void(cl_command_queue, cl_event*)> run; };
  std::vector<Cand> cands;
#ifdef WITH_FATCL
  cands.push_back({"fatcl auto", [&](cl_command_queue qq, cl_event* ev) {
    auto s = fatcl::GemmStridedBatched<float>(fatcl::Layout::kRowMajor, fatcl::Transpose::kNo, fatcl::Transpose::kNo, n, n, n, 1.f, a, 0, n, per, b, 0, n, per, 0.f, c, 0, n, per, batch, &qq, ev);
    if (s != fatcl::StatusCode::kSuccess) { printf("fatcl %d\n", int(s)); exit(1); } }});
#endif
  cands.push_back({"CLBlast", [&](cl_command_queue qq, cl_event* ev) {
    auto s = clblast::GemmStridedBatched<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, n, n, n, 1.f, a, 0, n, per, b, 0, n, per, 0.f, c, 0, n, per, batch, &qq, ev);
    if (s != clblast::StatusCode::kSuccess) { printf("clblast %d\n", int(s)); exit(1); } }});
  {
    const char* src = "__kernel void stream(__global const float4* restrict A, __global const float4* restrict B, __global float4* restrict C, const int n) { const int i = get_global_id(0); if (i < n) C[i] = A[i] + B[i]; }";
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err); CK(err);
    CK(clBuildProgram(p, 1, &dev, "", nullptr, nullptr));
    cl_kernel k = clCreateKernel(p, "stream", &err); CK(err);
    int n4 = int(total / 4);
    CK(clSetKernelArg(k, 0, sizeof a, &a)); CK(clSetKernelArg(k, 1, sizeof b, &b)); CK(clSetKernelArg(k, 2, sizeof c, &c)); CK(clSetKernelArg(k, 3, 4, &n4));
    cands.push_back({"stream A+B->C (no check)", [=](cl_command_queue qq, cl_event* ev) {
      size_t g = (total / 4 + 255) / 256 * 256, l = 256;
      CK(clEnqueueNDRangeKernel(qq, k, 1, nullptr, &g, &l, 0, nullptr, ev)); }});
  }
  {
    const std::string lean = slurp(std::string(dir) + "/../lean.cl");
    for (const char* kname : {"lane_split"}) {
      for (int np : {1, 2, 4, 8}) {
        if (std::string(kname) == "lane_split" && np == 1) continue;
        if (std::string(kname) != "lane_split" && np == 8) continue;
        if (lean.empty()) break;
        const char* s = lean.c_str(); cl_program p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err); CK(err);
        std::string opts = "-DNP=" + std::to_string(np);
        if (clBuildProgram(p, 1, &dev, opts.c_str(), nullptr, nullptr)) { char log[20000]; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr); printf("lean build failed: %s\n", log); break; }
        cl_kernel k = clCreateKernel(p, kname, &err); CK(err);
        int bt = batch; float alpha = 1;
        CK(clSetKernelArg(k, 0, sizeof a, &a)); CK(clSetKernelArg(k, 1, sizeof b, &b)); CK(clSetKernelArg(k, 2, sizeof c, &c)); CK(clSetKernelArg(k, 3, 4, &bt)); CK(clSetKernelArg(k, 4, 4, &alpha));
        const size_t groups = std::string(kname) == "lane_split" ? size_t(batch) : size_t((batch + np - 1) / np);
        size_t g[2] = {groups * 32, size_t(np)}, l[2] = {32, size_t(np)};
        cands.push_back({std::string(kname) + " NP=" + std::to_string(np), [=](cl_command_queue qq, cl_event* ev) { CK(clEnqueueNDRangeKernel(qq, k, 2, nullptr, g, l, 0, nullptr, ev)); }});
      }
    }
  }
  {
    const std::string lean = slurp(std::string(dir) + "/../lean.cl");
    for (const char* opt : {"-DZ3=0 -DKMAJ=0 -DBLDS=0", "-DZ3=1 -DKMAJ=0 -DBLDS=0", "-DZ3=0 -DKMAJ=1 -DBLDS=0", "-DZ3=0 -DKMAJ=0 -DBLDS=1", "-DZ3=0 -DKMAJ=1 -DBLDS=1", "-DZ3=1 -DKMAJ=1 -DBLDS=1"}) {
      if (lean.empty()) break;
      const char* s = lean.c_str(); cl_program p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err); CK(err);
      if (clBuildProgram(p, 1, &dev, opt, nullptr, nullptr)) { printf("lane_var build failed\n"); break; }
      cl_kernel k = clCreateKernel(p, "lane_var", &err); CK(err);
      int bt = batch; float alpha = 1;
      CK(clSetKernelArg(k, 0, sizeof a, &a)); CK(clSetKernelArg(k, 1, sizeof b, &b)); CK(clSetKernelArg(k, 2, sizeof c, &c)); CK(clSetKernelArg(k, 3, 4, &bt)); CK(clSetKernelArg(k, 4, 4, &alpha));
      const bool z3 = std::string(opt).find("Z3=1") != std::string::npos;
      size_t g[3] = {z3 ? 32 : size_t(batch) * 32, 2, z3 ? size_t(batch) : 1}, l[3] = {32, 2, 1};
      cands.push_back({std::string("lane_var ") + opt, [=](cl_command_queue qq, cl_event* ev) { CK(clEnqueueNDRangeKernel(qq, k, 3, nullptr, g, l, 0, nullptr, ev)); }});
    }
  }
  // Candidates: every .ptx in dir, as PTX and from source.
  std::vector<std::string> names;
  if (DIR* d = opendir(dir)) { while (dirent* e = readdir(d)) { std::string s = e->d_name; if (s.size() > 4 && s.substr(s.size() - 4) == ".ptx") names.push_back(s.substr(0, s.size() - 4)); } closedir(d); }
  std::sort(names.begin(), names.end());
  std::vector<std::string> extra_dirs;
  if (argc > 4) { std::string d2 = argv[4]; if (DIR* d = opendir(d2.c_str())) { while (dirent* e = readdir(d)) { std::string s = e->d_name; if (s.size() > 4 && s.substr(s.size() - 4) == ".ptx") names.push_back("../" + d2.substr(d2.rfind('/') + 1) + "/" + s.substr(0, s.size() - 4)); } closedir(d); } }
  const std::string source = slurp(std::string(dir) + "/../gemm_blocked.cl");
  for (const std::string& v : names) {
    for (int from_source = 0; from_source < 2; ++from_source) {
      if (from_source && (source.empty() || v.find("_R") != std::string::npos)) continue;
      cl_program p;
      std::string opts = "";
      if (!from_source) {
        std::string ptx = slurp(std::string(dir) + "/" + v + ".ptx");
        const unsigned char* bin = (const unsigned char*)ptx.data(); size_t len = ptx.size(); cl_int st;
        p = clCreateProgramWithBinary(ctx, 1, &dev, &len, &bin, &st, &err); if (err) { printf("no PTX here\n"); continue; }
      } else {
        const char* s = source.c_str(); p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err); CK(err);
        for (const char* key : {"PRECISION", "MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VWM", "VWN", "SA", "SB", "KWI", "PF", "FMA", "DB", "VWA"})
          opts += std::string(" -D") + key + "=" + std::to_string(param(v, key));
      }
      if (clBuildProgram(p, 1, &dev, opts.c_str(), nullptr, nullptr)) { printf("build failed %s\n", v.c_str()); continue; }
      cl_kernel k = clCreateKernel(p, "gemm_blocked", &err); CK(err);
      auto setargs = [=](cl_kernel k) {
      int M = n, N = n, K = n, zero = 0, lda = n, ldb = n, ldc = n; float alpha = 1, beta = 0; long off = 0, stride = per;
      int ai = 0;
      CK(clSetKernelArg(k, ai++, 4, &M)); CK(clSetKernelArg(k, ai++, 4, &N)); CK(clSetKernelArg(k, ai++, 4, &K));
      CK(clSetKernelArg(k, ai++, 4, &zero)); CK(clSetKernelArg(k, ai++, 4, &zero));
      CK(clSetKernelArg(k, ai++, 4, &alpha)); CK(clSetKernelArg(k, ai++, 4, &beta));
      CK(clSetKernelArg(k, ai++, sizeof a, &a)); CK(clSetKernelArg(k, ai++, 8, &off)); CK(clSetKernelArg(k, ai++, 4, &lda)); CK(clSetKernelArg(k, ai++, 4, &zero)); CK(clSetKernelArg(k, ai++, 8, &stride));
      CK(clSetKernelArg(k, ai++, sizeof b, &b)); CK(clSetKernelArg(k, ai++, 8, &off)); CK(clSetKernelArg(k, ai++, 4, &ldb)); CK(clSetKernelArg(k, ai++, 4, &zero)); CK(clSetKernelArg(k, ai++, 8, &stride));
      CK(clSetKernelArg(k, ai++, sizeof c, &c)); CK(clSetKernelArg(k, ai++, 8, &off)); CK(clSetKernelArg(k, ai++, 4, &ldc)); CK(clSetKernelArg(k, ai++, 8, &stride));
      CK(clSetKernelArg(k, ai++, sizeof dummy, &dummy)); CK(clSetKernelArg(k, ai++, sizeof dummy, &dummy)); CK(clSetKernelArg(k, ai++, 4, &zero));
      };
      setargs(k);
      const int mw = param(v, "MWG"), nw = param(v, "NWG"), md = param(v, "MDIMC"), nd = param(v, "NDIMC");
      size_t g[3] = {size_t((n + nw - 1) / nw * nd), size_t((n + mw - 1) / mw * md), size_t(batch)}, l[3] = {size_t(nd), size_t(md), 1};
      std::string label = v.substr(v.find("_FMA0_") + 6) + (from_source ? " src" : " ptx");
      cands.push_back({label, [=](cl_command_queue qq, cl_event* ev) { CK(clEnqueueNDRangeKernel(qq, k, 3, nullptr, g, l, 0, nullptr, ev)); }});
      if (!from_source && v.find("KWG8_MDIMC8_NDIMC8_KWI8_PF1_DB0_VWA1") != std::string::npos && v.find("_R") == std::string::npos) {
        cl_kernel k2 = clCreateKernel(p, "gemm_blocked", &err); CK(err);
        cl_kernel k3 = clCreateKernel(p, "gemm_blocked", &err); CK(err);
        cands.push_back({label + " args+event each call", [=](cl_command_queue qq, cl_event* ev) { setargs(k3); cl_event mine = nullptr; CK(clEnqueueNDRangeKernel(qq, k3, 3, nullptr, g, l, 0, nullptr, ev ? ev : &mine)); if (mine) clReleaseEvent(mine); }});
        cands.push_back({label + " args each call", [=](cl_command_queue qq, cl_event* ev) { setargs(k2); CK(clEnqueueNDRangeKernel(qq, k2, 3, nullptr, g, l, 0, nullptr, ev)); }});
      }
    }
  }
  // Check each (but the stream) once, C poisoned.
  for (auto& cd : cands) {
    if (cd.name.find("lane_copy") != std::string::npos) continue;
    if (cd.name.find("no check") != std::string::npos) continue;
    float nan = NAN; CK(clEnqueueFillBuffer(q, c, &nan, 4, 0, total * 4, 0, nullptr, nullptr)); CK(clFinish(q));
    cd.run(q, nullptr); CK(clFinish(q));
    CK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, total * 4, hc.data(), 0, nullptr, nullptr));
    double worst = 0;
    for (int z : {0, 1, batch / 2, batch - 1})
      for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) {
        double s = 0; for (int p = 0; p < n; ++p) s += double(ha[z * per + i * n + p]) * hb[z * per + p * n + j];
        double e = std::fabs(s - hc[z * per + i * n + j]); if (!(e <= worst)) worst = e;
      }
    if (!(worst < 1e-4)) { printf("WRONG %s: %g\n", cd.name.c_str(), worst); cd.name += " WRONG"; }
  }
  // Timing: rounds interleaved; b2b (200 calls between finishes) and profiled.
  std::vector<std::vector<double>> b2b(cands.size()), prof(cands.size());
  for (int r = 0; r < reps; ++r) {
    for (size_t i = 0; i < cands.size(); ++i) {
      CK(clFinish(q));
      const int calls = 200;
      auto t0 = Clock::now();
      for (int j = 0; j < calls; ++j) cands[i].run(q, nullptr);
      CK(clFinish(q));
      b2b[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
      for (int j = 0; j < 3; ++j) {
        cl_event ev = nullptr; cands[i].run(qp, &ev); CK(clWaitForEvents(1, &ev));
        cl_ulong s0, s1; clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, 8, &s0, nullptr); clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, 8, &s1, nullptr);
        prof[i].push_back((s1 - s0) / 1e3); clReleaseEvent(ev);
      }
    }
  }
  printf("batch %d of 32^3, median of %d rounds (b2b: 200 calls between finishes; kernel: profiled, fatcl/CLBlast last kernel only)\n", batch, reps);
  for (size_t i = 0; i < cands.size(); ++i) {
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    printf("%-58s b2b %7.2f us  kernel %7.2f us  %.2f TB/s b2b\n", cands[i].name.c_str(), med(b2b[i]), med(prof[i]), batch * 12288.0 / med(b2b[i]) / 1e6);
  }
}
