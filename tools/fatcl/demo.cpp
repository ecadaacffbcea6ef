#include "demo.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>

#include "fatcl/matmul.hpp"
#ifdef FATCL_WITH_CLBLAST
#include <clblast.h>
#endif

namespace fatcl::tool {
namespace {

constexpr double kTolerance = 1e-5;

std::string platform_name(const cl::Platform& p) {
  std::string name;
  p.getInfo(CL_PLATFORM_NAME, &name);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

std::vector<cl::Platform> platforms() {
  std::vector<cl::Platform> list;
  cl_int err = cl::Platform::get(&list);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || list.empty()) {
    throw Error(
        "no OpenCL platform found (is an ICD installed? OCL_ICD_VENDORS=" +
        std::string(std::getenv("OCL_ICD_VENDORS") ? std::getenv("OCL_ICD_VENDORS") : "unset") +
        ")");
  }
  check_cl(err, "clGetPlatformIDs");
  return list;
}

std::vector<cl::Device> devices_of(const cl::Platform& p) {
  std::vector<cl::Device> list;
  cl_int err = p.getDevices(CL_DEVICE_TYPE_ALL, &list);
  if (err == CL_DEVICE_NOT_FOUND) return {};
  check_cl(err, "clGetDeviceIDs");
  return list;
}

// Median over `reps` runs of `run`, by the host clock around a finished
// queue. Not device timestamps: CLBlast's GEMM may run several kernels and
// hands back the event of the last one only, and rusticl 22.3's timestamps
// read zero; one clock for every row keeps the ratios honest.
double median_ms(const cl::CommandQueue& queue, const std::function<cl::Event()>& run, int reps) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    check_cl(queue.finish(), "clFinish");
    auto start = std::chrono::steady_clock::now();
    run();
    check_cl(queue.finish(), "clFinish");
    auto stop = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int list_devices() {
  auto list = platforms();
  for (std::size_t p = 0; p < list.size(); ++p) {
    auto devices = devices_of(list[p]);
    std::printf("platform %zu: %s (%zu device%s)\n", p, platform_name(list[p]).c_str(),
                devices.size(), devices.size() == 1 ? "" : "s");
    for (std::size_t d = 0; d < devices.size(); ++d) {
      std::printf("  device %zu: %s\n", d, DeviceCaps::query(devices[d]).summary().c_str());
    }
  }
  return 0;
}

int run_demo(const DemoOptions& options) {
  if (options.m == 0 || options.n == 0 || options.k == 0) {
    throw Error("demo: M, N and K must be at least 1 (got " + std::to_string(options.m) + "x" +
                std::to_string(options.n) + "x" + std::to_string(options.k) + ")");
  }
  std::printf("OpenCL devices:\n");
  list_devices();

  cl::Platform platform;
  std::vector<cl::Device> devices;
  for (const cl::Platform& p : platforms()) {
    if (!options.platform.empty() && platform_name(p).find(options.platform) == std::string::npos) {
      continue;
    }
    devices = devices_of(p);
    if (!devices.empty()) {
      platform = p;
      break;
    }
  }
  if (devices.empty()) {
    throw Error("no OpenCL device" + (options.platform.empty() ? std::string("")
                                                               : " on a platform matching \"" +
                                                                     options.platform + "\""));
  }
  if (options.device < 0 || static_cast<std::size_t>(options.device) >= devices.size()) {
    throw Error("--device " + std::to_string(options.device) + ": the platform has " +
                std::to_string(devices.size()) + " device(s)");
  }
  cl::Device device = devices[options.device];
  cl_int err = CL_SUCCESS;
  cl::Context context(device, nullptr, nullptr, nullptr, &err);
  check_cl(err, "clCreateContext");
  cl::CommandQueue queue(context, device, 0, &err);
  check_cl(err, "clCreateCommandQueue");

  MatmulOptions chosen_options;
  chosen_options.variant = options.variant;
  if (!options.tier.empty()) chosen_options.tier = parse_tier(options.tier);
  auto load_start = std::chrono::steady_clock::now();
  Matmul tiled(context, device, chosen_options);
  double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  std::printf("\nfatcl's choice (loaded in %.0f ms):\n%s", load_ms,
              tiled.explanation().to_string().c_str());
  MatmulOptions naive_options;
  naive_options.kernel = MatmulKernel::Naive;
  Matmul naive(context, device, naive_options);

  const std::size_t m = options.m, n = options.n, k = options.k;
  std::random_device seed_source;
  const unsigned seed = seed_source();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  cl::Buffer da(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 4, a.data(), &err);
  check_cl(err, "clCreateBuffer(A)");
  cl::Buffer db(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data(), &err);
  check_cl(err, "clCreateBuffer(B)");
  cl::Buffer dc(context, CL_MEM_READ_WRITE, c.size() * 4, nullptr, &err);
  check_cl(err, "clCreateBuffer(C)");

  std::printf("\nC = A*B with M=%zu N=%zu K=%zu, inputs uniform in [-1,1] (seed %u)\n", m, n, k,
              seed);
  // The reference costs M*N*K double multiply-adds on one core: past 2^30 of
  // them, check a spread of whole rows of C (always the first and last).
  std::vector<std::size_t> rows_checked;
  const std::size_t row_budget = std::max<std::size_t>(1, (std::size_t(1) << 30) / (n * k));
  const std::size_t step = std::max<std::size_t>(1, m / std::min(m, row_budget));
  for (std::size_t i = 0; i < m; i += step) rows_checked.push_back(i);
  if (rows_checked.back() != m - 1) rows_checked.push_back(m - 1);
  std::vector<float> a_rows;
  for (std::size_t i : rows_checked) a_rows.insert(a_rows.end(), &a[i * k], &a[i * k] + k);
  const std::vector<double> reference = reference_matmul(a_rows, b, rows_checked.size(), n, k);
  const std::string scope = rows_checked.size() == m ? std::string("all rows")
                                                     : std::to_string(rows_checked.size()) +
                                                           " of " + std::to_string(m) + " rows";
  std::vector<float> c_rows(rows_checked.size() * n);
  int failures = 0;
  auto verify = [&](const char* what, const std::function<cl::Event()>& run) {
    check_cl(queue.enqueueFillBuffer(dc, nan, 0, c.size() * 4), "clEnqueueFillBuffer(C, NaN)");
    run();
    check_cl(queue.enqueueReadBuffer(dc, CL_TRUE, 0, c.size() * 4, c.data()),
             "clEnqueueReadBuffer(C)");
    for (std::size_t r = 0; r < rows_checked.size(); ++r) {
      std::copy_n(&c[rows_checked[r] * n], n, &c_rows[r * n]);
    }
    const double error = relative_error(c_rows, reference);
    const bool ok = error <= kTolerance;
    failures += ok ? 0 : 1;
    std::printf("check %-34s relative error %.2e vs double-precision CPU reference (%s): %s\n",
                what, error, scope.c_str(), ok ? "OK" : "FAILED (tolerance 1e-5)");
  };
  auto run_tiled = [&] { return tiled.enqueue(queue, da, db, dc, m, n, k); };
  auto run_naive = [&] { return naive.enqueue(queue, da, db, dc, m, n, k); };
  const std::string tiled_name =
      "fatcl " + tiled.loaded().variant.name + " [" + to_string(tiled.loaded().tier) + "]";
  verify(tiled_name.c_str(), run_tiled);
  verify("naive", run_naive);

  struct Row {
    std::string name;
    double ms;
  };
  std::vector<Row> rows;
  rows.push_back({tiled_name, median_ms(queue, run_tiled, options.repetitions)});
  rows.push_back({"naive (global memory)", median_ms(queue, run_naive, options.repetitions)});
#ifdef FATCL_WITH_CLBLAST
  if (options.clblast) {
    cl_command_queue raw_queue = queue();
    auto run_clblast = [&] {
      cl_event e = nullptr;
      auto status = clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                  clblast::Transpose::kNo, m, n, k, 1.0f, da(), 0, k, db(), 0, n,
                                  0.0f, dc(), 0, n, &raw_queue, &e);
      if (status != clblast::StatusCode::kSuccess) {
        throw Error("CLBlast SGEMM failed with status " + std::to_string(static_cast<int>(status)));
      }
      return cl::Event(e, false);
    };
    verify("CLBlast SGEMM", run_clblast);
    rows.push_back(
        {"CLBlast SGEMM (Debian libclblast)", median_ms(queue, run_clblast, options.repetitions)});
  }
#endif
  const double flop = 2.0 * double(m) * double(n) * double(k);
  std::printf(
      "\ntiming, median of %d runs after a checked warm-up (host clock around a finished "
      "queue):\n",
      options.repetitions);
  for (const Row& r : rows) {
    std::printf("  %-40s %10.2f ms %9.2f GFLOP/s\n", r.name.c_str(), r.ms, flop / (r.ms * 1e6));
  }
  std::printf("  fatcl / naive: %.2fx", rows[1].ms / rows[0].ms);
  if (rows.size() > 2) std::printf("   fatcl / CLBlast: %.2fx", rows[2].ms / rows[0].ms);
  std::printf("   (speed ratios, same run)\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace fatcl::tool
