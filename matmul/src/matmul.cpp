#include "fatcl/matmul.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "fatcl/store.hpp"
#include "matmul_blocked.hpp"
#include "matmul_naive.hpp"
#include "matmul_tiled.hpp"

namespace fatcl {
namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

long long param_or(const Variant& v, std::string_view key, long long fallback) {
  for (const auto& [k, value] : v.params) {
    if (k == key) return value;
  }
  return fallback;
}

// The blocked family's ranking before any measurement: fma() only where the
// device fuses it (else emulated), then closest to the point measured fastest
// on the device's class (H200 for GPUs, PoCL on a 2-core AVX-512 CPU for
// CPUs; docs/PERFORMANCE.md), then less local memory.
const ParamPoint kBlockedGpuDefault = {{"MWG", 128},  {"NWG", 128}, {"KWG", 16}, {"MDIMC", 16},
                                       {"NDIMC", 16}, {"VWM", 4},   {"VWN", 4},  {"SA", 1},
                                       {"SB", 1},     {"KWI", 2},   {"PF", 1}};
const ParamPoint kBlockedCpuDefault = {{"MWG", 32},  {"NWG", 64}, {"KWG", 8},  {"MDIMC", 4},
                                       {"NDIMC", 4}, {"VWM", 1},  {"VWN", 16}, {"SA", 0},
                                       {"SB", 0},    {"KWI", 8},  {"PF", 0}};

Ranking blocked_ranking() {
  Ranking r;
  r.score = [](const Variant& v, const DeviceCaps& caps) {
    const ParamPoint& best = caps.is_gpu() ? kBlockedGpuDefault : kBlockedCpuDefault;
    // An emulated fma() costs more than any shape gains.
    if (param_or(v, "FMA", 0) == 1 && !caps.fused_multiply_add) return -100.0;
    double score = 0;
    for (const auto& [k, value] : best) score += param_or(v, k, -1) == value ? 1 : 0;
    if (caps.fused_multiply_add) score += param_or(v, "FMA", 0) == 1 ? 0.5 : 0;
    return score - double(v.local_mem_bytes) * 1e-9;
  };
  r.rule =
      "fma() only where the device fuses it (CL_FP_FMA), then parameters closest to the point "
      "measured fastest on this class of device (GPU: 128x128 tile, 16x16 work-items, K slices of "
      "16 staged in local memory, next slice prefetched; "
      "CPU: 32x64 tile, 4x4 work-items each keeping 8 rows x 16 columns in registers, nothing "
      "staged), then less local memory";
  return r;
}

cl::Event launch(const cl::CommandQueue& queue, const cl::Kernel& kernel, const LaunchGeometry& g,
                 const cl::Buffer& a, const cl::Buffer& b, const cl::Buffer& c, std::size_t m,
                 std::size_t n, std::size_t k, std::size_t lda, std::size_t ldb, std::size_t ldc,
                 std::size_t k_offset, bool accumulate, const std::vector<cl_event>& wait) {
  const cl_int M = static_cast<cl_int>(m), N = static_cast<cl_int>(n), K = static_cast<cl_int>(k);
  const cl_int LDA = static_cast<cl_int>(lda), LDB = static_cast<cl_int>(ldb),
               LDC = static_cast<cl_int>(ldc), ACC = accumulate ? 1 : 0;
  const cl_long a_offset = static_cast<cl_long>(k_offset);
  const cl_long b_offset = static_cast<cl_long>(k_offset) * static_cast<cl_long>(ldb);
  cl_kernel raw = kernel();
  cl_mem mems[3] = {a(), b(), c()};
  const struct {
    std::size_t size;
    const void* value;
    const char* name;
  } args[] = {{sizeof M, &M, "M"},
              {sizeof N, &N, "N"},
              {sizeof K, &K, "K"},
              {sizeof(cl_mem), &mems[0], "A"},
              {sizeof(cl_mem), &mems[1], "B"},
              {sizeof(cl_mem), &mems[2], "C"},
              {sizeof a_offset, &a_offset, "a_offset"},
              {sizeof LDA, &LDA, "lda"},
              {sizeof b_offset, &b_offset, "b_offset"},
              {sizeof LDB, &LDB, "ldb"},
              {sizeof LDC, &LDC, "ldc"},
              {sizeof ACC, &ACC, "accumulate"}};
  for (cl_uint i = 0; i < sizeof args / sizeof args[0]; ++i) {
    check_cl(clSetKernelArg(raw, i, args[i].size, args[i].value),
             std::string("clSetKernelArg(") + args[i].name + ")");
  }
  cl_event done = nullptr;
  check_cl(clEnqueueNDRangeKernel(queue(), raw, 2, nullptr, g.global.data(), g.local.data(),
                                  static_cast<cl_uint>(wait.size()),
                                  wait.empty() ? nullptr : wait.data(), &done),
           "clEnqueueNDRangeKernel(" + std::to_string(g.local[0]) + "x" +
               std::to_string(g.local[1]) + " work-groups)");
  return cl::Event(done, false);
}

}  // namespace

const char* to_string(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::Auto:
      return "auto";
    case MatmulKernel::Blocked:
      return "blocked";
    case MatmulKernel::Tiled:
      return "tiled";
    case MatmulKernel::Naive:
      return "naive";
  }
  return "?";
}

const Family& matmul_family(MatmulKernel kernel) {
  static const Family blocked(kernels::matmul_blocked(), {blocked_ranking(), matmul_trial_launch});
  static const Family tiled(kernels::matmul_tiled(),
                            {Ranking::by_work_group_items(), matmul_trial_launch});
  static const Family naive(kernels::matmul_naive(), {Ranking{}, matmul_trial_launch});
  switch (kernel) {
    case MatmulKernel::Blocked:
      return blocked;
    case MatmulKernel::Tiled:
      return tiled;
    case MatmulKernel::Naive:
      return naive;
    case MatmulKernel::Auto:
      break;
  }
  throw Error("matmul_family: Auto is a choice among families, not a family");
}

MatmulKernel matmul_kernel_of(const std::string& variant) {
  for (MatmulKernel k : {MatmulKernel::Blocked, MatmulKernel::Tiled, MatmulKernel::Naive}) {
    for (const Variant& v : matmul_family(k).manifest().variants) {
      if (v.name == variant) return k;
    }
  }
  throw Error("no bundled matmul family (blocked, tiled, naive) has a variant \"" +
              variant.substr(0, 100) + "\"");
}

LaunchGeometry matmul_geometry(const Variant& variant, std::size_t m, std::size_t n,
                               std::array<std::size_t, 2> free_local) {
  LaunchGeometry g;
  const long long nwg = param_or(variant, "NWG", 0), mwg = param_or(variant, "MWG", 0);
  if (nwg > 0 && mwg > 0) {
    // Blocked: one NDIMC x MDIMC work-group per NWG x MWG tile of C.
    const std::size_t ndimc = static_cast<std::size_t>(variant.param("NDIMC"));
    const std::size_t mdimc = static_cast<std::size_t>(variant.param("MDIMC"));
    g.local = {ndimc, mdimc};
    g.global = {(n + nwg - 1) / nwg * ndimc, (m + mwg - 1) / mwg * mdimc};
    return g;
  }
  const auto& reqd = variant.reqd_work_group_size;
  g.local = reqd[0] ? std::array<std::size_t, 2>{reqd[0], reqd[1]} : free_local;
  // One work-item per element of C.
  g.global = {round_up(n, g.local[0]), round_up(m, g.local[1])};
  return g;
}

std::string matmul_trial_launch(const cl::Context& context, const cl::Device& device,
                                const cl::Kernel& kernel, const Variant& variant) {
  // Two work-group tiles and a ragged edge in every direction.
  const LaunchGeometry unit = matmul_geometry(variant, 1, 1, {1, 1});
  const std::size_t tile_n = std::max<std::size_t>(1, param_or(variant, "NWG", unit.local[0]));
  const std::size_t tile_m = std::max<std::size_t>(1, param_or(variant, "MWG", unit.local[1]));
  const std::size_t kwg = static_cast<std::size_t>(param_or(variant, "KWG", 1));
  const std::size_t m = 2 * tile_m + 1, n = 2 * tile_n + 1,
                    k = 2 * std::max({tile_m, tile_n, kwg}) + 3;
  std::vector<float> a(m * k), b(k * n), c(m * n, std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(int(i * 7 % 9) - 4);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(int(i * 5 % 7) - 3);
  cl_int err = CL_SUCCESS;
  auto buffer = [&](std::vector<float>& v) {
    return cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(float),
                      v.data(), &err);
  };
  cl::Buffer da = buffer(a), db = buffer(b), dc = buffer(c);
  if (err != CL_SUCCESS) return "clCreateBuffer failed: " + cl_status_name(err);
  cl::CommandQueue queue(context, device, 0, &err);
  if (err != CL_SUCCESS) return "clCreateCommandQueue failed: " + cl_status_name(err);
  try {
    launch(queue, kernel, matmul_geometry(variant, m, n, unit.local), da, db, dc, m, n, k, k, n, n,
           0, false, {});
  } catch (const Error& e) {
    return e.what();
  }
  err = queue.enqueueReadBuffer(dc, CL_TRUE, 0, c.size() * sizeof(float), c.data());
  if (err != CL_SUCCESS) return "the launch did not complete: " + cl_status_name(err);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::size_t p = 0; p < k; ++p) want += double(a[i * k + p]) * b[p * n + j];
      if (!(c[i * n + j] == want)) {
        return "wrong result at C[" + std::to_string(i) + "][" + std::to_string(j) +
               "]: " + std::to_string(c[i * n + j]) + " instead of " + std::to_string(want);
      }
    }
  }
  return "";
}

struct Matmul::Impl {
  LoadedKernel loaded;
  MatmulKernel kernel = MatmulKernel::Blocked;
  std::array<std::size_t, 2> free_local{16, 16};
  std::size_t k_per_launch = kMatmulMaxKPerLaunch;
  cl::Context context;
  cl::Device device;
  MatmulOptions options;
  DeviceCaps caps;
  // Kernels chosen per size class (copies of `loaded` where it is the one).
  std::map<std::string, std::unique_ptr<LoadedKernel>> by_class;
};

std::size_t matmul_k_per_launch(const DeviceCaps& caps) {
  return has_driver_quirk(caps, "loop-limit-65536") ? kMatmulMaxKPerLaunchLoopLimited
                                                    : kMatmulMaxKPerLaunch;
}

Matmul::Matmul(const cl::Context& context, const cl::Device& device, const MatmulOptions& options)
    : impl_(std::make_unique<Impl>()) {
  check_context_and_device(context, device, "Matmul");
  impl_->context = context;
  impl_->device = device;
  impl_->options = options;
  if (!impl_->options.store) impl_->options.store = Store::user();
  LoadOptions load_options;
  load_options.variant = options.variant;
  load_options.tier = options.tier;
  load_options.store = impl_->options.store;
  load_options.cache = options.cache;
  load_options.use_tuning = options.use_tuning;
  load_options.self_check = options.self_check;
  std::vector<MatmulKernel> families;
  if (!options.variant.empty()) {
    const MatmulKernel of = matmul_kernel_of(options.variant);
    if (options.kernel != MatmulKernel::Auto && options.kernel != of) {
      throw Error("MatmulOptions: variant " + options.variant + " is of the " + to_string(of) +
                  " family, the options ask for the " + to_string(options.kernel) + " one");
    }
    families = {of};
  } else if (options.kernel == MatmulKernel::Auto) {
    families = {MatmulKernel::Blocked, MatmulKernel::Tiled, MatmulKernel::Naive};
  } else {
    families = {options.kernel};
  }
  // The chain ends in the naive kernel: each family that loads nothing
  // leaves one line in the explanation of the one that does.
  std::vector<Step> passed_over;
  for (std::size_t f = 0; f < families.size(); ++f) {
    const Family& family = matmul_family(families[f]);
    try {
      impl_->loaded = load(context, device, family, load_options);
      impl_->kernel = families[f];
      break;
    } catch (const Error& e) {
      if (f + 1 == families.size()) throw;
      std::string first = e.what();
      first = first.substr(0, first.find('\n'));
      passed_over.push_back({family.manifest().family, std::nullopt, Step::Outcome::Failed,
                             "no variant of the family loads (" + first + ")"});
    }
  }
  auto& steps = impl_->loaded.explanation.steps;
  steps.insert(steps.end(), passed_over.begin(), passed_over.end());

  const DeviceCaps caps = DeviceCaps::query(device);
  impl_->caps = caps;
  impl_->k_per_launch = matmul_k_per_launch(caps);

  // The naive kernel leaves its work-group open: the largest square power
  // of two the kernel and the device allow, at most 16x16.
  const auto& sizes = caps.max_work_item_sizes;
  std::size_t s = 16;
  while (s > 1 && (s * s > impl_->loaded.kernel_work_group_size || s > sizes[0] || s > sizes[1])) {
    s /= 2;
  }
  impl_->free_local = {s, s};
}

Matmul::~Matmul() = default;
Matmul::Matmul(Matmul&&) noexcept = default;
Matmul& Matmul::operator=(Matmul&&) noexcept = default;

const LoadedKernel& Matmul::loaded() const { return impl_->loaded; }

const LoadedKernel& Matmul::loaded_for(std::size_t m, std::size_t n, std::size_t k) const {
  Impl& d = *impl_;
  if (!d.options.variant.empty() || !d.options.use_tuning || m == 0 || n == 0 || k == 0) {
    return d.loaded;
  }
  const std::vector<std::size_t> problem{m, n, k};
  const std::string cls = size_class(problem);
  auto it = d.by_class.find(cls);
  if (it == d.by_class.end()) {
    std::unique_ptr<LoadedKernel> chosen;
    const Family& family = matmul_family(d.kernel);
    const TuningMatch match = d.options.store->find_tuning(d.caps, family.manifest(), problem);
    if (match.entry && match.entry->ranking.front().variant != d.loaded.variant.name) {
      LoadOptions o;
      o.tier = d.options.tier;
      o.store = d.options.store;
      o.cache = d.options.cache;
      o.self_check = d.options.self_check;
      o.problem = problem;
      try {
        chosen = std::make_unique<LoadedKernel>(load(d.context, d.device, family, o));
      } catch (const Error&) {
        chosen.reset();  // the constructor's choice still runs every shape
      }
    }
    if (!chosen || chosen->variant.name == d.loaded.variant.name) {
      // The constructor's kernel, explained for this shape.
      chosen = std::make_unique<LoadedKernel>(d.loaded);
      chosen->explanation.tuning = match.to_string() + "\nfor " + std::to_string(m) + "x" +
                                   std::to_string(n) + "x" + std::to_string(k) +
                                   " the kernel chosen at construction runs";
    }
    it = d.by_class.emplace(cls, std::move(chosen)).first;
  }
  return *it->second;
}
MatmulKernel Matmul::kernel() const { return impl_->kernel; }
std::array<std::size_t, 2> Matmul::local_size() const {
  return matmul_geometry(impl_->loaded.variant, 1, 1, impl_->free_local).local;
}

cl::Event Matmul::enqueue(const cl::CommandQueue& queue, const cl::Buffer& a, const cl::Buffer& b,
                          const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                          const std::vector<cl::Event>& wait) const {
  for (auto [dim, name] : {std::pair{m, "M"}, std::pair{n, "N"}, std::pair{k, "K"}}) {
    if (dim == 0 || dim > static_cast<std::size_t>(INT_MAX)) {
      throw Error(std::string("Matmul: ") + name + " = " + std::to_string(dim) + " is outside 1.." +
                  std::to_string(INT_MAX));
    }
  }
  // Products of two sizes below 2^31 fit in 64 bits; their bytes may not.
  const std::pair<const cl::Buffer*, std::size_t> needs[3] = {
      {&a, m * k}, {&b, k * n}, {&c, m * n}};
  const char* names[3] = {"A", "B", "C"};
  if (!queue()) throw Error("Matmul: the queue is null");
  cl_context queue_context = nullptr;
  check_cl(clGetCommandQueueInfo(queue(), CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context,
                                 nullptr),
           "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)");
  if (queue_context != impl_->context()) {
    throw Error(
        "Matmul: the queue belongs to another context than the one this Matmul was "
        "built for");
  }
  cl_device_id queue_device = nullptr;
  check_cl(
      clGetCommandQueueInfo(queue(), CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, nullptr),
      "clGetCommandQueueInfo(CL_QUEUE_DEVICE)");
  if (queue_device != impl_->device()) {
    throw Error("Matmul: the queue is for another device than the one this Matmul was built for");
  }
  for (int i = 0; i < 3; ++i) {
    const cl_mem mem = (*needs[i].first)();
    if (!mem) throw Error(std::string("Matmul: buffer ") + names[i] + " is null");
    std::size_t size = 0;
    cl_int err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr);
    check_cl(err, std::string("clGetMemObjectInfo(") + names[i] + ")");
    cl_context owner = nullptr;
    check_cl(clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr),
             std::string("clGetMemObjectInfo(") + names[i] + ", CL_MEM_CONTEXT)");
    if (owner != impl_->context()) {
      throw Error(std::string("Matmul: buffer ") + names[i] +
                  " belongs to another context than the one this Matmul was built for");
    }
    cl_mem_flags flags = 0;
    check_cl(clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr),
             std::string("clGetMemObjectInfo(") + names[i] + ", CL_MEM_FLAGS)");
    if (i == 2 && (flags & CL_MEM_READ_ONLY)) {
      throw Error("Matmul: buffer C is CL_MEM_READ_ONLY; the kernel writes it");
    }
    if (i < 2 && (flags & CL_MEM_WRITE_ONLY)) {
      throw Error(std::string("Matmul: buffer ") + names[i] +
                  " is CL_MEM_WRITE_ONLY; the kernel reads it");
    }
    if (needs[i].second > SIZE_MAX / sizeof(float)) {
      throw Error(std::string("Matmul: ") + names[i] + " of the " + std::to_string(m) + "x" +
                  std::to_string(n) + "x" + std::to_string(k) +
                  " product would take more bytes than a size_t holds");
    }
    if (size < needs[i].second * sizeof(float)) {
      throw Error(std::string("Matmul: buffer ") + names[i] + " has " + std::to_string(size) +
                  " B, the " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(k) + " product needs " +
                  std::to_string(needs[i].second * sizeof(float)) + " B");
    }
  }
  const LoadedKernel& chosen = loaded_for(m, n, k);
  const LaunchGeometry g = matmul_geometry(chosen.variant, m, n, impl_->free_local);
  std::vector<cl_event> events;
  for (const cl::Event& e : wait) events.push_back(e());
  cl::Event last;
  const std::size_t step = impl_->k_per_launch;
  for (std::size_t k0 = 0; k0 < k; k0 += step) {
    const std::size_t kc = std::min(step, k - k0);
    last = launch(queue, chosen.kernel, g, a, b, c, m, n, kc, k, n, n, k0, k0 > 0, events);
    events = {last()};
  }
  return last;
}

}  // namespace fatcl

namespace fatcl {

std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     std::size_t m, std::size_t n, std::size_t k) {
  if (a.size() < m * k || b.size() < k * n) {
    throw Error("reference_matmul: A or B is smaller than " + std::to_string(m) + "x" +
                std::to_string(n) + "x" + std::to_string(k) + " needs");
  }
  std::vector<double> c(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    double* row = &c[i * n];
    for (std::size_t p = 0; p < k; ++p) {
      const double aip = a[i * k + p];
      const float* brow = &b[p * n];
      for (std::size_t j = 0; j < n; ++j) row[j] += aip * brow[j];
    }
  }
  return c;
}

double relative_error(const std::vector<float>& c, const std::vector<double>& reference) {
  if (c.size() != reference.size()) {
    throw Error("relative_error: " + std::to_string(c.size()) + " values against " +
                std::to_string(reference.size()));
  }
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double d = double(c[i]) - reference[i];
    diff += d * d;
    norm += reference[i] * reference[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace fatcl
