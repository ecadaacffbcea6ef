// h CANDS REPS MxNxK...: times SGEMM kernels with matmul_blocked's arguments
// (row-major C = A * B) by their launch events, round robin, median of REPS
// after a warm-up; checks each C against a double reference at 256 sampled
// elements. CANDS lines: label|file|ptx or src|kernel|lx|ly|BM|BN|options
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#define CK(e) do { cl_int _e = (e); if (_e) { printf("error %d at line %d\n", _e, __LINE__); exit(1); } } while (0)
static std::string slurp(const std::string& p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
static std::vector<std::string> split(const std::string& s, char c) { std::vector<std::string> out; std::string cur; for (char x : s) { if (x == c) { out.push_back(cur); cur.clear(); } else cur += x; } out.push_back(cur); return out; }
struct Cand { std::string label; cl_kernel k; size_t lx, ly, bm, bn; };
int main(int argc, char** argv) {
  const std::string list = argv[1]; const int reps = atoi(argv[2]);
  cl_platform_id pl; CK(clGetPlatformIDs(1, &pl, nullptr));
  cl_device_id dev; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err; cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err); CK(err);
  std::vector<Cand> cands;
  std::istringstream lines(slurp(list));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split(line, '|');
    const std::string label = f[0], file = f[1], how = f[2], kname = f[3], opts = f[8];
    cl_program p;
    const std::string text = slurp(file);
    if (text.empty()) { printf("no file %s\n", file.c_str()); continue; }
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
    cands.push_back({label, k, std::stoul(f[4]), std::stoul(f[5]), std::stoul(f[6]), std::stoul(f[7])});
  }
  std::mt19937 rng(11); std::uniform_real_distribution<float> u(-1, 1);
  for (int s = 3; s < argc; ++s) {
    int M, N, K; if (sscanf(argv[s], "%dx%dx%d", &M, &N, &K) != 3) { M = N = K = atoi(argv[s]); }
    std::vector<float> ha(size_t(M) * K), hb(size_t(K) * N), hc(size_t(M) * N);
    for (auto& x : ha) x = u(rng);
    for (auto& x : hb) x = u(rng);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, ha.size() * 4, ha.data(), &err); CK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, hb.size() * 4, hb.data(), &err); CK(err);
    cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, hc.size() * 4, nullptr, &err); CK(err);
    std::vector<std::pair<int, int>> samples;
    for (int i = 0; i < 256; ++i) samples.push_back({int(rng() % M), int(rng() % N)});
    samples.push_back({M - 1, N - 1});
    std::vector<double> ref;
    for (auto [i, j] : samples) { double t = 0; for (int p = 0; p < K; ++p) t += double(ha[size_t(i) * K + p]) * hb[size_t(p) * N + j]; ref.push_back(t); }
    std::vector<std::vector<double>> ms(cands.size());
    std::vector<double> worst(cands.size(), 0);
    for (int r = 0; r <= reps; ++r) {
      for (size_t v = 0; v < cands.size(); ++v) {
        Cand& cd = cands[v];
        cl_long zero = 0; cl_int acc = 0;
        CK(clSetKernelArg(cd.k, 0, 4, &M)); CK(clSetKernelArg(cd.k, 1, 4, &N)); CK(clSetKernelArg(cd.k, 2, 4, &K));
        CK(clSetKernelArg(cd.k, 3, sizeof a, &a)); CK(clSetKernelArg(cd.k, 4, sizeof b, &b)); CK(clSetKernelArg(cd.k, 5, sizeof c, &c));
        CK(clSetKernelArg(cd.k, 6, 8, &zero)); CK(clSetKernelArg(cd.k, 7, 4, &K)); CK(clSetKernelArg(cd.k, 8, 8, &zero));
        CK(clSetKernelArg(cd.k, 9, 4, &N)); CK(clSetKernelArg(cd.k, 10, 4, &N)); CK(clSetKernelArg(cd.k, 11, 4, &acc));
        if (r == 0) { float nan = NAN; CK(clEnqueueFillBuffer(q, c, &nan, 4, 0, hc.size() * 4, 0, nullptr, nullptr)); }
        size_t g[2] = {(N + cd.bn - 1) / cd.bn * cd.lx, (M + cd.bm - 1) / cd.bm * cd.ly}, l[2] = {cd.lx, cd.ly};
        cl_event e;
        CK(clEnqueueNDRangeKernel(q, cd.k, 2, nullptr, g, l, 0, nullptr, &e));
        CK(clWaitForEvents(1, &e));
        cl_ulong t0, t1;
        CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &t0, nullptr));
        CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &t1, nullptr));
        clReleaseEvent(e);
        if (r == 0) {
          CK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, hc.size() * 4, hc.data(), 0, nullptr, nullptr));
          for (size_t i = 0; i < samples.size(); ++i) {
            const double d = std::fabs(hc[size_t(samples[i].first) * N + samples[i].second] - ref[i]) / std::sqrt(double(K));
            if (!(d <= worst[v])) worst[v] = d;
          }
        } else ms[v].push_back((t1 - t0) * 1e-9);
      }
    }
    printf("%dx%dx%d (median of %d)\n", M, N, K, reps);
    for (size_t v = 0; v < cands.size(); ++v) {
      auto t = ms[v]; std::sort(t.begin(), t.end());
      const double med = t[t.size() / 2];
      printf("  %-58s %7.2f TFLOP/s  (min %.3f ms, max %.3f ms)%s\n", cands[v].label.c_str(),
             2.0 * M * N * K / med * 1e-12, t.front() * 1e3, t.back() * 1e3,
             worst[v] < 1e-5 ? "" : (" WRONG " + std::to_string(worst[v])).c_str());
    }
    fflush(stdout);
    clReleaseMemObject(a); clReleaseMemObject(b); clReleaseMemObject(c);
  }
}
