// The GEMM entry points: argument checks in CLBlast's order, the
// column-major call turned into its row-major twin, the kernel chosen and
// kept per context, device, precision and form, and the launches.
#include "fatcl/gemm.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "fatcl/detail/clock.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/store.hpp"
#include "launch.hpp"

namespace fatcl {

detail::Stored detail::stored(char name, Layout layout, bool trans, std::size_t rows,
                              std::size_t cols) {
  Stored s{name, trans ? cols : rows, trans ? rows : cols, 0, 0};
  s.one = layout == Layout::kRowMajor ? s.cols : s.rows;
  s.two = layout == Layout::kRowMajor ? s.rows : s.cols;
  return s;
}

namespace {

thread_local std::string g_message;

// A status and why, in words (GemmMessage()).
struct Failure {
  StatusCode status;
  std::string why;
};

// One call of any entry point, its scalars in the kernel's type (half as
// float) and its batch as offsets per product or as strides.
struct Request {
  int bits = 32;
  Layout layout = Layout::kRowMajor;
  Transpose a_transpose = Transpose::kNo, b_transpose = Transpose::kNo;
  std::size_t m = 0, n = 0, k = 0;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  std::size_t a_ld = 0, b_ld = 0, c_ld = 0;
  std::size_t batch = 1;
  bool batched = false;  // GemmBatched: offsets and scalars per product
  std::vector<std::size_t> a_offsets, b_offsets, c_offsets;  // batched
  std::vector<double> alphas, betas;                          // batched
  std::size_t a_offset = 0, b_offset = 0, c_offset = 0;       // otherwise
  std::size_t a_stride = 0, b_stride = 0, c_stride = 0;
  double alpha = 1, beta = 0;
  cl_command_queue* queue = nullptr;
  cl_event* event = nullptr;
  cl_mem temp = nullptr;  // the caller's space for the packing passes (Gemm's temp_buffer)
  // GemmTempBufferSize: check the arguments but the buffers, choose the
  // kernel, and put the bytes the packing passes need here; launch nothing.
  std::size_t* temp_size = nullptr;
};

bool transposed(Transpose t) { return t != Transpose::kNo; }

// What the process keeps: per device, what it reports and the precisions
// it has; per context, device, precision, form and size
// class, the program chosen, and its kernel objects that no call holds
// (Borrowed); per context, a small buffer for the kernel's
// unused batch arguments; per in-order queue, the space the packing passes
// write (Scratch).
struct DeviceFacts {
  DeviceCaps caps;
  bool fp64 = false, fp16 = false;
  bool one_call_at_a_time = false;  // the driver's quirk "concurrent-calls-race"
};
struct Chosen {
  cl::Program program;
  Variant variant;
  std::string kernel;  // the function's name: gemm_blocked, gemm_naive, gemm_transpose
  Tier tier = Tier::Source;
  // The point in words for GemmLastCall(): its name and tier, the loader's
  // explanation and whether a tuning entry measured on this device at the
  // choice's size class ranked it. Made at load, held by the last-call
  // record of each thread that ran it (which outlives ClearCache).
  struct Why {
    std::string variant;
    Tier tier = Tier::Source;
    Explanation explanation;
    bool tuned = false;
  };
  std::shared_ptr<const Why> why;
};

// A class being learned (GemmLearnOnline): its trial, and each candidate
// as the calls run it, made on its first turn (guarded by Kept's mutex).
struct Learning {
  std::unique_ptr<OnlineChoice> online;
  std::vector<std::shared_ptr<const Chosen>> as_chosen;
};

// What the thread's last call ran (GemmLastCall()): the facts, put into
// words only when asked (a call builds no text). No `why`: a quick return
// (`nothing` says which) or a failed call.
struct LastCall {
  std::shared_ptr<const Chosen::Why> why;
  const char* nothing = nullptr;
  bool col_major = false, as_transpose = false, one_row_turned = false;
  bool a_trans = false, b_trans = false;
  bool pack_a = false, pack_b = false, copy_b = false;
  std::size_t batch = 1, m = 0, n = 0, k = 0, panel = 0, b_padded_ld = 0, planes = 0;
  std::size_t launches = 0, k_per_launch = 0;
  // Where its class was being learned: the trial and the call's candidate.
  std::shared_ptr<Learning> learning;
  std::size_t candidate = 0;
  bool timed = false;
};
thread_local LastCall g_last_call;
struct Planned {
  Variant variant;
  std::string kernel;
};
// (context, device, precision, family, form, size classes of M, N, K and
// the batch, the alignments of M, N and K (size_alignment), the variant and
// tier forced where OverrideVariant forces one; families are the process's,
// never freed)
using ChoiceKey = std::tuple<cl_context, cl_device_id, int, const Family*, std::string, int, int,
                             int, int, std::size_t, std::size_t, std::size_t, std::string, int>;
// The space an in-order queue's packing passes write, grown to the largest
// call's need and reused (allocating it per call cost 1 to 2 ms a call on
// the CPU runtimes): a call's passes wait for the last launch that read it
// (`read_by`), and the call holds `mutex` from its first pass to its last
// launch, so that another thread's passes cannot come between. (Rusticl
// 22.3, four threads on one in-order queue, gave a wrong product about one
// run in 16 while the next call's pass waited on the queue's order alone.)
// The queue is retained, so that its handle names no other queue while
// kept.
struct Scratch {
  std::mutex mutex;
  cl::CommandQueue queue;
  cl::Buffer buffer;
  std::size_t bytes = 0;
  cl::Event read_by;
};
// A variant OverrideVariant forces, the tier where given, and the family it
// is of (the blocked one, or the reference path's).
struct Override {
  std::string variant;
  std::optional<Tier> tier;
  const Family* family;
};
struct Kept {
  std::mutex mutex;
  std::map<cl_command_queue, std::shared_ptr<Scratch>> scratch;
  // Shared with the calls in flight, so that a call copies no strings.
  std::map<cl_device_id, std::shared_ptr<const DeviceFacts>> devices;
  std::map<ChoiceKey, std::shared_ptr<const Chosen>> choices;
  std::map<ChoiceKey, Planned> planned;  // the points choices would take, not built
  std::map<cl_context, cl::Buffer> placeholders;
  std::map<std::pair<cl_device_id, int>, Override> overrides;
  std::map<std::pair<cl_device_id, int>, std::size_t> k_parts;  // OverrideKParts
  // GemmLearnOnline's switch (none: FATCL_TUNE's), options and store (null:
  // the user's), and the classes being learned.
  std::optional<bool> online;
  OnlineOptions online_options;
  std::shared_ptr<Store> store;
  std::map<ChoiceKey, std::shared_ptr<Learning>> learning;
  // Classes learned whose store is still being saved (OnlineChoice::saving):
  // kept until it is, so that no call waits for the file.
  std::vector<std::shared_ptr<Learning>> saving;
  std::map<std::pair<cl_program, std::string>, std::vector<cl::Kernel>> idle_kernels;
  unsigned generation = 0;  // ClearCache's count: a kernel borrowed before it is not kept
  // Held by a call on a device whose driver races concurrent calls, and by
  // ClearCache; taken before `mutex`.
  std::mutex one_at_a_time;
};
Kept& kept() {
  static Kept* k = new Kept;  // never destroyed: calls may come from other static destructors
  return *k;
}

int size_class(std::size_t x) { return x == 0 ? -1 : int(std::lround(std::log2(double(x)))); }
// GemmLanesFit's largest size class of M, N and K (32: 23 to 45).
constexpr int kLanesMostClass = 5;

DeviceFacts facts_of(cl_device_id id) {
  const cl::Device device(id, true);
  DeviceFacts f;
  f.caps = DeviceCaps::query(device);
  const std::string extensions = device.getInfo<CL_DEVICE_EXTENSIONS>();
  cl_device_fp_config dp = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dp, &dp, nullptr) != CL_SUCCESS) dp = 0;
  f.fp64 = dp != 0 || extensions.find("cl_khr_fp64") != std::string::npos;
  f.fp16 = extensions.find("cl_khr_fp16") != std::string::npos;
  f.one_call_at_a_time = has_driver_quirk(f.caps, "concurrent-calls-race");
  return f;
}

// The size an operand needs, in elements: offset + ld * (two - 1) + one,
// where `one` is the stored matrix's extent along its leading dimension
// and `two` the other; none on overflow. An empty matrix needs nothing.
std::optional<std::size_t> needed(std::size_t offset, std::size_t ld, std::size_t one,
                                  std::size_t two) {
  if (one == 0 || two == 0) return 0;
  if (two - 1 > (SIZE_MAX - one - offset) / std::max<std::size_t>(ld, 1)) return std::nullopt;
  if (one > SIZE_MAX - offset) return std::nullopt;
  return offset + ld * (two - 1) + one;
}

using detail::stored;
using detail::Stored;

std::string shape(const Stored& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

std::optional<Failure> check_ld(const Stored& s, std::size_t ld, Layout layout, StatusCode bad) {
  const std::size_t least = std::max<std::size_t>(1, s.one);
  const char* dim = layout == Layout::kRowMajor ? "columns" : "rows";
  if (ld < least) {
    return Failure{bad, std::string(1, s.name) + "'s leading dimension " + std::to_string(ld) +
                            " is below its " + std::to_string(least) + " " + dim + " (" +
                            shape(s) + " as stored, " +
                            (layout == Layout::kRowMajor ? "row" : "column") + "-major)"};
  }
  if (ld > std::size_t(INT_MAX)) {
    return Failure{bad, std::string(1, s.name) + "'s leading dimension " + std::to_string(ld) +
                            " is above " + std::to_string(INT_MAX) +
                            ", the largest fatcl's kernels index"};
  }
  return std::nullopt;
}

// The buffer holds the operand at each of its offsets.
std::optional<Failure> check_buffer(const Stored& s, cl_mem buffer, std::size_t ld,
                                    const std::vector<std::size_t>& offsets,
                                    std::size_t element, StatusCode invalid,
                                    StatusCode too_small) {
  const std::string name(1, s.name);
  std::size_t size = 0;
  if (!buffer) return Failure{invalid, name + "'s buffer is null"};
  if (const cl_int err = clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, nullptr);
      err != CL_SUCCESS) {
    // Only CL_INVALID_MEM_OBJECT says the buffer is bad; any other status
    // (the driver out of memory, the device lost) passes through.
    return Failure{err == CL_INVALID_MEM_OBJECT ? invalid : static_cast<StatusCode>(err),
                   name + "'s buffer: clGetMemObjectInfo(CL_MEM_SIZE) failed with " +
                       cl_status_name(err) +
                       (err == CL_INVALID_MEM_OBJECT ? " (not a valid OpenCL buffer)" : "")};
  }
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const std::optional<std::size_t> want = needed(offsets[i], ld, s.one, s.two);
    if (!want || *want > size / element) {
      return Failure{too_small,
                     name + "'s buffer holds " + std::to_string(size) + " bytes; the " +
                         shape(s) + " matrix at offset " + std::to_string(offsets[i]) +
                         (offsets.size() > 1 ? " (product " + std::to_string(i) + ")" : "") +
                         " with leading dimension " + std::to_string(ld) + " needs " +
                         (want ? std::to_string(*want * element) : std::string("more than")) +
                         (want ? "" : " the address space")};
    }
  }
  return std::nullopt;
}

// The offsets of an operand's products: given, or offset + i * stride for
// the first and last (the buffer check needs no more: they bound the rest).
std::vector<std::size_t> offsets_of(const Request& r, const std::vector<std::size_t>& given,
                                    std::size_t offset, std::size_t stride,
                                    std::optional<Failure>* overflow, char name) {
  if (r.batched) return given;
  std::vector<std::size_t> out{offset};
  if (r.batch > 1) {
    if (stride != 0 && r.batch - 1 > (SIZE_MAX - offset) / stride) {
      *overflow = Failure{name == 'A'   ? StatusCode::kInsufficientMemoryA
                          : name == 'B' ? StatusCode::kInsufficientMemoryB
                                        : StatusCode::kInsufficientMemoryC,
                          std::string(1, name) + "'s last product lies past the address space"};
      return out;
    }
    out.push_back(offset + (r.batch - 1) * stride);
  }
  return out;
}

std::optional<Failure> check(const Request& r, const DeviceFacts& facts) {
  if (r.bits == 64 && !facts.fp64) {
    return Failure{StatusCode::kNoDoublePrecision,
                   facts.caps.device_name + " reports no double precision (no cl_khr_fp64, "
                                            "CL_DEVICE_DOUBLE_FP_CONFIG 0)"};
  }
  if (r.bits == 16 && !facts.fp16) {
    return Failure{StatusCode::kNoHalfPrecision,
                   facts.caps.device_name + " reports no half precision (no cl_khr_fp16)"};
  }
  if (r.batch == 0) return Failure{StatusCode::kInvalidBatchCount, "the batch count is 0"};
  for (const auto& [value, what] : {std::pair{r.m, "m"}, {r.n, "n"}, {r.k, "k"}}) {
    if (value > std::size_t(INT_MAX)) {
      return Failure{StatusCode::kInvalidDimension,
                     std::string(what) + " = " + std::to_string(value) + " is above " +
                         std::to_string(INT_MAX) + ", the largest fatcl's kernels index"};
    }
  }
  const Stored a = stored('A', r.layout, transposed(r.a_transpose), r.m, r.k);
  const Stored b = stored('B', r.layout, transposed(r.b_transpose), r.k, r.n);
  const Stored c = stored('C', r.layout, false, r.m, r.n);
  if (auto f = check_ld(a, r.a_ld, r.layout, StatusCode::kInvalidLeadDimA)) return f;
  if (auto f = check_ld(b, r.b_ld, r.layout, StatusCode::kInvalidLeadDimB)) return f;
  if (auto f = check_ld(c, r.c_ld, r.layout, StatusCode::kInvalidLeadDimC)) return f;
  if (r.m == 0 || r.n == 0 || r.temp_size) return std::nullopt;
  // A and B only where they are read: some alpha is not 0 and K is not.
  bool reads = r.k > 0;
  if (reads) {
    reads = r.batched ? std::any_of(r.alphas.begin(), r.alphas.end(), [](double x) { return x != 0; })
                      : r.alpha != 0;
  }
  const std::size_t element = std::size_t(r.bits) / 8;
  std::optional<Failure> overflow;
  if (reads) {
    const auto ao = offsets_of(r, r.a_offsets, r.a_offset, r.a_stride, &overflow, 'A');
    if (overflow) return overflow;
    if (auto f = check_buffer(a, r.a, r.a_ld, ao, element, StatusCode::kInvalidMatrixA,
                              StatusCode::kInsufficientMemoryA)) {
      return f;
    }
    const auto bo = offsets_of(r, r.b_offsets, r.b_offset, r.b_stride, &overflow, 'B');
    if (overflow) return overflow;
    if (auto f = check_buffer(b, r.b, r.b_ld, bo, element, StatusCode::kInvalidMatrixB,
                              StatusCode::kInsufficientMemoryB)) {
      return f;
    }
  }
  const auto co = offsets_of(r, r.c_offsets, r.c_offset, r.c_stride, &overflow, 'C');
  if (overflow) return overflow;
  return check_buffer(c, r.c, r.c_ld, co, element, StatusCode::kInvalidMatrixC,
                      StatusCode::kInsufficientMemoryC);
}

// Kernel `name` of `program` for one call: an idle one where there is one,
// else a new one; given back when the call has enqueued its
// launches (a launch keeps the arguments it was enqueued with, and every
// call sets all of them), so that no two threads set one kernel's
// arguments at once. Making one per call cost NVIDIA's driver as much as
// a 32^3 batch's launch.
class Borrowed {
 public:
  Borrowed(cl_program program, const std::string& name) : key_(program, name) {
    Kept& all = kept();
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      generation_ = all.generation;
      auto it = all.idle_kernels.find(key_);
      if (it != all.idle_kernels.end() && !it->second.empty()) {
        kernel_ = std::move(it->second.back());
        it->second.pop_back();
        return;
      }
    }
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program, name.c_str(), &err);
    check_cl(err, "clCreateKernel(" + name + ")");
    kernel_ = cl::Kernel(k, false);
  }
  ~Borrowed() {
    Kept& all = kept();
    std::lock_guard<std::mutex> lock(all.mutex);
    if (all.generation != generation_) return;
    std::vector<cl::Kernel>& idle = all.idle_kernels[key_];
    if (idle.size() < 64) idle.push_back(std::move(kernel_));
  }
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;
  cl_kernel operator()() const { return kernel_(); }

 private:
  std::pair<cl_program, std::string> key_;  // a program may hold several kernels
  unsigned generation_ = 0;
  cl::Kernel kernel_;
};

// A loaded point of `family` as the calls keep it; `tuned`: an entry
// measured on this device at the size class of its key (the products kept
// on it) ranked it, as fatcl::Matmul and its bench count it.
std::shared_ptr<const Chosen> chosen_of(const LoadedKernel& loaded, const Family& family,
                                        bool tuned) {
  auto why = std::make_shared<const Chosen::Why>(
      Chosen::Why{loaded.variant.name, loaded.tier, loaded.explanation, tuned});
  return std::make_shared<const Chosen>(Chosen{loaded.program, loaded.variant,
                                               family.manifest().kernel, loaded.tier,
                                               std::move(why)});
}

// Candidate c of a class being learned as the calls keep it, made from its
// kernel `k` on first use. With the kept state's mutex held.
const std::shared_ptr<const Chosen>& as_chosen(Learning& l, std::size_t c, const LoadedKernel& k,
                                               const Family& family) {
  std::shared_ptr<const Chosen>& kept_candidate = l.as_chosen[c];
  if (!kept_candidate) kept_candidate = chosen_of(k, family, false);
  return kept_candidate;
}

// The program kept under `key`, else the one load() gives for `options`,
// then kept; where `may_learn`, learning is on (GemmLearnOnline, else
// FATCL_TUNE) and no entry measured here ranked it, its class is learned
// from here on (its candidates built now). With the kept state's mutex
// held; `caps` what the device reports.
std::shared_ptr<const Chosen> kept_or_loaded(Kept& all, const ChoiceKey& key,
                                             cl_context context, cl_device_id device,
                                             const DeviceCaps& caps, const Family& family,
                                             const LoadOptions& options, bool may_learn = false) {
  if (auto it = all.choices.find(key); it != all.choices.end()) return it->second;
  const cl::Context ctx(context, true);
  const cl::Device dev(device, true);
  const LoadedKernel loaded = load(ctx, dev, family, options);
  const std::shared_ptr<const Chosen> chosen =
      all.choices
          .emplace(key, chosen_of(loaded, family,
                                  tuned_here(loaded.tuning_entry, options.problem, caps)))
          .first->second;
  const bool learn = may_learn && (all.online ? *all.online : online_tuning_requested());
  if (learn && !chosen->why->tuned) {
    std::vector<std::string> variants = online_candidates(
        family, caps, options, loaded.variant.name, all.online_options.candidates);
    if (variants.size() > 1) {
      auto learning = std::make_shared<Learning>();
      learning->online =
          std::make_unique<OnlineChoice>(ctx, dev, family, options.problem, loaded,
                                         std::move(variants), options, all.online_options);
      learning->as_chosen.resize(learning->online->size());
      learning->as_chosen[0] = chosen;
      all.learning[key] = std::move(learning);
    }
  }
  return chosen;
}

// What choose() keys a product by, and loads it with.
struct ChoiceRequest {
  ChoiceKey key;
  LoadOptions options;
  const Family* family;
};
// With the kept state's mutex held. From the dot family where GemmDotFit
// holds, else the axpy family where GemmAxpyFit holds, else the rows
// family where GemmRowsFit holds, else the blocked one, unless
// OverrideVariant forces one.
ChoiceRequest choice_request(const Kept& all, cl_context context, cl_device_id device,
                             const DeviceCaps& caps, int bits, bool a_trans, bool b_trans,
                             std::size_t m, std::size_t n, std::size_t k, std::size_t batch) {
  ChoiceRequest q;
  q.options.problem = {m, n, k, batch};
  q.options.form = std::string(a_trans ? "T" : "N") + (b_trans ? "T" : "N");
  q.options.store = all.store;
  q.family = GemmDotFit(caps, m, n, k, a_trans, b_trans)    ? &gemm_dot_family(bits)
             : GemmAxpyFit(caps, m, n, k, a_trans, b_trans) ? &gemm_axpy_family(bits)
             : GemmRowsFit(caps, bits, m, n, k, batch, b_trans, a_trans) ? &gemm_rows_family(bits)
                                                                         : &gemm_family(bits);
  if (auto it = all.overrides.find({device, bits}); it != all.overrides.end()) {
    q.options.variant = it->second.variant;
    q.options.tier = it->second.tier;
    q.family = it->second.family;
  }
  q.key = ChoiceKey{context,
                    device,
                    bits,
                    q.family,
                    q.options.form,
                    size_class(m),
                    size_class(n),
                    size_class(k),
                    size_class(batch),
                    size_alignment(m),
                    size_alignment(n),
                    size_alignment(k),
                    q.options.variant,
                    q.options.tier ? int(*q.options.tier) : -1};
  return q;
}

// A call's program and, where its class is being learned, the trial, the
// class's key and the call's turn (the candidate `chosen` is).
struct Choice {
  std::shared_ptr<const Chosen> chosen;
  std::shared_ptr<Learning> learning;
  ChoiceKey key;
  OnlineChoice::Turn turn;
};

// The program for this product: chosen by the loader for the device,
// precision, form and shape (its tuning entries, else its ranking), or the
// variant OverrideVariant forces; built on first use and kept. Where the
// class is learned (GemmLearnOnline), the candidate whose turn it is.
Choice choose(cl_context context, cl_device_id device, const DeviceCaps& caps, int bits,
              bool a_trans, bool b_trans, std::size_t m, std::size_t n, std::size_t k,
              std::size_t batch) {
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  const ChoiceRequest q =
      choice_request(all, context, device, caps, bits, a_trans, b_trans, m, n, k, batch);
  Choice out;
  out.key = q.key;
  out.chosen = kept_or_loaded(all, q.key, context, device, caps, *q.family, q.options,
                              q.options.variant.empty());
  if (all.learning.empty()) return out;
  const auto it = all.learning.find(q.key);
  if (it == all.learning.end()) return out;
  out.learning = it->second;
  out.turn = out.learning->online->next();
  out.chosen = as_chosen(*out.learning, out.turn.candidate, *out.turn.kernel, *q.family);
  return out;
}

// The call ran the current choice of its class, untimed (its candidate
// left out).
void back_to_current(Choice& choice) {
  std::lock_guard<std::mutex> lock(kept().mutex);
  choice.chosen = choice.learning->as_chosen[0];
  choice.turn = {choice.learning->online->candidate(0), 0, false};
}

// Every candidate of the call's class that is built (none where its class
// is not learned), as the calls keep them.
std::vector<std::shared_ptr<const Chosen>> candidates(const Choice& choice) {
  std::vector<std::shared_ptr<const Chosen>> out;
  if (!choice.learning) return out;
  std::lock_guard<std::mutex> lock(kept().mutex);
  Learning& l = *choice.learning;
  for (std::size_t c = 0; c < l.as_chosen.size(); ++c) {
    if (const LoadedKernel* k = l.online->candidate(c)) {
      out.push_back(as_chosen(l, c, *k, *std::get<3>(choice.key)));
    }
  }
  return out;
}

// The trial of the call's class settled: its choice is kept for the class
// (tuned: its entry measured here), the trial dropped.
void settle(const Choice& choice) {
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  const auto it = all.learning.find(choice.key);
  if (it == all.learning.end() || it->second != choice.learning) return;
  const LoadedKernel& learned = choice.learning->online->choice();
  all.choices[choice.key] =
      chosen_of(learned, *std::get<3>(choice.key), learned.tuning_entry.has_value());
  all.planned.erase(choice.key);
  all.saving.erase(std::remove_if(all.saving.begin(), all.saving.end(),
                                  [](const auto& l) { return !l->online->saving(); }),
                   all.saving.end());
  if (it->second->online->saving()) all.saving.push_back(it->second);
  all.learning.erase(it);
}

// The point choose() takes for one product (the first of the loader's
// plan) and its function's name, without building it; kept. Empty where
// the plan has none (choose() then says why).
Planned planned(cl_context context, cl_device_id device, const DeviceCaps& caps, int bits,
                bool a_trans, bool b_trans, std::size_t m, std::size_t n, std::size_t k) {
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  const ChoiceRequest q =
      choice_request(all, context, device, caps, bits, a_trans, b_trans, m, n, k, 1);
  if (auto it = all.choices.find(q.key); it != all.choices.end()) {
    return {it->second->variant, it->second->kernel};
  }
  if (auto it = all.planned.find(q.key); it != all.planned.end()) return it->second;
  const Plan p = ranked_plan(*q.family, caps, q.options);
  Planned out;
  if (!p.chain.empty()) out = {*p.chain.front().variant, q.family->manifest().kernel};
  return all.planned.emplace(q.key, out).first->second;
}

// The packing kernel for `bits`-bit elements, built on first use and kept
// like the products' programs.
std::shared_ptr<const Chosen> choose_transpose(cl_context context, cl_device_id device,
                                               const DeviceCaps& caps, int bits) {
  LoadOptions options;
  options.variant = "gemm_transpose_BITS" + std::to_string(bits);
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  const Family& family = detail::gemm_transpose_family();
  const ChoiceKey key{context, device, bits, &family, "", 0, 0, 0, 0, 0, 0, 0, options.variant, -1};
  return kept_or_loaded(all, key, context, device, caps, family, options);
}

// The pass that adds the parts of a split K, kept like the packing kernel.
std::shared_ptr<const Chosen> choose_sum_parts(cl_context context, cl_device_id device,
                                               const DeviceCaps& caps, int bits) {
  LoadOptions options;
  options.variant = "gemm_sum_parts_PRECISION" + std::to_string(bits);
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  const Family& family = detail::gemm_sum_parts_family();
  const ChoiceKey key{context, device, bits, &family, "", 0, 0, 0, 0, 0, 0, 0, options.variant, -1};
  return kept_or_loaded(all, key, context, device, caps, family, options);
}

// The parts one product's K is split into on the point `chosen`:
// OverrideKParts', else the axpy family's own (detail::axpy_k_parts), else
// GemmKParts'.
std::size_t k_parts(cl_device_id device, const DeviceCaps& caps, int bits, const Chosen& chosen,
                    std::size_t m, std::size_t n, std::size_t k) {
  {
    Kept& all = kept();
    std::lock_guard<std::mutex> lock(all.mutex);
    if (auto it = all.k_parts.find({device, bits}); it != all.k_parts.end()) return it->second;
  }
  if (chosen.kernel == "gemm_axpy") return detail::axpy_k_parts(chosen.variant, caps, m, n, k);
  return GemmKParts(caps, bits, m, n, k);
}

// The passes a product enqueues before its launches, for the point
// `variant` of the function `kernel` and one row-major form (run() explains
// each): op(A) = A^T packed, op(B) packed into panels, B^T packed, B copied
// into longer rows.
struct Passes {
  bool blocked = false;  // the reference path reads any form
  bool pack_a = false, pack_b = false, copy_b = false;
  std::size_t b_padded_ld = 0, panel = 0, b_packed_ld = 0, a_packed_ld = 0;
  std::size_t a_packed = 0, b_packed = 0;  // elements a product
  // What the passes cost, in elements copied: by the difference between
  // calls with and without each pass (PoCL, 2 Zen 4 cores, 2026-12-04),
  // 2048 x 2048 floats took 3.7 to 4 ms through the transposing pass into
  // rows 8 KiB apart and 0.5 to 0.7 ms copied into longer rows.
  static constexpr std::size_t kTransposed = 4;
  std::size_t moved() const {
    return kTransposed * (a_packed + (pack_b ? b_packed : 0)) + (pack_b ? 0 : b_packed);
  }
};

// The work of `chosen`'s tiles over an m x n C against C's own (1: no
// padding; 1 for the reference path).
double tile_waste(const Planned& chosen, std::size_t m, std::size_t n) {
  if (chosen.kernel != "gemm_blocked") return 1;
  return 1 / detail::tiles_share_of_c(chosen.variant, m, n);
}

// The rows of tiles from which a CPU point gets B copied into longer rows
// (passes_for).
constexpr std::size_t kCopiedBMinTileRows = 3;

Passes passes_for(const Variant& variant, const std::string& kernel, const DeviceCaps& caps,
                  bool a_trans, bool b_trans, std::size_t m, std::size_t n, std::size_t k_used,
                  std::size_t b_ld, bool one_product, std::size_t element) {
  Passes p;
  p.blocked = kernel == "gemm_blocked";
  const bool reads = p.blocked && k_used > 0;
  p.pack_a = reads && a_trans && variant.param("SA") == 0;
  // (The rows family transposes B^T a tile at a time itself.)
  p.pack_b = reads && b_trans && variant.param("SB") == 0;
  p.b_padded_ld =
      reads ? matmul_padded_ldb(MatmulKernel::Blocked, variant, caps, b_trans ? n : b_ld, element)
            : 0;
  p.panel = reads && one_product
                ? matmul_b_panel_width(MatmulKernel::Blocked, variant, caps, m, n, k_used, element)
                : 0;
  // B is copied only where 3 or more rows of tiles read each column of it:
  // the copy reads and writes all of B once, the aliasing costs a reread of
  // B's panel per row of tiles after the first. Row-major 32 x 2048 x 2048
  // (one or two rows of tiles) took 2.9 to 3.8 ms with B copied, 2.1 to
  // 2.4 ms read in place; 64 x 2048 x 2048 (two to four rows) 4.4 to 5.3
  // against 3.8 to 4.7; 96 x 2048 x 2048 was level, and 512 x 2048 x 128
  // (16 rows and more, B 1 MiB) took 1.37 copied, 1.61 in place (PoCL,
  // 2 Zen 4 cores, 2026-12-05, calls in turn; the copy of B alone took 1.1
  // to 1.3 ms).
  if (p.b_padded_ld && !b_trans && !p.panel) {
    const std::size_t mwg = std::size_t(variant.param("MWG"));
    p.copy_b = (m + mwg - 1) / mwg >= kCopiedBMinTileRows;
  }
  p.b_packed_ld = p.pack_b && p.b_padded_ld ? p.b_padded_ld : n;
  // A^T's packed rows one cache line longer where k of them would alias
  // (the pass writes a block's columns down 16 of them): row-major
  // 2048 x 32 x 2048 with op(A) = A^T took 5.5 to 7.2 ms with the rows
  // 8 KiB apart, 4.1 to 4.6 with them longer (PoCL, 2 Zen 4 cores).
  if (p.pack_a) {
    const std::size_t padded =
        matmul_padded_ldb(MatmulKernel::Blocked, variant, caps, k_used, element);
    p.a_packed_ld = padded ? padded : k_used;
  }
  p.a_packed = p.pack_a ? m * p.a_packed_ld : 0;
  p.b_packed = p.panel    ? k_used * n
               : p.pack_b ? k_used * p.b_packed_ld
               : p.copy_b ? k_used * p.b_padded_ld
                          : 0;
  return p;
}

// Where a call's packing pass writes (`mem`), and what keeps it so until
// the call has enqueued its launches.
struct PackingSpace {
  cl_mem mem = nullptr;
  cl::Buffer own;                    // a buffer of the call's own
  std::shared_ptr<Scratch> kept;     // or the queue's kept one,
  std::unique_lock<std::mutex> lock;  // locked
};

// `bytes` of space for the packing pass of a call on `queue`: the caller's
// temp_buffer where given (checked against `bytes` before), else the
// queue's kept Scratch where it is in order (grown where it is too small),
// else a new buffer (its launches keep it until they are done).
PackingSpace packing_space(cl_context context, cl_command_queue queue, std::size_t bytes,
                           cl_mem temp) {
  PackingSpace space;
  if (temp) {
    space.mem = temp;
    return space;
  }
  cl_command_queue_properties properties = 0;
  check_cl(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties,
                                 nullptr),
           "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)");
  auto make = [&] {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check_cl(err, "clCreateBuffer(the packed transposes, " + std::to_string(bytes) + " bytes)");
    return cl::Buffer(m, false);
  };
  if (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    space.own = make();
    space.mem = space.own();
    return space;
  }
  {
    Kept& all = kept();
    std::lock_guard<std::mutex> lock(all.mutex);
    std::shared_ptr<Scratch>& kept_scratch = all.scratch[queue];
    if (!kept_scratch) kept_scratch = std::make_shared<Scratch>();
    space.kept = kept_scratch;
  }
  space.lock = std::unique_lock<std::mutex>(space.kept->mutex);
  Scratch& s = *space.kept;
  if (s.bytes < bytes) {
    if (!s.queue()) s.queue = cl::CommandQueue(queue, true);
    s.buffer = make();
    s.bytes = bytes;
  }
  space.mem = s.buffer();
  return space;
}

// The context's placeholder, retained (ClearCache may drop the kept one
// while a call uses it).
cl::Buffer placeholder(cl_context context) {
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = all.placeholders.find(context);
  if (it == all.placeholders.end()) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_ONLY, 16, nullptr, &err);
    check_cl(err, "clCreateBuffer(the batch arguments' placeholder)");
    it = all.placeholders.emplace(context, cl::Buffer(m, false)).first;
  }
  return it->second;
}

// A buffer of `bytes` from host memory, released at scope exit (the
// launches that use it keep it until they are done).
struct HostCopy {
  cl_mem m = nullptr;
  HostCopy(cl_context context, const void* data, std::size_t bytes, const char* what) {
    cl_int err = CL_SUCCESS;
    m = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                       const_cast<void*>(data), &err);
    check_cl(err, std::string("clCreateBuffer(") + what + ")");
  }
  ~HostCopy() {
    if (m) clReleaseMemObject(m);
  }
  HostCopy(const HostCopy&) = delete;
  HostCopy& operator=(const HostCopy&) = delete;
};

StatusCode finish(cl_command_queue queue, cl_event* event) {
  if (event) {
    check_cl(clEnqueueMarkerWithWaitList(queue, 0, nullptr, event),
             "clEnqueueMarkerWithWaitList");
  }
  return StatusCode::kSuccess;
}

StatusCode run(Request r) {
  if (!r.queue || !*r.queue) {
    g_message = "the command queue is null";
    return StatusCode::kInvalidCommandQueue;
  }
  cl_command_queue queue = *r.queue;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  for (const auto& [param, value, name] :
       {std::tuple{cl_command_queue_info(CL_QUEUE_CONTEXT), static_cast<void*>(&context),
                   "CL_QUEUE_CONTEXT"},
        std::tuple{cl_command_queue_info(CL_QUEUE_DEVICE), static_cast<void*>(&device),
                   "CL_QUEUE_DEVICE"}}) {
    if (const cl_int err = clGetCommandQueueInfo(queue, param, sizeof(void*), value, nullptr);
        err != CL_SUCCESS) {
      // OpenCL's status passes through (CL_INVALID_COMMAND_QUEUE is
      // kInvalidCommandQueue, want of memory or a lost device its own).
      g_message = std::string("the command queue: clGetCommandQueueInfo(") + name +
                  ") failed with " + cl_status_name(err) +
                  (err == CL_INVALID_COMMAND_QUEUE ? " (not a valid OpenCL command queue)" : "");
      return static_cast<StatusCode>(err);
    }
  }
  std::shared_ptr<const DeviceFacts> kept_facts;
  {
    Kept& all = kept();
    std::unique_lock<std::mutex> lock(all.mutex);
    auto it = all.devices.find(device);
    if (it == all.devices.end()) {
      lock.unlock();
      auto f = std::make_shared<const DeviceFacts>(facts_of(device));
      lock.lock();
      it = all.devices.emplace(device, std::move(f)).first;
    }
    kept_facts = it->second;
  }
  const DeviceFacts& facts = *kept_facts;
  std::unique_lock<std::mutex> one_at_a_time(kept().one_at_a_time, std::defer_lock);
  if (facts.one_call_at_a_time) one_at_a_time.lock();
  if (auto f = check(r, facts)) {
    g_message = f->why;
    return f->status;
  }
  // Reference BLAS's quick return: nothing to compute, nothing to scale.
  const bool all_alpha_zero =
      r.batched ? std::all_of(r.alphas.begin(), r.alphas.end(), [](double x) { return x == 0; })
                : r.alpha == 0;
  const bool all_beta_one =
      r.batched ? std::all_of(r.betas.begin(), r.betas.end(), [](double x) { return x == 1; })
                : r.beta == 1;
  if (r.m == 0 || r.n == 0 || ((r.k == 0 || all_alpha_zero) && all_beta_one)) {
    if (r.temp_size) {
      *r.temp_size = 0;
      return StatusCode::kSuccess;
    }
    g_last_call.nothing = r.m == 0 || r.n == 0 ? "C is empty" : "C = beta C with beta 1";
    return finish(queue, r.event);
  }
  // Column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T: the
  // same memory, the operands swapped, M and N swapped.
  bool a_trans = transposed(r.a_transpose), b_trans = transposed(r.b_transpose);
  // A and B trade places, and M and N (their transposes are the caller's).
  auto swap_operands = [&r] {
    std::swap(r.m, r.n);
    std::swap(r.a, r.b);
    std::swap(r.a_ld, r.b_ld);
    std::swap(r.a_offsets, r.b_offsets);
    std::swap(r.a_offset, r.b_offset);
    std::swap(r.a_stride, r.b_stride);
  };
  if (r.layout == Layout::kColMajor) {
    swap_operands();
    std::swap(a_trans, b_trans);
  }
  const std::size_t k_used = all_alpha_zero ? 0 : r.k;
  const std::size_t element = std::size_t(r.bits) / 8;
  const bool one_product = r.batch == 1 && !r.batched;
  // A product of one row whose op(B) = B^T runs as its transpose in place
  // where that is a product of the rows family: C^T (n x 1, rows 1 apart)
  // is C's own memory, so nothing is moved. Otherwise the rows family reads
  // op(B) = B^T a tile at a time, transposing it (or a blocked point packs
  // it); as the transpose, a product of one column, it reads that operand
  // along its rows, once. Column-major 4000 x 1 x 1000 with op(A) = A^T
  // (row-major 1 x 4000, op(B) = B^T) took 1.80 times row NN's time, row
  // NT 1 x 8000 x 1000 2.33 (Intel's CPU runtime, 2 Xeon cores, 2026-12-07).
  // So does one with op(B) = B that the rows family does not take (its
  // stripes too few for the units): row-major 1 x 300 x 200 took 0.08 ms on
  // a blocked point's guarded path, 0.02 as its transpose.
  const bool one_row_turned =
      k_used > 0 && r.m == 1 && r.n > 1 &&
      (b_trans || !GemmRowsFit(facts.caps, r.bits, 1, r.n, k_used, r.batch, false, a_trans)) &&
      GemmRowsFit(facts.caps, r.bits, r.n, 1, k_used, r.batch, false, !b_trans);
  // The product as its transpose, C^T = op(B)^T op(A)^T: B the left
  // operand, A the right, each transposed where it was not (C^T is the
  // caller's to place).
  auto as_its_transpose = [&swap_operands, &a_trans, &b_trans] {
    swap_operands();
    const bool was_a_trans = a_trans;
    a_trans = !b_trans;
    b_trans = !was_a_trans;
  };
  if (one_row_turned) {
    as_its_transpose();
    r.c_ld = 1;
  }
  // One column of op(B) = B^T is B's one stored row, its elements next to
  // each other: the same memory as op(B) = B with rows 1 apart, which no
  // point packs or transposes. Row-major 300 x 1 x 200 with op(A) = A^T
  // took 0.19 ms with op(B) = B^T, 0.02 with op(B) = B (Intel's CPU
  // runtime, 2 Xeon cores, 2026-12-07).
  if (r.n == 1 && b_trans) {
    b_trans = false;
    r.b_ld = 1;
  }
  // A point that reads an operand from global memory takes its transpose
  // packed by a pass first (its loads of B run along N, which B^T does not
  // hold contiguously; A^T read in place cost it 1.3 to 2.5 times NN's
  // time); the passes are part of the call. Packed A^T (m x k per product)
  // comes first in the space, B^T (k x n) after it.
  // Such a point on a CPU takes B itself copied into rows one cache line
  // longer where its rows lie a multiple of 4 KiB apart (matmul_padded_ldb:
  // they would fall into the same few cache sets) and 3 or more rows of
  // tiles read them (passes_for), after A^T where packed.
  // B^T is packed into such rows too where n of them would alias.
  // One product (not a batch) whose B rows lie a page apart takes op(B)
  // packed into panels instead (matmul_b_panel_width; B copied, B^T packed
  // by the pass, a panel at a time), the last panel up to twice as wide;
  // the panels of one width are one launch, a batch whose products share A
  // (0.70-0.93 of the time a launch per panel took, every form, on the
  // SPIR-V PoCL's AVX2 code at 1024^3 and 2048^3, 2 Zen 4 cores, 2026-12-05).
  // One product whose passes transpose an operand is computed as its
  // transpose where that moves at most half as much (as much, where the
  // transpose packs nothing: op(A) = A^T and op(B) = B^T, whose one pass
  // over C^T replaces two packing passes; at 256^3 TT took 1.40 times
  // NN's time on PoCL with them, 1.01-1.11 as the transpose, and 1.21 and
  // 1.15 on Intel's runtime, 2 Zen 4 cores, 2026-12-04): C^T = op(B)^T op(A)^T,
  // B the left operand and A the right, each transposed where it was not,
  // C^T written into the space after the packed operands (C moved in first
  // where beta is not 0) and moved into C after the launches. With a thin
  // side that spares the pass over the large operand: 2048 x 32 x 2048
  // with op(A) = A^T packed all of A (4 Mi elements) for a product that
  // reads each of them 32 times; its transpose packs B (64 Ki) and moves C
  // twice (64 Ki each). C is weighed as moved twice whatever beta is, so
  // that GemmTempBufferSize, which has no beta, gives the call's space.
  // Each form is weighed with the point the loader would take for it
  // (nothing built), and the transpose only where that point's tiles
  // pad C no more: column-major 4096 x 8 x 4096 with op(A) = A^T (row-major
  // 8 x 4096, B^T packed) ran 23 ms on Intel's CPU runtime and 27 to 29 as
  // 4096 x 8 on tiles 32 wide, where row-major TN at that shape went from
  // 36 to 20.
  bool as_transpose = false;
  if (!one_row_turned && one_product && k_used > 0 && (a_trans || b_trans)) {
    const Planned point =
        planned(context, device, facts.caps, r.bits, a_trans, b_trans, r.m, r.n, k_used);
    const Passes passes = passes_for(point.variant, point.kernel, facts.caps, a_trans, b_trans, r.m,
                                     r.n, k_used, r.b_ld, true, element);
    // (A point that transposes nothing, a staged one, has nothing to weigh.)
    // The rows family reads op(A) = A^T in place, down its columns where C
    // has a few columns (each step of K a row of A^T further): as its
    // transpose the product has a few rows, A read along its rows, and
    // moves C^T twice, a few columns' worth. Row TN at 2000 x 8 x 1000 and
    // 4000 x 12 x 500 took 1.31 and 1.21 times NN's time in place, their
    // transposes (column-major NT) 0.83 and 0.48 (Intel's CPU runtime, 2
    // Xeon cores, 2026-12-07).
    // In half precision, where the family takes products of any width, so
    // does every product narrower than the point's tile (64 columns): row
    // TN at 2048 x 32 x 2048 took 1.27 times NN's time in place, 0.52 as
    // its transpose (Intel's CPU runtime, 2 Xeon cores, 2026-12-07).
    if (point.kernel == "gemm_rows" && a_trans && !b_trans &&
        r.n < (r.bits == 16 ? detail::rows_tile_width(point.variant, r.bits)
                            : kGemmRowsFewColumns)) {
      as_transpose = GemmRowsFit(facts.caps, r.bits, r.n, r.m, k_used, 1, false, true);
    } else if (passes.pack_a || passes.pack_b) {
      const Planned t_point =
          planned(context, device, facts.caps, r.bits, !b_trans, !a_trans, r.n, r.m, k_used);
      const Passes t = passes_for(t_point.variant, t_point.kernel, facts.caps, !b_trans, !a_trans,
                                  r.n, r.m, k_used, r.a_ld, true, element);
      const std::size_t c_moved = 2 * Passes::kTransposed * r.m * r.n;
      const std::size_t margin = t.moved() == 0 ? 1 : 2;
      as_transpose = margin * (t.moved() + c_moved) <= passes.moved() &&
                     tile_waste(t_point, r.n, r.m) <= tile_waste(point, r.m, r.n);
    }
  }
  if (as_transpose) as_its_transpose();
  // One product on a GPU with more units than its tiles runs as parts of
  // K (GemmKParts; half precision never): a batch over the parts, each
  // writing its own product into the space after the packed operands (and
  // C^T), then a pass that adds them into C with alpha and beta. Each
  // part's K is a multiple of 64 where it is longer; what is left of K
  // is added onto the last part's product. The point is the one chosen
  // for the call's shape (its tuning entries time the split call; the
  // model counts the parts).
  Choice choice =
      choose(context, device, facts.caps, r.bits, a_trans, b_trans, r.m, r.n, k_used, r.batch);
  // What a point's call writes beside C: K in parts, the passes, and the
  // space they take.
  struct Space {
    std::size_t part_k = 0, whole_parts = 0, rest_k = 0, planes = 0;
    bool split = false;
    Passes passes;
    std::size_t c_start = 0, w_start = 0, bytes = 0;
  };
  auto space_for = [&](const Chosen& point) {
    Space s;
    // (The dot family spreads K over a GPU's work-items itself.)
    s.part_k = k_used;
    if (one_product && k_used > 0 && r.bits != 16 && point.kernel != "gemm_dot") {
      const std::size_t parts = k_parts(device, facts.caps, r.bits, point, r.m, r.n, k_used);
      s.part_k = (k_used + parts - 1) / parts;
      if (s.part_k > 64) s.part_k = (s.part_k + 63) / 64 * 64;
    }
    s.whole_parts = s.part_k ? k_used / s.part_k : 0;
    s.rest_k = s.part_k ? k_used % s.part_k : 0;
    s.split = s.whole_parts > 1;
    s.planes = s.split ? s.whole_parts : 0;
    s.passes = passes_for(point.variant, point.kernel, facts.caps, a_trans, b_trans, r.m, r.n,
                          k_used, r.b_ld, one_product && !s.split, element);
    // C^T (r.m x r.n, the call's C transposed) after the packed operands.
    s.c_start = (s.passes.a_packed + s.passes.b_packed) * r.batch;
    // The parts' products after it.
    s.w_start = s.c_start + (as_transpose ? r.m * r.n : 0);
    s.bytes = (s.w_start + s.planes * r.m * r.n) * element;
    return s;
  };
  Space space_needed = space_for(*choice.chosen);
  // The passes' programs a point's call takes, built now where they are
  // not yet: on the class's first use (GemmTempBufferSize) and, while it
  // is learned, for every candidate, so that no call of the trial builds
  // one (a learned class's first call ran 0.6 to 1.1 ms slow, 4 to 15 times
  // the choice's call, at shapes whose K the rules split, on an H100 and
  // the H200, 2026-12-07: the summing pass built there is the likely cause,
  // not yet timed apart).
  auto build_passes = [&](const Space& s) {
    if (s.split) (void)choose_sum_parts(context, device, facts.caps, r.bits);
    if (s.passes.pack_a || s.passes.pack_b || as_transpose) {
      (void)choose_transpose(context, device, facts.caps, r.bits);
    }
  };
  if (r.temp_size || choice.learning) {
    std::size_t most = space_needed.bytes;
    build_passes(space_needed);
    for (const std::shared_ptr<const Chosen>& c : candidates(choice)) {
      const Space s = space_for(*c);
      most = std::max(most, s.bytes);
      build_passes(s);
    }
    // While the class is learned, the most any of its candidates takes.
    if (r.temp_size) {
      *r.temp_size = most;
      return StatusCode::kSuccess;
    }
  }
  std::size_t temp_bytes = 0;
  if (r.temp && space_needed.bytes > 0) {
    if (const cl_int err =
            clGetMemObjectInfo(r.temp, CL_MEM_SIZE, sizeof temp_bytes, &temp_bytes, nullptr);
        err != CL_SUCCESS) {
      g_message = "the temporary buffer: clGetMemObjectInfo(CL_MEM_SIZE) failed with " +
                  cl_status_name(err);
      return static_cast<StatusCode>(err);  // CL_INVALID_MEM_OBJECT is kInvalidMemObject
    }
    if (temp_bytes < space_needed.bytes && choice.learning && choice.turn.candidate != 0) {
      choice.learning->online->leave_out(
          choice.turn.candidate, "its passes take " + std::to_string(space_needed.bytes) +
                                     " bytes; the call's temporary buffer holds " +
                                     std::to_string(temp_bytes));
      back_to_current(choice);
      space_needed = space_for(*choice.chosen);
    }
  }
  const Chosen& chosen = *choice.chosen;
  const std::size_t part_k = space_needed.part_k, whole_parts = space_needed.whole_parts;
  const std::size_t rest_k = space_needed.rest_k, planes = space_needed.planes;
  const bool split = space_needed.split;
  const Passes& passes = space_needed.passes;
  const bool blocked = passes.blocked;
  const bool pack_a = passes.pack_a, pack_b = passes.pack_b, copy_b = passes.copy_b;
  const std::size_t panel = passes.panel, b_padded_ld = passes.b_padded_ld;
  const std::size_t b_packed_ld = passes.b_packed_ld;
  const std::size_t a_packed = passes.a_packed, b_packed = passes.b_packed;
  const std::size_t a_packed_ld = passes.a_packed_ld;
  // The columns of the panel from col0: `panel`, the last up to twice that.
  auto panel_cols = [&](std::size_t col0) { return col0 + 2 * panel <= r.n ? panel : r.n - col0; };
  const std::size_t c_start = space_needed.c_start, w_start = space_needed.w_start;
  const std::size_t packed_bytes = space_needed.bytes;
  if (r.temp && temp_bytes < packed_bytes) {
    const std::string b_what = panel      ? std::string(pack_b ? "B^T" : "B") + " into panels"
                               : pack_b   ? "B^T"
                               : b_packed ? "B with longer rows"
                                          : "";
    std::string what = pack_a && b_packed ? "A^T and " + b_what : pack_a ? "A^T" : b_what;
    // (As the transpose, A^T is B^T of the call, and B its A.)
    if (as_transpose) {
      what = (what.empty() ? "" : what + ", then ") + "C^T of the product's transpose";
    }
    if (split) {
      what = (what.empty() ? "" : what + ", then ") + "the products of K's " +
             std::to_string(planes) + " parts";
    }
    g_message = "the temporary buffer holds " + std::to_string(temp_bytes) + " bytes; packing " +
                what + " for this call takes " + std::to_string(packed_bytes) +
                " (GemmTempBufferSize)";
    return StatusCode::kInsufficientMemoryTemp;
  }
  // A learning call's time: from a finished queue to its last launch done.
  std::chrono::steady_clock::time_point started;
  if (choice.turn.timed) {
    check_cl(clFinish(queue), "clFinish before a timed call (learning online)");
    started = std::chrono::steady_clock::now();
  }
  const Borrowed kernel(chosen.program(), chosen.kernel);

  detail::GemmLaunch l;
  l.m = r.m, l.n = r.n;
  l.a = r.a, l.b = r.b, l.c = r.c;
  l.a_ld = r.a_ld, l.b_ld = r.b_ld, l.c_ld = r.c_ld;
  l.a_trans = a_trans, l.b_trans = b_trans;
  l.batch = r.batch;
  l.units = facts.caps.compute_units;
  l.alpha = r.alpha, l.beta = r.beta;
  l.a_offset = r.a_offset, l.b_offset = r.b_offset, l.c_offset = r.c_offset;
  l.a_stride = r.a_stride, l.b_stride = r.b_stride, l.c_stride = r.c_stride;
  std::optional<HostCopy> offsets, scalars, given_offsets;
  const cl::Buffer unused = placeholder(context);  // for the arguments a launch does not read
  PackingSpace space;  // held until the last launch is enqueued
  // The launches the next one waits for (owned: released however the call
  // ends), and their handles for a wait list.
  std::vector<cl::Event> last;
  auto waits = [&last] {
    std::vector<cl_event> handles;
    for (const cl::Event& e : last) handles.push_back(e());
    return handles;
  };
  std::vector<cl_long> o;
  if (r.batched) {
    o.resize(3 * r.batch);
    for (std::size_t i = 0; i < r.batch; ++i) {
      o[3 * i] = cl_long(r.a_offsets[i]);
      o[3 * i + 1] = cl_long(r.b_offsets[i]);
      o[3 * i + 2] = cl_long(r.c_offsets[i]);
    }
  }
  auto after = [&last](std::vector<cl_event> events) {
    for (cl_event e : events) last.emplace_back(e, false);
  };
  std::shared_ptr<const Chosen> t, sum;
  std::optional<Borrowed> blocks, edge, add;
  if (pack_a || pack_b || as_transpose) {
    t = choose_transpose(context, device, facts.caps, r.bits);
    blocks.emplace(t->program(), "gemm_transpose");
    edge.emplace(t->program(), "gemm_transpose_edge");
  }
  if (split) {
    sum = choose_sum_parts(context, device, facts.caps, r.bits);
    add.emplace(sum->program(), "gemm_sum_parts");
  }
  if (pack_a || pack_b || copy_b || panel || as_transpose || split) {
    cl_mem given = unused();
    if (r.batched) {
      given_offsets.emplace(context, o.data(), o.size() * sizeof(cl_long), "the batch's offsets");
      given = given_offsets->m;
    }
    space = packing_space(context, queue, packed_bytes, r.temp);
    std::vector<cl_event> read_by;  // the last launch that read the kept space
    if (space.kept && space.kept->read_by()) {
      read_by.push_back(space.kept->read_by());
      if (split) last.push_back(space.kept->read_by);  // the parts' launches write it too
    }
    if (pack_a) {
      // op(A), m x k, stored A^T (k x m), packed row-major in rows of
      // a_packed_ld at the space's start; the batch's A offsets (index 0 of
      // each product's three) follow it.
      const std::size_t per = a_packed;
      after(detail::launch_transpose(queue, (*blocks)(), (*edge)(), k_used, r.m, r.a, r.a_offset,
                                     r.a_ld, r.a_stride, given, r.batched, 0, space.mem, 0,
                                     a_packed_ld, r.batch, read_by));
      for (std::size_t i = 0; i < r.batch && r.batched; ++i) o[3 * i] = cl_long(i * per);
      l.a = space.mem, l.a_ld = a_packed_ld, l.a_trans = false, l.a_offset = 0, l.a_stride = per;
    }
    if (panel) {
      // op(B), k x n, after A^T as panels of `panel` columns, each k x its
      // width row-major: B's columns copied, B^T's rows packed by the pass.
      for (std::size_t col0 = 0; col0 < r.n; col0 += panel) {
        const std::size_t cols = panel_cols(col0);
        const std::size_t to = a_packed + col0 * k_used;
        after(pack_b ? detail::launch_transpose(queue, (*blocks)(), (*edge)(), cols, k_used, r.b,
                                                r.b_offset + col0 * r.b_ld, r.b_ld, 0, given, false,
                                                1, space.mem, to, cols, 1, read_by)
                     : detail::copy_rows(queue, r.b, {r.b_offset + col0}, r.b_ld, space.mem, to, 0,
                                         cols, cols, k_used, element, read_by));
        if (cols != panel) break;
      }
    } else if (pack_b) {
      // op(B), k x n, stored B^T (n x k), row-major in rows of b_packed_ld
      // after A^T; the batch's B offsets (index 1) follow it.
      const std::size_t start = a_packed * r.batch, per = b_packed;
      after(detail::launch_transpose(queue, (*blocks)(), (*edge)(), r.n, k_used, r.b, r.b_offset,
                                     r.b_ld, r.b_stride, given, r.batched, 1, space.mem, start,
                                     b_packed_ld, r.batch, read_by));
      for (std::size_t i = 0; i < r.batch && r.batched; ++i) o[3 * i + 1] = cl_long(start + i * per);
      l.b = space.mem, l.b_ld = b_packed_ld, l.b_trans = false, l.b_offset = start;
      l.b_stride = per;
    }
    if (copy_b) {
      // B, k x n a product, copied into rows of b_padded_ld after A^T: the
      // batch's B offsets (index 1) follow it.
      const std::size_t start = a_packed * r.batch, per = b_packed;
      std::vector<std::size_t> from(r.batch);
      for (std::size_t i = 0; i < r.batch; ++i) {
        from[i] = r.batched ? r.b_offsets[i] : r.b_offset + i * r.b_stride;
      }
      after(detail::copy_rows(queue, r.b, from, r.b_ld, space.mem, start, per, b_padded_ld, r.n,
                              k_used, element, read_by));
      for (std::size_t i = 0; i < r.batch && r.batched; ++i) o[3 * i + 1] = cl_long(start + i * per);
      l.b = space.mem, l.b_ld = b_padded_ld, l.b_offset = start, l.b_stride = per;
    }
    if (as_transpose) {
      // C^T, r.m x r.n, after the packed operands: C (r.n x r.m) moved in
      // where beta is not 0 (beta = 0 reads none of it).
      if (r.beta != 0) {
        after(detail::launch_transpose(queue, (*blocks)(), (*edge)(), r.n, r.m, r.c, r.c_offset,
                                       r.c_ld, 0, given, false, 2, space.mem, c_start, r.n, 1,
                                       read_by));
      }
      l.c = space.mem, l.c_ld = r.n, l.c_offset = c_start;
    }
  }
  if (r.batched) {
    offsets.emplace(context, o.data(), o.size() * sizeof(cl_long), "the batch's offsets");
    if (r.bits == 64) {
      std::vector<double> s(2 * r.batch);
      for (std::size_t i = 0; i < r.batch; ++i) s[2 * i] = r.alphas[i], s[2 * i + 1] = r.betas[i];
      scalars.emplace(context, s.data(), s.size() * sizeof(double), "the batch's alphas and betas");
    } else {
      std::vector<float> s(2 * r.batch);
      for (std::size_t i = 0; i < r.batch; ++i) {
        s[2 * i] = float(r.alphas[i]), s[2 * i + 1] = float(r.betas[i]);
      }
      scalars.emplace(context, s.data(), s.size() * sizeof(float), "the batch's alphas and betas");
    }
    l.per_batch = true;
    l.batch_offsets = offsets->m;
    l.batch_scalars = scalars->m;
  } else {
    l.batch_offsets = l.batch_scalars = unused();
  }
  // K in parts of at most k_per_launch (a driver's loop limit; on a CPU,
  // for a point that reads B in place, what keeps its panels in the caches,
  // and shorter where the rows it reads B from lie a page apart: a panel's
  // rows are its width apart), each after the first adding to C.
  const std::size_t k_per_launch =
      matmul_k_per_launch(facts.caps, blocked ? MatmulKernel::Blocked : MatmulKernel::Naive,
                          chosen.variant, (panel ? panel : l.b_ld) * element);
  std::size_t launches = 0;
  // With K split, the whole parts as a batch, each into its own m x n of
  // the space (alpha 1, beta 0), product p's operands part_k further along
  // K than p - 1's; the rest of K added onto the last one's.
  struct Part {
    std::size_t count, k, k_begin, plane;
    bool onto;  // added onto what the plane holds
  };
  std::vector<Part> parts{{r.batch, k_used, 0, 0, false}};
  // A call of one launch keeps its event only for the caller: nothing after
  // it in the call waits for it.
  const bool events = r.event || pack_a || pack_b || copy_b || panel || as_transpose || split ||
                      k_used > k_per_launch;
  const cl_mem c = l.c;
  const std::size_t c_offset = l.c_offset, c_ld = l.c_ld;
  if (split) {
    parts = {{whole_parts, part_k, 0, 0, false}};
    if (rest_k > 0) parts.push_back({1, rest_k, whole_parts * part_k, whole_parts - 1, true});
    l.c = space.mem, l.c_ld = r.n, l.c_stride = r.m * r.n;
    l.alpha = 1, l.beta = 0;
    l.a_stride = part_k * (l.a_trans ? l.a_ld : 1);
    l.b_stride = part_k * (l.b_trans ? 1 : l.b_ld);
  }
  // With B in panels, the panels of one width as a batch of products in one
  // launch: product p's B the next packed panel (k_used x panel), its C
  // `panel` columns further, A the same for all; then the last panel where
  // it is wider.
  for (std::size_t col0 = 0; col0 < r.n;) {
    std::size_t panels = 1;
    if (panel) {
      l.n = panel_cols(col0);
      while (col0 + (panels + 1) * l.n <= r.n && panel_cols(col0 + panels * l.n) == l.n) ++panels;
      l.b = space.mem, l.b_offset = a_packed + col0 * k_used, l.b_ld = l.n, l.b_trans = false;
      l.c_offset = c_offset + col0;
      l.a_stride = 0, l.b_stride = l.n * k_used, l.c_stride = l.n;
    }
    for (const Part& part : parts) {
      l.batch = panel ? panels : part.count;
      if (split) l.c_offset = w_start + part.plane * r.m * r.n;
      std::size_t k0 = 0;
      do {
        l.k_begin = part.k_begin + k0;
        l.k = std::min(k_per_launch, part.k - k0);
        l.accumulate = part.onto || k0 > 0;
        const cl_event done = detail::launch_gemm(queue, kernel(), chosen.variant, r.bits, l,
                                                  waits(), events);
        ++launches;
        if (done) last = {cl::Event(done, false)};
        k0 += l.k;
      } while (k0 < part.k);
    }
    col0 += panels * l.n;
  }
  if (split) {
    last = {
        cl::Event(detail::launch_sum_parts(queue, (*add)(), r.bits, r.m, r.n, planes, space.mem,
                                           w_start, r.alpha, r.beta, c, c_offset, c_ld, waits()),
                  false)};
  }
  if (as_transpose) {
    // C^T into C (r.n x r.m); one event for the call where the pass took two.
    std::vector<cl_event> moved =
        detail::launch_transpose(queue, (*blocks)(), (*edge)(), r.m, r.n, space.mem, c_start, r.n,
                                 0, unused(), false, 2, r.c, r.c_offset, r.c_ld, 1, waits());
    last.clear();
    after(std::move(moved));
    if (last.size() > 1) {
      const std::vector<cl_event> handles = waits();
      cl_event marker = nullptr;
      check_cl(clEnqueueMarkerWithWaitList(queue, cl_uint(handles.size()), handles.data(), &marker),
               "clEnqueueMarkerWithWaitList(after C^T moved into C)");
      last = {cl::Event(marker, false)};
    }
  }
  if (space.kept) space.kept->read_by = last.front();
  if (choice.turn.timed) {
    check_cl(clFinish(queue), "clFinish after a timed call (learning online)");
    const double ms = detail::ms_since(started);
    choice.learning->online->record(choice.turn, ms,
                                    2.0 * double(r.m) * double(r.n) * double(k_used) *
                                        double(r.batch));
  }
  // However the trial settled: by this call's timing, or by a candidate
  // left out for the caller's temporary buffer.
  if (choice.learning && choice.learning->online->settled()) settle(choice);
  // What ran (GemmLastCall() puts it into words).
  LastCall& ran = g_last_call;
  ran.why = chosen.why;
  ran.col_major = r.layout == Layout::kColMajor;
  ran.as_transpose = as_transpose;
  ran.one_row_turned = one_row_turned;
  ran.a_trans = a_trans, ran.b_trans = b_trans;
  ran.pack_a = pack_a, ran.pack_b = pack_b, ran.copy_b = copy_b;
  ran.batch = r.batch, ran.m = r.m, ran.n = r.n, ran.k = k_used;
  ran.panel = panel, ran.b_padded_ld = b_padded_ld, ran.planes = split ? planes : 0;
  ran.launches = launches, ran.k_per_launch = k_per_launch;
  ran.learning = choice.learning;
  ran.candidate = choice.turn.candidate, ran.timed = choice.turn.timed;
  if (r.event) {
    check_cl(clRetainEvent(last.front()()), "clRetainEvent");
    *r.event = last.front()();
  }
  return StatusCode::kSuccess;
}

// run() with every exception turned into a status and a message.
StatusCode guarded(Request r) {
  g_message.clear();
  g_last_call = {};
  try {
    return run(std::move(r));
  } catch (const Error& e) {
    g_message = e.what();
    if (e.cl_code() != 0) return static_cast<StatusCode>(e.cl_code());
    return std::string_view(e.what()).rfind("no variant of ", 0) == 0
               ? StatusCode::kOpenCLBuildProgramFailure
               : StatusCode::kUnknownError;
  } catch (const std::bad_alloc&) {
    g_message = "out of host memory";
    return StatusCode::kOpenCLOutOfHostMemory;
  } catch (const std::exception& e) {
    g_message = e.what();
    return StatusCode::kUnexpectedError;
  }
}

template <typename T>
struct Precision;
template <>
struct Precision<float> {
  static constexpr int bits = 32;
  static double value(float x) { return x; }
};
template <>
struct Precision<double> {
  static constexpr int bits = 64;
  static double value(double x) { return x; }
};
template <>
struct Precision<half> {
  static constexpr int bits = 16;
  static double value(half x) { return detail::half_to_float(x); }
};

template <typename T>
Request request(Layout layout, Transpose a_transpose, Transpose b_transpose, std::size_t m,
                std::size_t n, std::size_t k, cl_mem a, std::size_t a_ld, cl_mem b,
                std::size_t b_ld, cl_mem c, std::size_t c_ld, cl_command_queue* queue,
                cl_event* event) {
  Request r;
  r.bits = Precision<T>::bits;
  r.layout = layout;
  r.a_transpose = a_transpose;
  r.b_transpose = b_transpose;
  r.m = m, r.n = n, r.k = k;
  r.a = a, r.b = b, r.c = c;
  r.a_ld = a_ld, r.b_ld = b_ld, r.c_ld = c_ld;
  r.queue = queue;
  r.event = event;
  return r;
}

}  // namespace

bool GemmLanesFit(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                  std::size_t batch) {
  return caps.is_gpu() && size_class(batch) >= 1 && size_class(m) <= kLanesMostClass &&
         size_class(n) <= kLanesMostClass && size_class(k) <= kLanesMostClass;
}

template <typename T>
StatusCode Gemm(const Layout layout, const Transpose a_transpose, const Transpose b_transpose,
                const size_t m, const size_t n, const size_t k, const T alpha,
                const cl_mem a_buffer, const size_t a_offset, const size_t a_ld,
                const cl_mem b_buffer, const size_t b_offset, const size_t b_ld, const T beta,
                cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                cl_command_queue* queue, cl_event* event, cl_mem temp_buffer) {
  Request r = request<T>(layout, a_transpose, b_transpose, m, n, k, a_buffer, a_ld, b_buffer, b_ld,
                         c_buffer, c_ld, queue, event);
  r.alpha = Precision<T>::value(alpha);
  r.beta = Precision<T>::value(beta);
  r.a_offset = a_offset, r.b_offset = b_offset, r.c_offset = c_offset;
  r.temp = temp_buffer;
  return guarded(std::move(r));
}

template <typename T>
StatusCode GemmTempBufferSize(const Layout layout, const Transpose a_transpose,
                              const Transpose b_transpose, const size_t m, const size_t n,
                              const size_t k, const size_t a_offset, const size_t a_ld,
                              const size_t b_offset, const size_t b_ld, const size_t c_offset,
                              const size_t c_ld, cl_command_queue* queue,
                              size_t& temp_buffer_size) {
  Request r = request<T>(layout, a_transpose, b_transpose, m, n, k, nullptr, a_ld, nullptr, b_ld,
                         nullptr, c_ld, queue, nullptr);
  r.a_offset = a_offset, r.b_offset = b_offset, r.c_offset = c_offset;
  std::size_t size = 0;
  r.temp_size = &size;
  const StatusCode status = guarded(std::move(r));
  if (status == StatusCode::kSuccess) temp_buffer_size = size;
  return status;
}

template <typename T>
StatusCode GemmBatched(const Layout layout, const Transpose a_transpose,
                       const Transpose b_transpose, const size_t m, const size_t n,
                       const size_t k, const T* alphas, const cl_mem a_buffer,
                       const size_t* a_offsets, const size_t a_ld, const cl_mem b_buffer,
                       const size_t* b_offsets, const size_t b_ld, const T* betas,
                       cl_mem c_buffer, const size_t* c_offsets, const size_t c_ld,
                       const size_t batch_count, cl_command_queue* queue, cl_event* event) {
  g_message.clear();
  if (batch_count > 0 && (!alphas || !betas || !a_offsets || !b_offsets || !c_offsets)) {
    g_message = std::string("the batch's ") +
                (!alphas ? "alphas" : !betas ? "betas" : !a_offsets ? "A offsets"
                                                      : !b_offsets ? "B offsets" : "C offsets") +
                " are null";
    return StatusCode::kInvalidValue;
  }
  Request r = request<T>(layout, a_transpose, b_transpose, m, n, k, a_buffer, a_ld, b_buffer, b_ld,
                         c_buffer, c_ld, queue, event);
  r.batched = true;
  r.batch = batch_count;
  try {
    r.a_offsets.assign(a_offsets, a_offsets + batch_count);
    r.b_offsets.assign(b_offsets, b_offsets + batch_count);
    r.c_offsets.assign(c_offsets, c_offsets + batch_count);
    for (std::size_t i = 0; i < batch_count; ++i) {
      r.alphas.push_back(Precision<T>::value(alphas[i]));
      r.betas.push_back(Precision<T>::value(betas[i]));
    }
  } catch (const std::bad_alloc&) {
    g_message = "out of host memory for the batch's arguments";
    return StatusCode::kOpenCLOutOfHostMemory;
  }
  return guarded(std::move(r));
}

template <typename T>
StatusCode GemmStridedBatched(const Layout layout, const Transpose a_transpose,
                              const Transpose b_transpose, const size_t m, const size_t n,
                              const size_t k, const T alpha, const cl_mem a_buffer,
                              const size_t a_offset, const size_t a_ld, const size_t a_stride,
                              const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                              const size_t b_stride, const T beta, cl_mem c_buffer,
                              const size_t c_offset, const size_t c_ld, const size_t c_stride,
                              const size_t batch_count, cl_command_queue* queue,
                              cl_event* event) {
  Request r = request<T>(layout, a_transpose, b_transpose, m, n, k, a_buffer, a_ld, b_buffer, b_ld,
                         c_buffer, c_ld, queue, event);
  r.alpha = Precision<T>::value(alpha);
  r.beta = Precision<T>::value(beta);
  r.a_offset = a_offset, r.b_offset = b_offset, r.c_offset = c_offset;
  r.a_stride = a_stride, r.b_stride = b_stride, r.c_stride = c_stride;
  r.batch = batch_count;
  return guarded(std::move(r));
}

#define FATCL_GEMM_INSTANTIATE(T)                                                               \
  template StatusCode Gemm<T>(const Layout, const Transpose, const Transpose, const size_t,      \
                              const size_t, const size_t, const T, const cl_mem, const size_t,   \
                              const size_t, const cl_mem, const size_t, const size_t, const T,   \
                              cl_mem, const size_t, const size_t, cl_command_queue*, cl_event*,  \
                              cl_mem);                                                           \
  template StatusCode GemmTempBufferSize<T>(                                                     \
      const Layout, const Transpose, const Transpose, const size_t, const size_t, const size_t,  \
      const size_t, const size_t, const size_t, const size_t, const size_t, const size_t,        \
      cl_command_queue*, size_t&);                                                               \
  template StatusCode GemmBatched<T>(                                                            \
      const Layout, const Transpose, const Transpose, const size_t, const size_t, const size_t,  \
      const T*, const cl_mem, const size_t*, const size_t, const cl_mem, const size_t*,          \
      const size_t, const T*, cl_mem, const size_t*, const size_t, const size_t,                 \
      cl_command_queue*, cl_event*);                                                             \
  template StatusCode GemmStridedBatched<T>(                                                     \
      const Layout, const Transpose, const Transpose, const size_t, const size_t, const size_t,  \
      const T, const cl_mem, const size_t, const size_t, const size_t, const cl_mem,             \
      const size_t, const size_t, const size_t, const T, cl_mem, const size_t, const size_t,     \
      const size_t, const size_t, cl_command_queue*, cl_event*);
FATCL_GEMM_INSTANTIATE(float)
FATCL_GEMM_INSTANTIATE(double)
FATCL_GEMM_INSTANTIATE(half)
#undef FATCL_GEMM_INSTANTIATE

StatusCode OverrideVariant(cl_device_id device, int bits, const std::string& variant,
                           std::optional<Tier> tier) {
  g_message.clear();
  try {
    const std::vector<const Family*> families = gemm_families(bits);
    Kept& all = kept();
    std::lock_guard<std::mutex> lock(all.mutex);
    if (variant.empty()) {
      all.overrides.erase({device, bits});
      return StatusCode::kSuccess;
    }
    for (const Family* f : families) {
      for (const Variant& v : f->manifest().variants) {
        if (v.name == variant) {
          all.overrides[{device, bits}] = {variant, tier, f};
          return StatusCode::kSuccess;
        }
      }
    }
    std::string names;
    for (std::size_t i = 0; i < families.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == families.size() ? " and " : ", ") +
               families[i]->manifest().family;
    }
    g_message = names + " have no variant \"" + variant.substr(0, 100) + "\"";
  } catch (const Error& e) {
    g_message = e.what();
  }
  return StatusCode::kInvalidOverrideKernel;
}

StatusCode OverrideKParts(cl_device_id device, int bits, std::size_t parts) {
  g_message.clear();
  if (bits != 32 && bits != 64) {
    g_message = "OverrideKParts: K is split for 32- and 64-bit elements only, not " +
                std::to_string(bits) + "-bit ones";
    return StatusCode::kInvalidValue;
  }
  if (parts > kGemmMaxKParts) {
    g_message = "OverrideKParts: " + std::to_string(parts) + " parts are more than " +
                std::to_string(kGemmMaxKParts);
    return StatusCode::kInvalidValue;
  }
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (parts == 0) {
    all.k_parts.erase({device, bits});
  } else {
    all.k_parts[{device, bits}] = parts;
  }
  return StatusCode::kSuccess;
}

StatusCode GemmLearnOnline(bool on, const OnlineOptions& options, std::shared_ptr<Store> store) {
  g_message.clear();
  const char* bad = options.candidates == 0  ? "candidates is 0"
                    : options.rounds < 1     ? "rounds is below 1"
                    : options.warmup < 0     ? "warmup is below 0"
                    : !(options.drop_factor > 1) ? "drop_factor is not above 1"
                    : !(options.margin >= 1) ? "margin is below 1"
                                             : nullptr;
  if (bad) {
    g_message = std::string("GemmLearnOnline: ") + bad;
    return StatusCode::kInvalidValue;
  }
  Kept& all = kept();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.online = on;
  all.online_options = options;
  all.store = std::move(store);
  if (!on) all.learning.clear();  // the calls run each class's current choice
  return StatusCode::kSuccess;
}

StatusCode ClearCache() {
  Kept& all = kept();
  const std::lock_guard<std::mutex> calls(all.one_at_a_time);
  std::lock_guard<std::mutex> lock(all.mutex);
  all.choices.clear();
  all.planned.clear();
  all.idle_kernels.clear();
  ++all.generation;
  all.placeholders.clear();
  all.scratch.clear();
  all.overrides.clear();
  all.k_parts.clear();
  all.online.reset();
  all.online_options = {};
  all.store.reset();
  all.learning.clear();
  all.saving.clear();  // each waits for its save
  all.devices.clear();
  g_message.clear();
  return StatusCode::kSuccess;
}

detail::GemmLastRun detail::gemm_last_run() {
  const LastCall& r = g_last_call;
  detail::GemmLastRun out;
  if (!r.why) {
    if (r.nothing) out.how = "nothing computed: " + std::string(r.nothing) + " (BLAS's quick return)";
    return out;
  }
  std::vector<std::string> how;
  if (r.col_major) {
    how.push_back("the column-major call as the row-major product of its operands swapped");
  }
  if (r.as_transpose) {
    how.push_back("the call's transpose (C^T = op(B)^T op(A)^T: its A is the call's B), C^T "
                  "moved into C after");
  }
  if (r.one_row_turned) {
    how.push_back("the one-row call as its transpose in place (C^T, one column, is C's memory)");
  }
  if (r.pack_a) how.push_back("A^T packed");
  if (r.panel) {
    how.push_back(std::string(r.pack_b ? "B^T" : "B") + " packed into panels " +
                  std::to_string(r.panel) + " columns wide");
  } else if (r.pack_b) {
    how.push_back("B^T packed");
  }
  if (r.copy_b) how.push_back("B copied into rows of " + std::to_string(r.b_padded_ld));
  if (r.planes) how.push_back("K in " + std::to_string(r.planes) + " parts, then summed");
  how.push_back(std::to_string(r.launches) + (r.launches == 1 ? " launch" : " launches") +
                " of the product" +
                (r.k > r.k_per_launch
                     ? " (K in launches of at most " + std::to_string(r.k_per_launch) + ")"
                     : ""));
  out.how = (r.batch > 1 ? std::to_string(r.batch) + " products of " : "") + "row-major " +
            std::to_string(r.m) + " x " + std::to_string(r.n) + " x " + std::to_string(r.k) +
            ", op(A) = " + (r.a_trans ? "A^T" : "A") + ", op(B) = " + (r.b_trans ? "B^T" : "B");
  if (r.learning) {
    how.push_back("learning online: candidate " + std::to_string(r.candidate + 1) + " of " +
                  std::to_string(r.learning->online->size()) +
                  (r.timed ? ", timed" : ", untimed"));
    out.online = r.learning->online->report();
  }
  for (const std::string& h : how) out.how += "; " + h;
  out.variant = r.why->variant;
  out.tier = r.why->tier;
  out.explanation = std::shared_ptr<const Explanation>(r.why, &r.why->explanation);
  out.tuned = r.why->tuned;
  return out;
}

std::string GemmLastCall() {
  const detail::GemmLastRun r = detail::gemm_last_run();
  if (r.variant.empty()) return r.how;
  std::string said = r.variant + " (" + to_string(r.tier) + " tier) for " + r.how;
  if (r.explanation) said += "\n" + r.explanation->to_string();
  if (!r.online.empty()) said += "\n" + r.online;
  return said;
}

std::string GemmMessage() { return g_message; }

float HalfToFloat(half value) { return detail::half_to_float(value); }
half FloatToHalf(float value) { return detail::float_to_half(value); }

const char* to_string(StatusCode status) {
  switch (status) {
#define FATCL_STATUS(name) \
  case StatusCode::name:   \
    return #name;
    FATCL_STATUS(kSuccess)
    FATCL_STATUS(kOpenCLCompilerNotAvailable)
    FATCL_STATUS(kTempBufferAllocFailure)
    FATCL_STATUS(kOpenCLOutOfResources)
    FATCL_STATUS(kOpenCLOutOfHostMemory)
    FATCL_STATUS(kOpenCLBuildProgramFailure)
    FATCL_STATUS(kInvalidValue)
    FATCL_STATUS(kInvalidCommandQueue)
    FATCL_STATUS(kInvalidMemObject)
    FATCL_STATUS(kInvalidBinary)
    FATCL_STATUS(kInvalidBuildOptions)
    FATCL_STATUS(kInvalidProgram)
    FATCL_STATUS(kInvalidProgramExecutable)
    FATCL_STATUS(kInvalidKernelName)
    FATCL_STATUS(kInvalidKernelDefinition)
    FATCL_STATUS(kInvalidKernel)
    FATCL_STATUS(kInvalidArgIndex)
    FATCL_STATUS(kInvalidArgValue)
    FATCL_STATUS(kInvalidArgSize)
    FATCL_STATUS(kInvalidKernelArgs)
    FATCL_STATUS(kInvalidLocalNumDimensions)
    FATCL_STATUS(kInvalidLocalThreadsTotal)
    FATCL_STATUS(kInvalidLocalThreadsDim)
    FATCL_STATUS(kInvalidGlobalOffset)
    FATCL_STATUS(kInvalidEventWaitList)
    FATCL_STATUS(kInvalidEvent)
    FATCL_STATUS(kInvalidOperation)
    FATCL_STATUS(kInvalidBufferSize)
    FATCL_STATUS(kInvalidGlobalWorkSize)
    FATCL_STATUS(kNotImplemented)
    FATCL_STATUS(kInvalidMatrixA)
    FATCL_STATUS(kInvalidMatrixB)
    FATCL_STATUS(kInvalidMatrixC)
    FATCL_STATUS(kInvalidVectorX)
    FATCL_STATUS(kInvalidVectorY)
    FATCL_STATUS(kInvalidDimension)
    FATCL_STATUS(kInvalidLeadDimA)
    FATCL_STATUS(kInvalidLeadDimB)
    FATCL_STATUS(kInvalidLeadDimC)
    FATCL_STATUS(kInvalidIncrementX)
    FATCL_STATUS(kInvalidIncrementY)
    FATCL_STATUS(kInsufficientMemoryA)
    FATCL_STATUS(kInsufficientMemoryB)
    FATCL_STATUS(kInsufficientMemoryC)
    FATCL_STATUS(kInsufficientMemoryX)
    FATCL_STATUS(kInsufficientMemoryY)
    FATCL_STATUS(kInsufficientMemoryTemp)
    FATCL_STATUS(kInvalidBatchCount)
    FATCL_STATUS(kInvalidOverrideKernel)
    FATCL_STATUS(kMissingOverrideParameter)
    FATCL_STATUS(kInvalidLocalMemUsage)
    FATCL_STATUS(kNoHalfPrecision)
    FATCL_STATUS(kNoDoublePrecision)
    FATCL_STATUS(kInvalidVectorScalar)
    FATCL_STATUS(kInsufficientMemoryScalar)
    FATCL_STATUS(kDatabaseError)
    FATCL_STATUS(kUnknownError)
    FATCL_STATUS(kUnexpectedError)
#undef FATCL_STATUS
  }
  return "";
}

}  // namespace fatcl
