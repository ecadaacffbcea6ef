// A product that uses fatcl: its own kernel family (saxpy, built by
// fatcl_add_kernel_variants) loaded on a device and checked against a
// double-precision reference, and the bundled SGEMM (fatcl::matmul).
//   consumer [PLATFORM-SUBSTRING [EXPECTED-TIER]]
// Prints "consumer OK" and exits 0 when both computed right.
#include <chrono>
#include <cmath>
#include <fatcl/loader.hpp>
#include <fatcl/matmul.hpp>
#include <fatcl/online.hpp>
#include <fatcl/store.hpp>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <thread>

#include "saxpy.hpp"
#include "saxpy_lean.hpp"
#include "saxpy_sealed.hpp"

namespace {

// Runs a loaded saxpy kernel on fresh data and checks it against a
// double-precision reference.
bool compute_saxpy(const cl::Context& context, const cl::CommandQueue& queue,
                   const fatcl::LoadedKernel& k, const std::string& name) {
  const int n = 10007;
  const float a = 1.5f;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n), y(n), z(n);
  for (int i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);
  // Sizes in bytes as size_t: with two ints, clang takes opencl.hpp's
  // iterator constructor of cl::Buffer as an equal candidate (ambiguous).
  const std::size_t bytes = sizeof(float) * n;
  cl::Buffer dx(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, x.data());
  cl::Buffer dy(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, y.data());
  cl::Buffer dz(context, CL_MEM_WRITE_ONLY, bytes);
  queue.enqueueFillBuffer(dz, std::numeric_limits<float>::quiet_NaN(), 0, bytes);
  cl::Kernel kernel = k.kernel;
  kernel.setArg(0, n);
  kernel.setArg(1, a);
  kernel.setArg(2, dx);
  kernel.setArg(3, dy);
  kernel.setArg(4, dz);
  const long long per_item = k.variant.param("WPT") * k.variant.param("VW");
  const std::size_t items = static_cast<std::size_t>((n + per_item - 1) / per_item);
  if (queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(items)) != CL_SUCCESS ||
      queue.enqueueReadBuffer(dz, CL_TRUE, 0, bytes, z.data()) != CL_SUCCESS) {
    std::cout << name << ": the launch failed\n";
    return false;
  }
  double diff = 0, norm = 0;
  for (int i = 0; i < n; ++i) {
    const double want = double(a) * x[i] + y[i];
    diff += (z[i] - want) * (z[i] - want);
    norm += want * want;
  }
  const double error = std::sqrt(diff / norm);
  std::cout << name << " " << k.variant.name << " [" << fatcl::to_string(k.tier)
            << "]: relative error " << error << "\n";
  return error <= 1e-6;
}

bool run_saxpy(const cl::Context& context, const cl::Device& device, const cl::CommandQueue& queue,
               const std::string& expected_tier) {
  const fatcl::Family family(fatcl_kernels::saxpy());
  const fatcl::LoadedKernel k = fatcl::load(context, device, family);
  std::cout << k.explanation.to_string();
  if (!expected_tier.empty() && expected_tier != fatcl::to_string(k.tier)) {
    std::cout << "expected the " << expected_tier << " tier\n";
    return false;
  }
  return compute_saxpy(context, queue, k, "saxpy");
}

// The product's family measured like the SGEMM: its timing launch lets
// fatcl::tune_family rank its variants on this device, the entry then
// chooses what load() loads, and learning online picks among them on real
// calls, every call checked.
fatcl::TimedProblem saxpy_timing(const cl::Context& context, const cl::Device&,
                                 const std::vector<std::size_t>& problem) {
  const std::size_t n = problem.at(0);
  const std::size_t bytes = sizeof(float) * n;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> data(n);
  for (float& v : data) v = dist(rng);
  const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  auto x = std::make_shared<cl::Buffer>(context, in, bytes, data.data());
  auto y = std::make_shared<cl::Buffer>(context, in, bytes, data.data());
  auto z = std::make_shared<cl::Buffer>(context, CL_MEM_WRITE_ONLY, bytes);
  fatcl::TimedProblem t;
  t.work = 2.0 * double(n);
  t.run = [=](const cl::CommandQueue& queue, const cl::Kernel& k, const fatcl::Variant& v) {
    cl::Kernel kernel = k;
    kernel.setArg(0, int(n));
    kernel.setArg(1, 1.5f);
    kernel.setArg(2, *x);
    kernel.setArg(3, *y);
    kernel.setArg(4, *z);
    const std::size_t per_item = std::size_t(v.param("WPT") * v.param("VW"));
    const cl_int err = queue.enqueueNDRangeKernel(kernel, cl::NullRange,
                                                  cl::NDRange((n + per_item - 1) / per_item));
    return err == CL_SUCCESS ? std::string() : "enqueue: " + fatcl::cl_status_name(err);
  };
  return t;
}

bool run_saxpy_measured(const cl::Context& context, const cl::Device& device,
                        const cl::CommandQueue& queue) {
  fatcl::FamilyDescription d;
  d.timing = saxpy_timing;
  const fatcl::Family family(fatcl_kernels::saxpy(), d);
  auto store = std::make_shared<fatcl::Store>();
  fatcl::FamilyTuneOptions o;
  o.store = store;
  o.repetitions = 3;
  // Small enough for Oclgrind, which interprets every launch.
  const std::vector<std::size_t> problem{1 << 14};
  const fatcl::FamilyTuneReport tuned = fatcl::tune_family(context, device, family, {problem}, o);
  for (const std::string& f : tuned.failures) std::cout << "saxpy tune: " << f << "\n";
  if (tuned.entries.size() != 1 || tuned.entries[0].ranking.empty() ||
      tuned.entries[0].ranking[0].gflops <= 0) {
    std::cout << "saxpy tune: no entry\n";
    return false;
  }
  const fatcl::TuningEntry& e = tuned.entries[0];
  std::cout << "saxpy tuned: " << e.ranking.size() << " variants, fastest " << e.ranking[0].variant
            << " (" << e.ranking[0].gflops << " GFLOP/s)\n";
  fatcl::LoadOptions lo;
  lo.store = store;
  lo.problem = problem;
  const fatcl::LoadedKernel k = fatcl::load(context, device, family, lo);
  if (k.variant.name != e.ranking[0].variant || !k.tuning_entry) {
    std::cout << "saxpy: the entry's fastest did not load (" << k.variant.name << ")\n";
    return false;
  }
  if (!compute_saxpy(context, queue, k, "saxpy (tuned)")) return false;
  // Online, in another store: the first calls time the candidates, built
  // on a thread of their own here (the Matmul tests cover building first).
  fatcl::LoadOptions online_load;
  online_load.store = std::make_shared<fatcl::Store>();
  online_load.problem = problem;
  const fatcl::LoadedKernel first = fatcl::load(context, device, family, online_load);
  const fatcl::DeviceCaps caps = fatcl::DeviceCaps::query(device);
  fatcl::OnlineChoice online(
      context, device, family, problem, first,
      fatcl::online_candidates(family, caps, online_load, first.variant.name, 3), online_load, [] {
        fatcl::OnlineOptions o;
        o.build_first = false;
        return o;
      }());
  for (int call = 0; call < 200 && !online.settled(); ++call) {
    const fatcl::OnlineChoice::Turn turn = online.next();
    const auto start = std::chrono::steady_clock::now();
    if (!compute_saxpy(context, queue, *turn.kernel, "saxpy (online)")) return false;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    online.record(turn, ms, 2.0 * 10007);
    if (!turn.timed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::cout << online.report() << "\n";
  return online.settled() && online_load.store->tuning().size() == 1;
}

// The NO_SOURCE family: no OpenCL C in the product. Where the device takes
// SPIR-V it loads from its module, on NVIDIA's OpenCL from its PTX (where
// the build made PTX), and computes right; elsewhere loading fails saying
// that the source was left out on purpose.
bool run_sealed(const cl::Context& context, const cl::Device& device,
                const cl::CommandQueue& queue) {
  const fatcl::Family family(fatcl_kernels::saxpy_sealed());
  if (!family.source().empty() || family.manifest().source_embedded) {
    std::cout << "saxpy_sealed: the bundle carries OpenCL C\n";
    return false;
  }
  const fatcl::DeviceCaps caps = fatcl::DeviceCaps::query(device);
  const bool has_ptx = family.manifest().variants.front().ptx.has_value();
  const std::optional<fatcl::Tier> expected =
      caps.accepts_spirv("1.0")     ? std::optional<fatcl::Tier>(fatcl::Tier::SpirV)
      : caps.is_nvidia() && has_ptx ? std::optional<fatcl::Tier>(fatcl::Tier::Ptx)
                                    : std::nullopt;
  try {
    const fatcl::LoadedKernel k = fatcl::load(context, device, family);
    return expected && k.tier == *expected && compute_saxpy(context, queue, k, "saxpy_sealed");
  } catch (const fatcl::Error& e) {
    const std::string what = e.what();
    std::cout << "saxpy_sealed: " << what.substr(0, what.find('\n')) << "\n";
    return !expected && what.find("left out on purpose (NO_SOURCE)") != std::string::npos;
  }
}

// The SPIR-V-only family (TIERS spirv): it loads from its module where the
// device takes SPIR-V; elsewhere loading fails saying that the source and
// the PTX were left out on purpose, and the explanation says so per tier.
bool run_lean(const cl::Context& context, const cl::Device& device,
              const cl::CommandQueue& queue) {
  const fatcl::Family family(fatcl_kernels::saxpy_lean());
  const fatcl::Manifest& m = family.manifest();
  if (!m.leaves_out("ptx") || !m.leaves_out("source") || m.leaves_out("spirv") ||
      m.variants.front().ptx) {
    std::cout << "saxpy_lean: the manifest does not say TIERS spirv\n";
    return false;
  }
  const bool spirv = fatcl::DeviceCaps::query(device).accepts_spirv("1.0");
  try {
    const fatcl::LoadedKernel k = fatcl::load(context, device, family);
    const std::string text = k.explanation.to_string();
    return spirv && k.tier == fatcl::Tier::SpirV &&
           text.find("the PTX was left out of the bundle on purpose") != std::string::npos &&
           compute_saxpy(context, queue, k, "saxpy_lean");
  } catch (const fatcl::Error& e) {
    const std::string what = e.what();
    std::cout << "saxpy_lean: " << what.substr(0, what.find('\n')) << "\n";
    return !spirv && what.find("PTX: left out on purpose (TIERS)") != std::string::npos;
  }
}

bool run_matmul(const cl::Context& context, const cl::Device& device,
                const cl::CommandQueue& queue) {
  const fatcl::Matmul matmul(context, device);
  const std::size_t m = 37, n = 41, k = 29;
  std::mt19937 rng(std::random_device{}());
  const fatcl::MatmulProblem p =
      fatcl::make_matmul_problem(context, m, n, k, fatcl::MatmulInputs::Random, &rng);
  const fatcl::CheckedRun r = fatcl::run_checked(queue, p, [&] {
    matmul.enqueue(queue, p.a, p.b, p.c, m, n, k);
    return std::string();
  });
  const double error = r.relative_error;
  if (!r.ran) std::cout << "matmul did not run: " << r.failure << "\n";
  std::cout << "matmul " << matmul.loaded().variant.name << ": relative error " << error << "\n";
  return r.ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string platform = argc > 1 ? argv[1] : "";
    const std::string tier = argc > 2 ? argv[2] : "";
    const cl::Device device = fatcl::pick_device(platform);
    const cl::Context context(device);
    const cl::CommandQueue queue(context, device);
    const bool ok = run_saxpy(context, device, queue, tier) &&
                    run_saxpy_measured(context, device, queue) &&
                    run_sealed(context, device, queue) && run_lean(context, device, queue) &&
                    run_matmul(context, device, queue);
    std::cout << (ok ? "consumer OK" : "consumer FAILED") << "\n";
    return ok ? 0 : 1;
  } catch (const fatcl::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
