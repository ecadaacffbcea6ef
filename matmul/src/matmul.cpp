#include "fatcl/matmul.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>

#include "families.hpp"
#include "fatcl/detail/clock.hpp"
#include "fatcl/store.hpp"

namespace fatcl {

struct Matmul::Impl {
  LoadedKernel loaded;
  MatmulKernel kernel = MatmulKernel::Blocked;
  std::array<std::size_t, 2> free_local{16, 16};
  cl::Context context;
  cl::Device device;
  MatmulOptions options;
  DeviceCaps caps;
  // Kernels chosen per family, size class and alignment (copies of
  // `loaded` where it is the one), with their family.
  // A program's kernels for a split K, made on first use: the second pass
  // (matmul_splitk_sum) and, for the blocked family, the split product.
  struct SplitKernels {
    cl::Kernel sum, product;
  };
  struct Chosen {
    LoadedKernel loaded;
    MatmulKernel kernel;
    SplitKernels split_k;
    // While the choice is learned (MatmulOptions::online), and once it is
    // (kept while the store is saved, and for what it said).
    std::unique_ptr<OnlineChoice> online;
    std::unique_ptr<OnlineChoice> learned;
  };
  // Enqueues the product with `kernel` (of `chosen`'s family); `split_k`
  // holds its program's kernels for a split K, made here where needed first.
  cl::Event launch(const cl::CommandQueue& queue, Chosen& chosen, const LoadedKernel& kernel,
                   SplitKernels& split_k, const cl::Buffer& a, const cl::Buffer& b,
                   const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                   std::vector<cl_event> events);
  void learn_online(Chosen& chosen, const std::vector<std::size_t>& problem);
  // The parts K (at most matmul_k_per_launch of it) is split into over work-groups.
  std::size_t k_splits(MatmulKernel family, const Variant& v, std::size_t m, std::size_t n,
                       std::size_t kc) const {
    return options.k_splits && matmul_splits_k(family) ? std::min(options.k_splits, kc)
                                                       : matmul_k_splits(family, v, m, n, kc, caps);
  }
  std::map<std::string, std::unique_ptr<Chosen>> by_class;

  // A buffer kept between enqueues, grown on demand, and the last launch
  // that reads it (the next user waits for it).
  struct Workspace {
    const char* what;
    cl::Buffer buffer;
    std::size_t floats = 0;
    cl::Event free;
    const cl::Buffer& at_least(const cl::Context& context, std::size_t wanted) {
      if (wanted > floats) {
        cl_int err = CL_SUCCESS;
        cl_mem w =
            clCreateBuffer(context(), CL_MEM_READ_WRITE, wanted * sizeof(float), nullptr, &err);
        check_cl(err, std::string("clCreateBuffer(") + what + ", " +
                          std::to_string(wanted * sizeof(float)) + " B)");
        buffer = cl::Buffer(w, false);
        floats = wanted;
      }
      return buffer;
    }
  };
  // The partial products of a split K, and B copied with longer rows
  // (matmul_padded_ldb) or packed into panels (matmul_b_panel_width).
  Workspace split_parts{"the split-K workspace"};
  Workspace padded_b{"the copy of B"};
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: where C's panels may start.
  std::size_t base_align = 0;
  // Whether C can be cut into sub-buffers of panels `width` columns wide.
  bool panels_fit(std::size_t width) const {
    return base_align > 0 && (width * sizeof(float)) % base_align == 0;
  }
  // launch() for a product whose B is packed into panels `width` wide.
  cl::Event launch_panels(const cl::CommandQueue& queue, const LoadedKernel& kernel,
                          std::size_t width, const cl::Buffer& a, const cl::Buffer& b,
                          const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                          std::vector<cl_event> events);

  Chosen& chosen_for(std::size_t m, std::size_t n, std::size_t k);
  // What load() gets for one shape: the options' tier, store, cache and
  // self-check.
  LoadOptions load_options(const std::vector<std::size_t>& problem, bool use_tuning) const {
    LoadOptions o;
    o.tier = options.tier;
    o.store = options.store;
    o.cache = options.cache;
    o.use_tuning = use_tuning;
    o.self_check = options.self_check;
    o.problem = problem;
    return o;
  }
  std::string rule_text(MatmulKernel rule, const std::vector<std::size_t>& problem) const;
  std::unique_ptr<Chosen> other_family(MatmulKernel family, const std::vector<std::size_t>& problem,
                                       const std::string& why, std::string* failure);
  std::unique_ptr<Chosen> tuned_for(const std::vector<std::size_t>& problem);
};

Matmul::Matmul(const cl::Context& context, const cl::Device& device, const MatmulOptions& options)
    : impl_(std::make_unique<Impl>()) {
  check_context_and_device(context, device, "Matmul");
  if (options.k_splits > kMatmulMaxKSplits) {
    throw Error("MatmulOptions: k_splits = " + std::to_string(options.k_splits) +
                " is above kMatmulMaxKSplits (" + std::to_string(kMatmulMaxKSplits) + ")");
  }
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
  cl_uint align_bits = 0;
  check_cl(clGetDeviceInfo(device(), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                           nullptr),
           "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)");
  impl_->base_align = align_bits / 8;

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
  return impl_->chosen_for(m, n, k).loaded;
}

Matmul::Impl::Chosen& Matmul::Impl::chosen_for(std::size_t m, std::size_t n, std::size_t k) {
  if (m == 0 || n == 0 || k == 0) {
    // No shape to choose for: the kernel chosen at construction.
    auto it = by_class.find("");
    if (it == by_class.end()) {
      it = by_class.emplace("", std::make_unique<Chosen>(Chosen{loaded, kernel})).first;
    }
    return *it->second;
  }
  const bool automatic = options.kernel == MatmulKernel::Auto && options.variant.empty();
  const MatmulKernel rule = automatic ? matmul_family_for(m, n, kernel, caps.is_gpu()) : kernel;
  const std::vector<std::size_t> problem{m, n, k};
  // One choice per rule, size class and alignment (size_alignment): the
  // model tells 1000 from 1024 by whether rows are whole vectors
  // (blocked_efficiency).
  const std::string key = std::string(to_string(rule)) + " " + size_class(problem) + " /" +
                          std::to_string(size_alignment(m)) + "/" +
                          std::to_string(size_alignment(n)) + "/" +
                          std::to_string(size_alignment(k));
  auto it = by_class.find(key);
  if (it != by_class.end()) return *it->second;
  // Among the families, by what their measured neighbours predict.
  MatmulKernel family = rule;
  std::string why = rule_text(rule, problem);
  if (automatic && options.use_tuning) {
    const MatmulFamilyChoice choice = choose_matmul_family(caps, *options.store, m, n, k, kernel);
    family = choice.family;
    if (!choice.predictions.empty()) {
      why = choice.to_string() + (why.empty() ? "" : "\nthe rule alone: " + why);
    }
  }
  std::unique_ptr<Chosen> chosen;
  std::string failure;
  if (family != kernel) chosen = other_family(family, problem, why, &failure);
  if (!chosen) {
    chosen = tuned_for(problem);
    chosen->loaded.explanation.family = failure.empty() ? why : failure;
  }
  learn_online(*chosen, problem);
  return *by_class.emplace(key, std::move(chosen)).first->second;
}

// With MatmulOptions::online (or FATCL_TUNE=online), where no entry measured
// on this device for this size class decided: the candidates' builds start.
void Matmul::Impl::learn_online(Chosen& chosen, const std::vector<std::size_t>& problem) {
  if (!(options.online || online_tuning_requested()) || !options.variant.empty() ||
      !options.use_tuning) {
    return;
  }
  if (tuned_here(chosen.loaded.tuning_entry, problem, caps)) return;  // measured here
  const Family& family = matmul_family(chosen.kernel);
  const LoadOptions lo = load_options(problem, true);
  std::vector<std::string> variants = online_candidates(
      family, caps, lo, chosen.loaded.variant.name, options.online_options.candidates);
  chosen.online = std::make_unique<OnlineChoice>(context, device, family, problem, chosen.loaded,
                                                 std::move(variants), lo, options.online_options);
}

std::size_t Matmul::launches(std::size_t m, std::size_t n, std::size_t k) const {
  const Impl::Chosen& chosen = impl_->chosen_for(m, n, k);
  const Variant& v = chosen.loaded.variant;
  const std::size_t step = matmul_k_per_launch(impl_->caps, chosen.kernel, v);
  const std::size_t width = matmul_b_panel_width(chosen.kernel, v, impl_->caps, m, n, k);
  if (width && impl_->panels_fit(width)) return matmul_panel_launches(n, k, width, step);
  std::size_t count = matmul_padded_ldb(chosen.kernel, v, impl_->caps, n) ? 1 : 0;
  for (std::size_t k0 = 0; k0 < k; k0 += step) {
    const std::size_t kc = std::min(step, k - k0);
    count += impl_->k_splits(chosen.kernel, v, m, n, kc) == 1 ? 1 : 2;
  }
  return count;
}

std::string Matmul::online_report(std::size_t m, std::size_t n, std::size_t k) const {
  const Impl::Chosen& chosen = impl_->chosen_for(m, n, k);
  if (chosen.online) return chosen.online->report();
  return chosen.learned ? chosen.learned->report() : std::string();
}

// Why the rule (matmul_family_for) gives a skinny family this shape; "" for
// the family chosen at construction.
std::string Matmul::Impl::rule_text(MatmulKernel rule,
                                    const std::vector<std::size_t>& problem) const {
  const std::string shape = problem_text(problem);
  if (rule == MatmulKernel::FewRows) {
    return "M = " + std::to_string(problem[0]) + " <= " + std::to_string(kMatmulSkinny) +
           " and M <= N: the few-rows family serves " + shape;
  }
  if (rule == MatmulKernel::FewCols) {
    return "N = " + std::to_string(problem[1]) +
           " <= " + std::to_string(caps.is_gpu() ? kMatmulFewColsGpu : kMatmulSkinny) +
           (caps.is_gpu() ? " (on a GPU)" : "") + ": the few-columns family serves " + shape;
  }
  return "";
}

// Another family than the construction's for this shape, by its tuning
// entries for it (with use_tuning) or its ranking; null if it loads nothing
// (the kernel chosen at construction runs the shape; `failure` says why).
std::unique_ptr<Matmul::Impl::Chosen> Matmul::Impl::other_family(
    MatmulKernel family, const std::vector<std::size_t>& problem, const std::string& why,
    std::string* failure) {
  try {
    auto chosen = std::make_unique<Chosen>(Chosen{
        load(context, device, matmul_family(family), load_options(problem, options.use_tuning)),
        family});
    chosen->loaded.explanation.family = why;
    return chosen;
  } catch (const Error& e) {
    const std::string first = e.what();
    *failure = why + "\nbut the " + to_string(family) + " family loads nothing (" +
               first.substr(0, first.find('\n')) + ")";
    return nullptr;
  }
}

// The kernel of the construction's family for this shape: where the store
// has a tuning entry nearer to it whose fastest variant differs, that
// variant (built now, its explanation naming the entry), else the kernel
// chosen at construction, explained for this shape.
std::unique_ptr<Matmul::Impl::Chosen> Matmul::Impl::tuned_for(
    const std::vector<std::size_t>& problem) {
  const Family& family = matmul_family(kernel);
  std::unique_ptr<Chosen> chosen;
  TuningMatch match;
  // The entry's order for this shape (the family's model carries it).
  std::optional<TuningEntry> carried;
  std::string not_loaded;  // why the entry's choice for this shape did not load
  // The variant and the tier it was measured in: on NVIDIA (PTX against
  // source) and Intel's CPU runtime (SPIR-V against source) one variant's
  // builds run at different speeds.
  const auto ranked_first = [&](const LoadedKernel& l) {
    return carried && carried->ranking.front().variant == l.variant.name &&
           carried->ranking.front().tier == l.tier;
  };
  if (options.variant.empty() && options.use_tuning) {
    match = options.store->find_tuning(caps, family.manifest(), problem,
                                       shipped_tuning_for(family, caps),
                                       family.description().efficiency != nullptr);
    if (match.entry) {
      carried = carry_tuning(*match.entry, family, caps, problem, nullptr, nullptr,
                             launch_floor_ms(*options.store, family, caps));
    }
    if (carried && !ranked_first(loaded)) {
      try {
        chosen = std::make_unique<Chosen>(
            Chosen{load(context, device, family, load_options(problem, true)), kernel});
      } catch (const Error& e) {
        chosen.reset();  // the constructor's choice still runs every shape, and says why
        const std::string first = e.what();
        not_loaded = first.substr(0, first.find('\n'));
      }
    }
  }
  if (!chosen || (chosen->loaded.variant.name == loaded.variant.name &&
                   chosen->loaded.tier == loaded.tier)) {
    chosen = std::make_unique<Chosen>(Chosen{loaded, kernel});
    LoadedKernel& l = chosen->loaded;
    // The entry decided where it ranks this kernel first (for this shape).
    l.tuning_entry.reset();
    if (ranked_first(loaded)) {
      l.tuning_entry = *match.entry;
    }
    if (options.variant.empty() && options.use_tuning) {
      l.explanation.tuning = match.to_string() + "\nfor " + problem_text(problem) +
                             " the kernel chosen at construction runs" +
                             (not_loaded.empty() ? ""
                                                 : " (the entry's choice for it did not load: " +
                                                       not_loaded + ")");
    }
  }
  return chosen;
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

  Impl& d = *impl_;
  Impl::Chosen& chosen = d.chosen_for(m, n, k);
  std::vector<cl_event> events;
  for (const cl::Event& e : wait) events.push_back(e());
  if (!chosen.online) {
    return d.launch(queue, chosen, chosen.loaded, chosen.split_k, a, b, c, m, n, k, events);
  }
  const OnlineChoice::Turn turn = chosen.online->next();
  Impl::SplitKernels split_k;
  if (!turn.timed) return d.launch(queue, chosen, *turn.kernel, split_k, a, b, c, m, n, k, events);
  // A timed call: the queue finished before and after, by the host clock.
  check_cl(clFinish(queue()), "clFinish before a timed call (learning online)");
  const auto start = std::chrono::steady_clock::now();
  cl::Event last = d.launch(queue, chosen, *turn.kernel, split_k, a, b, c, m, n, k, events);
  check_cl(clFinish(queue()), "clFinish after a timed call (learning online)");
  const double ms = detail::ms_since(start);
  chosen.online->record(turn, ms, 2.0 * double(m) * double(n) * double(k));
  if (chosen.online->settled()) {
    chosen.loaded = chosen.online->choice();
    chosen.split_k = {};
    chosen.learned = std::move(chosen.online);
  }
  return last;
}

cl::Event Matmul::Impl::launch(const cl::CommandQueue& queue, Chosen& chosen,
                               const LoadedKernel& kernel, SplitKernels& split_k,
                               const cl::Buffer& a, const cl::Buffer& b, const cl::Buffer& c,
                               std::size_t m, std::size_t n, std::size_t k,
                               std::vector<cl_event> events) {
  cl::Event last;
  const Variant& v = kernel.variant;
  const std::size_t width = matmul_b_panel_width(chosen.kernel, v, caps, m, n, k);
  if (width && panels_fit(width)) {
    return launch_panels(queue, kernel, width, a, b, c, m, n, k, std::move(events));
  }
  // B copied whole, once for all launches, where its rows would alias.
  const cl::Buffer* b_read = &b;
  std::size_t ldb = n;
  if (const std::size_t padded = matmul_padded_ldb(chosen.kernel, v, caps, n)) {
    const cl::Buffer& copy = padded_b.at_least(context, k * padded);
    if (padded_b.free()) events.push_back(padded_b.free());
    const std::vector<cl_event> copied =
        detail::copy_rows(queue(), b(), {0}, n, copy(), 0, 0, padded, n, k, sizeof(float), events);
    events = copied;
    last = cl::Event(copied.front(), false);
    b_read = &copy;
    ldb = padded;
  }
  const std::size_t step = matmul_k_per_launch(caps, chosen.kernel, v);
  for (std::size_t k0 = 0; k0 < k; k0 += step) {
    const std::size_t kc = std::min(step, k - k0);
    const bool accumulate = k0 > 0;
    const bool skinny = matmul_is_skinny(chosen.kernel);
    const std::size_t splits = k_splits(chosen.kernel, v, m, n, kc);
    const LaunchGeometry g = matmul_geometry(chosen.kernel, v, m, n, free_local, splits);
    if (splits == 1) {
      last = detail::launch_matmul(queue, kernel.kernel, g, a, *b_read, c, m, n, kc, k, ldb, n, k0,
                                   accumulate, events, skinny ? &c : nullptr);
    } else {
      // The partial products go to the workspace, which the previous
      // split product (maybe on another queue) must have finished reading.
      const cl::Buffer& w = split_parts.at_least(context, splits * m * n);
      if (split_parts.free()) events.push_back(split_parts.free());
      auto made = [&](cl::Kernel& made, const char* name) -> const cl::Kernel& {
        if (!made()) {
          cl_int err = CL_SUCCESS;
          cl_kernel s = clCreateKernel(kernel.program(), name, &err);
          check_cl(err, std::string("clCreateKernel(") + name + ") from " + v.name);
          made = cl::Kernel(s, false);
        }
        return made;
      };
      // A skinny kernel takes the workspace as its last argument; the
      // blocked family's split kernel writes its parts' planes into it.
      const cl::Event parts =
          skinny ? detail::launch_matmul(queue, kernel.kernel, g, a, *b_read, c, m, n, kc, k, ldb,
                                         n, k0, false, events, &w)
                 : detail::launch_matmul(queue, made(split_k.product, "matmul_blocked_split"), g, a,
                                         *b_read, w, m, n, kc, k, ldb, n, k0, false, events,
                                         nullptr);
      last = detail::launch_splitk_sum(queue, made(split_k.sum, "matmul_splitk_sum"), w, c, m, n,
                                       splits, n, accumulate, {parts()});
      split_parts.free = last;
    }
    events = {last()};
  }
  if (b_read != &b) padded_b.free = last;
  return last;
}

cl::Event Matmul::Impl::launch_panels(const cl::CommandQueue& queue, const LoadedKernel& kernel,
                                      std::size_t width, const cl::Buffer& a, const cl::Buffer& b,
                                      const cl::Buffer& c, std::size_t m, std::size_t n,
                                      std::size_t k, std::vector<cl_event> events) {
  const Variant& v = kernel.variant;
  // Whole panels packed (K x width each, one after another); where width
  // does not divide n, the last whole panel and the columns after it are
  // read in place by one launch, whose last tile moves back to end at n.
  const std::size_t panels = n / width, packed = n % width ? panels - 1 : panels;
  // C's panels first, sub-buffers of the buffer C is (or is a sub-buffer
  // of): a panel that cannot be cut fails the call before anything is
  // enqueued.
  cl_mem parent = nullptr;
  std::size_t origin = 0;
  check_cl(clGetMemObjectInfo(c(), CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr),
           "clGetMemObjectInfo(C, CL_MEM_ASSOCIATED_MEMOBJECT)");
  if (parent) {
    check_cl(clGetMemObjectInfo(c(), CL_MEM_OFFSET, sizeof origin, &origin, nullptr),
             "clGetMemObjectInfo(C, CL_MEM_OFFSET)");
  } else {
    parent = c();
  }
  std::vector<cl::Buffer> c_panels;
  for (std::size_t p = 0; p < panels; ++p) {
    const std::size_t col0 = p * width, cols = p < packed ? width : n - col0;
    const cl_buffer_region columns{origin + col0 * sizeof(float),
                                   ((m - 1) * n + cols) * sizeof(float)};
    cl_int err = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &columns, &err);
    check_cl(err, "clCreateSubBuffer(C's columns " + std::to_string(col0) + ".." +
                      std::to_string(col0 + cols - 1) + ")");
    c_panels.emplace_back(sub, false);
  }
  const cl::Buffer& packed_b = padded_b.at_least(context, packed * width * k);
  if (padded_b.free()) events.push_back(padded_b.free());
  std::vector<cl::Event> copies;
  for (std::size_t p = 0; p < packed; ++p) {
    const std::size_t from[3] = {p * width * sizeof(float), 0, 0}, to[3] = {0, p * k, 0};
    const std::size_t region[3] = {width * sizeof(float), k, 1};
    cl_event e = nullptr;
    check_cl(clEnqueueCopyBufferRect(queue(), b(), packed_b(), from, to, region, n * sizeof(float),
                                     0, width * sizeof(float), 0, cl_uint(events.size()),
                                     events.empty() ? nullptr : events.data(), &e),
             "clEnqueueCopyBufferRect(B's columns " + std::to_string(p * width) + ".." +
                 std::to_string((p + 1) * width - 1) + " into a panel)");
    copies.emplace_back(e, false);
  }
  const std::size_t step = matmul_k_per_launch(caps, MatmulKernel::Blocked, v);
  cl::Event last;
  for (std::size_t p = 0; p < panels; ++p) {
    const std::size_t col0 = p * width;
    const bool in_place = p >= packed;
    const std::size_t cols = in_place ? n - col0 : width;
    std::vector<cl_event> wait = last() ? std::vector<cl_event>{last()} : events;
    if (!in_place) wait.push_back(copies[p]());
    const LaunchGeometry g = matmul_geometry(MatmulKernel::Blocked, v, m, cols, free_local, 1);
    for (std::size_t k0 = 0; k0 < k; k0 += step) {
      const std::size_t kc = std::min(step, k - k0);
      last = in_place
                 ? detail::launch_matmul(queue, kernel.kernel, g, a, b, c_panels[p], m, cols, kc, k,
                                         n, n, k0, k0 > 0, wait, nullptr, col0)
                 : detail::launch_matmul(queue, kernel.kernel, g, a, packed_b, c_panels[p], m, cols,
                                         kc, k, width, n, k0, k0 > 0, wait, nullptr, p * k * width);
      wait = {last()};
    }
  }
  padded_b.free = last;
  return last;
}

MatmulWarmth warm_matmul_programs(const cl::Context& context, const cl::Device& device,
                                  const std::shared_ptr<ProgramCache>& cache,
                                  const std::vector<std::string>& families) {
  // The families named, each looked up once; all where none is named.
  std::vector<MatmulKernel> wanted =
      families.empty() ? matmul_kernels() : std::vector<MatmulKernel>{};
  for (const std::string& name : families) wanted.push_back(matmul_kernel_named(name));
  const DeviceCaps caps = DeviceCaps::query(device);
  MatmulWarmth w;
  for (MatmulKernel k : matmul_kernels()) {
    if (std::find(wanted.begin(), wanted.end(), k) == wanted.end()) continue;
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
        if (!loaded.not_cached.empty()) {
          w.not_kept.push_back({c.variant->name, c.tier, Step::Outcome::Failed, loaded.not_cached});
        } else {
          ++(loaded.origin == ProgramOrigin::Built ? w.built : w.already_cached);
        }
      } catch (const LoadFailure& e) {
        // The step that failed says why; the rest of the explanation is
        // the variants and tiers this load excluded.
        std::string why = e.what();
        for (const Step& s : e.explanation().steps) {
          if (s.outcome == Step::Outcome::Failed) {
            why = s.reason;
            break;
          }
        }
        w.failed.push_back({c.variant->name, c.tier, Step::Outcome::Failed, why});
      } catch (const Error& e) {
        w.failed.push_back({c.variant->name, c.tier, Step::Outcome::Failed, e.what()});
      }
    }
  }
  return w;
}

}  // namespace fatcl
