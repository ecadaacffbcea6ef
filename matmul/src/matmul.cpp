#include "fatcl/matmul.hpp"

#include <algorithm>
#include <climits>
#include <map>

#include "families.hpp"
#include "fatcl/store.hpp"

namespace fatcl {

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
    const TuningMatch match = d.options.store->find_tuning(d.caps, family.manifest(), problem,
                                                           family.description().shipped_tuning);
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
      // The entry decided where it ranks this kernel first.
      chosen->tuning_entry.reset();
      if (match.entry && match.entry->ranking.front().variant == d.loaded.variant.name) {
        chosen->tuning_entry = *match.entry;
      }
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
  return matmul_geometry(impl_->kernel, impl_->loaded.variant, 1, 1, impl_->free_local).local;
}

namespace {

// The checks of one enqueue, in CLBlast's manner: one function that says
// which argument is wrong and why. Throws fatcl::Error.
void check_queue(const cl::CommandQueue& queue, const cl::Context& context,
                 const cl::Device& device) {
  if (!queue()) throw Error("Matmul: the queue is null");
  cl_context queue_context = nullptr;
  check_cl(clGetCommandQueueInfo(queue(), CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context,
                                 nullptr),
           "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)");
  if (queue_context != context()) {
    throw Error(
        "Matmul: the queue belongs to another context than the one this Matmul was built "
        "for");
  }
  cl_device_id queue_device = nullptr;
  check_cl(
      clGetCommandQueueInfo(queue(), CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, nullptr),
      "clGetCommandQueueInfo(CL_QUEUE_DEVICE)");
  if (queue_device != device()) {
    throw Error("Matmul: the queue is for another device than the one this Matmul was built for");
  }
}

// A matrix buffer: not null, of this context, readable (A, B) or writable
// (C), and holding `floats` floats of the m x n x k product.
void check_buffer(const cl::Buffer& buffer, const char* name, bool written, std::size_t floats,
                  const cl::Context& context, const std::string& product) {
  const cl_mem mem = buffer();
  if (!mem) throw Error(std::string("Matmul: buffer ") + name + " is null");
  std::size_t size = 0;
  check_cl(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr),
           std::string("clGetMemObjectInfo(") + name + ")");
  cl_context owner = nullptr;
  check_cl(clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr),
           std::string("clGetMemObjectInfo(") + name + ", CL_MEM_CONTEXT)");
  if (owner != context()) {
    throw Error(std::string("Matmul: buffer ") + name +
                " belongs to another context than the one this Matmul was built for");
  }
  cl_mem_flags flags = 0;
  check_cl(clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr),
           std::string("clGetMemObjectInfo(") + name + ", CL_MEM_FLAGS)");
  if (written && (flags & CL_MEM_READ_ONLY)) {
    throw Error(std::string("Matmul: buffer ") + name +
                " is CL_MEM_READ_ONLY; the kernel writes it");
  }
  if (!written && (flags & CL_MEM_WRITE_ONLY)) {
    throw Error(std::string("Matmul: buffer ") + name +
                " is CL_MEM_WRITE_ONLY; the kernel reads it");
  }
  if (floats > SIZE_MAX / sizeof(float)) {
    throw Error(std::string("Matmul: ") + name + " of the " + product +
                " product would take more bytes than a size_t holds");
  }
  if (size < floats * sizeof(float)) {
    throw Error(std::string("Matmul: buffer ") + name + " has " + std::to_string(size) +
                " B, the " + product + " product needs " + std::to_string(floats * sizeof(float)) +
                " B");
  }
}

}  // namespace

cl::Event Matmul::enqueue(const cl::CommandQueue& queue, const cl::Buffer& a, const cl::Buffer& b,
                          const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                          const std::vector<cl::Event>& wait) const {
  for (auto [dim, name] : {std::pair{m, "M"}, std::pair{n, "N"}, std::pair{k, "K"}}) {
    if (dim == 0 || dim > static_cast<std::size_t>(INT_MAX)) {
      throw Error(std::string("Matmul: ") + name + " = " + std::to_string(dim) + " is outside 1.." +
                  std::to_string(INT_MAX));
    }
  }
  check_queue(queue, impl_->context, impl_->device);
  // Products of two sizes below 2^31 fit in 64 bits; their bytes may not.
  const std::string product = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  check_buffer(a, "A", false, m * k, impl_->context, product);
  check_buffer(b, "B", false, k * n, impl_->context, product);
  check_buffer(c, "C", true, m * n, impl_->context, product);

  const LoadedKernel& chosen = loaded_for(m, n, k);
  const LaunchGeometry g = matmul_geometry(impl_->kernel, chosen.variant, m, n, impl_->free_local);
  std::vector<cl_event> events;
  for (const cl::Event& e : wait) events.push_back(e());
  cl::Event last;
  const std::size_t step = impl_->k_per_launch;
  for (std::size_t k0 = 0; k0 < k; k0 += step) {
    const std::size_t kc = std::min(step, k - k0);
    last = detail::launch_matmul(queue, chosen.kernel, g, a, b, c, m, n, kc, k, n, n, k0, k0 > 0,
                                 events);
    events = {last()};
  }
  return last;
}

MatmulWarmth warm_matmul_programs(const cl::Context& context, const cl::Device& device,
                                  const std::shared_ptr<ProgramCache>& cache) {
  const DeviceCaps caps = DeviceCaps::query(device);
  MatmulWarmth w;
  for (MatmulKernel k : {MatmulKernel::Blocked, MatmulKernel::Tiled, MatmulKernel::Naive}) {
    const Family& family = matmul_family(k);
    for (const Candidate& c : plan(family.manifest(), caps).chain) {
      LoadOptions lo;
      lo.variant = c.variant->name;
      lo.tier = c.tier;
      lo.use_tuning = false;
      lo.cache = cache;
      try {
        // From disk, or a program this process built for another variant
        // with the same bytes (e.g. FMA twins whose PTX is identical:
        // libclc's mad is a fused multiply-add).
        const LoadedKernel loaded = load(context, device, family, lo);
        ++(loaded.origin == ProgramOrigin::Built ? w.built : w.already_cached);
      } catch (const Error& e) {
        w.failed.push_back({c.variant->name, c.tier, Step::Outcome::Failed, e.what()});
      }
    }
  }
  return w;
}

}  // namespace fatcl
