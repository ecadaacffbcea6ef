// tk BUNDLE TIER N...: time every variant of a matmul_blocked-like bundle by
// its launch events (median of 7 after a warm-up, round robin), and check
// each variant's C against the first's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>
#include "fatcl/compiler.hpp"
#include "fatcl/loader.hpp"
#include "fatcl/store.hpp"
#include "fatcl/cache.hpp"
using namespace fatcl;
int main(int argc, char** argv) {
  InspectReport rep = inspect_paths({argv[1]});
  if (rep.families.empty()) { fprintf(stderr, "no family\n"); return 1; }
  Family fam(std::make_shared<const FamilyBytes>(std::move(rep.families[0].bytes)));
  std::vector<cl::Platform> ps; cl::Platform::get(&ps);
  std::vector<cl::Device> ds; ps[0].getDevices(CL_DEVICE_TYPE_ALL, &ds);
  cl::Context ctx(ds[0]); cl::CommandQueue q(ctx, ds[0], CL_QUEUE_PROFILING_ENABLE);
  std::vector<LoadedKernel> ks;
  for (const Variant& v : fam.manifest().variants) {
    LoadOptions o; o.variant = v.name; o.tier = parse_tier(argv[2]); o.use_tuning = false;
    o.store = std::make_shared<Store>(); o.cache = std::make_shared<ProgramCache>();
    try { ks.push_back(load(ctx, ds[0], fam, o)); } catch (const std::exception& e) { printf("%s: %s\n", v.name.c_str(), e.what()); }
  }
  const int reps = argc > 3 && atoi(argv[3]) < 0 ? -atoi(argv[3]) : 7;
  for (int i = 3; i < argc; ++i) {
    const int n = atoi(argv[i]);
    if (n <= 0) continue;
    const size_t bytes = size_t(n) * n * 4;
    std::vector<float> host(size_t(n) * n);
    for (size_t r = 0; r < size_t(n); ++r)
      for (size_t c = 0; c < size_t(n); ++c) {  // symmetric: A^T = A
        const size_t j = std::min(r, c) * n + std::max(r, c);
        host[r * n + c] = float((j * 2654435761u) % 1000) / 1000.0f - 0.5f;
      }
    cl::Buffer a(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host.data());
    cl::Buffer b(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host.data());
    cl::Buffer c(ctx, CL_MEM_READ_WRITE, bytes);
    std::vector<std::vector<double>> ms(ks.size());
    std::vector<float> ref, got(size_t(n) * n);
    std::vector<double> err(ks.size(), 0);
    for (int rep = 0; rep <= reps; ++rep) {
      for (size_t v = 0; v < ks.size(); ++v) {
        const Variant& var = ks[v].variant;
        cl::Kernel k = ks[v].kernel;
        cl_long zero = 0; cl_int N = n, acc = 0;
        k.setArg(0, N); k.setArg(1, N); k.setArg(2, N); k.setArg(3, a); k.setArg(4, b); k.setArg(5, c);
        k.setArg(6, zero); k.setArg(7, N); k.setArg(8, zero); k.setArg(9, N); k.setArg(10, N); k.setArg(11, acc);
        const size_t mwg = var.param("MWG"), nwg = var.param("NWG"), md = var.param("MDIMC"), nd = var.param("NDIMC");
        if (rep == 0) { float nan = NAN; q.enqueueFillBuffer(c, nan, 0, bytes); }
        cl::Event e;
        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange((n + nwg - 1) / nwg * nd, (n + mwg - 1) / mwg * md), cl::NDRange(nd, md), nullptr, &e);
        e.wait();
        if (rep == 0) {
          q.enqueueReadBuffer(c, CL_TRUE, 0, bytes, got.data());
          if (v == 0) ref = got;
          for (size_t j = 0; j < got.size(); ++j) {
            const double d = std::fabs(double(got[j]) - ref[j]) / (1.0 + std::fabs(ref[j]));
            if (!(d <= err[v])) err[v] = std::isnan(d) ? INFINITY : d;
          }
        } else {
          ms[v].push_back((e.getProfilingInfo<CL_PROFILING_COMMAND_END>() - e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-6);
        }
      }
    }
    for (size_t v = 0; v < ks.size(); ++v) {
      std::sort(ms[v].begin(), ms[v].end());
      const double med = ms[v][ms[v].size() / 2];
      printf("%d %s %s %.3f ms (min %.3f) %.1f TFLOP/s err %.1e\n", n, ks[v].variant.name.c_str(), to_string(ks[v].tier), med, ms[v][0], 2.0 * n * n * n / med / 1e9, err[v]);
      fflush(stdout);
    }
  }
}
