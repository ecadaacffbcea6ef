// fatcl's SGEMM benchmark: every kernel on every size in one run, checked,
// timed by the host clock around a finished queue (rusticl's timestamps read
// zero; CLBlast hands back only its last kernel's event), median of runs.
#include "fatcl/bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "fatcl/detail/format.hpp"
#include "fatcl/store.hpp"
#include "measure.hpp"

namespace fatcl {
namespace {

using detail::check;

// Checks each run, then times those that ran, in turn (interleaved_median_ms).
void measure(const cl::CommandQueue& queue, const MatmulProblem& p, int reps,
             const std::vector<std::function<std::string()>>& runs,
             std::vector<BenchResult*> results) {
  std::vector<std::function<void()>> timed;
  std::vector<BenchResult*> timed_results;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (check(queue, p, runs[i], *results[i])) {
      timed.push_back([&run = runs[i]] { run(); });
      timed_results.push_back(results[i]);
    }
  }
  if (timed.empty()) return;
  try {
    const std::vector<double> ms = interleaved_median_ms(queue, timed, reps);
    for (std::size_t i = 0; i < ms.size(); ++i) {
      timed_results[i]->ms = ms[i];
      timed_results[i]->gflops = BenchShape{p.m, p.n, p.k}.flop() / (ms[i] * 1e6);
    }
  } catch (const Error& e) {
    for (BenchResult* r : timed_results) r->failure = e.what();
  }
}

void measure(const cl::CommandQueue& queue, const MatmulProblem& p, int reps,
             const std::function<std::string()>& run, BenchResult& r) {
  measure(queue, p, reps, {run}, {&r});
}

// The vendor's BLAS on the problem's inputs: copied to it once, checked
// like every kernel (its C copied back into the problem's), then timed by
// the host clock around its own finished runs.
BenchResult measure_vendor(const cl::CommandQueue& queue, const MatmulProblem& p, int reps,
                           const VendorGemm& vendor) {
  BenchResult r;
  r.kernel = vendor.name;
  r.vendor = true;
  r.rounds = reps;
  std::vector<float> a(p.m * p.k), b(p.k * p.n);
  try {
    check_cl(queue.enqueueReadBuffer(p.a, CL_TRUE, 0, a.size() * 4, a.data()), "read A");
    check_cl(queue.enqueueReadBuffer(p.b, CL_TRUE, 0, b.size() * 4, b.data()), "read B");
  } catch (const Error& e) {
    r.failure = e.what();
    return r;
  }
  r.failure = vendor.prepare(a.data(), b.data(), p.m, p.n, p.k);
  if (!r.failure.empty()) return r;
  const bool ran =
      check(queue, p, [&] { return run_vendor_gemm_into(vendor, queue, p.c, p.m * p.n); }, r);
  if (!ran) return r;
  try {
    r.ms = median_ms(
        queue,
        [&] {
          const std::string f = vendor.run();
          if (!f.empty()) throw Error(f);
        },
        reps);
    r.gflops = BenchShape{p.m, p.n, p.k}.flop() / (r.ms * 1e6);
  } catch (const Error& e) {
    r.failure = e.what();
  }
  return r;
}

// GFLOP/s of a choice: its result above if that variant and tier ran, else
// measured now (listed as kernel "auto").
template <typename Progress>
double choice_gflops(const cl::CommandQueue& queue, const MatmulProblem& p, int reps,
                     const Matmul& matmul, BenchSize& size, const std::string& variant, Tier tier,
                     const Progress& progress) {
  const BenchShape s{p.m, p.n, p.k};
  for (const BenchResult& r : size.results) {
    if (r.variant == variant && r.tier == tier && r.failure.empty()) {
      progress(s, "choice " + variant + " (measured above)");
      return r.ok ? r.gflops : 0;
    }
  }
  progress(s, "choice " + variant);
  BenchResult r;
  r.kernel = "auto";
  r.variant = variant;
  r.tier = tier;
  measure(
      queue, p, reps,
      [&] {
        matmul.enqueue(queue, p.a, p.b, p.c, s.m, s.n, s.k);
        return std::string();
      },
      r);
  r.rounds = reps;
  size.results.push_back(r);
  return r.failure.empty() && r.ok ? r.gflops : 0;
}

}  // namespace

double median_ms(const cl::CommandQueue& queue, const std::function<void()>& run, int reps) {
  return interleaved_median_ms(queue, {run}, reps).front();
}

std::vector<double> interleaved_median_ms(const cl::CommandQueue& queue,
                                          const std::vector<std::function<void()>>& runs,
                                          int reps) {
  std::vector<std::vector<double>> ms(runs.size());
  // Runs per timing: 1 in the first round; for a run under kBatchMs, that
  // round grows its batch until it lasts about that long (batched_ms), and
  // the later rounds keep it.
  std::vector<int> batch(runs.size(), 1);
  for (int i = 0; i < std::max(1, reps); ++i) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      check_cl(queue.finish(), "clFinish");
      const auto start = std::chrono::steady_clock::now();
      for (int b = 0; b < batch[r]; ++b) runs[r]();
      check_cl(queue.finish(), "clFinish");
      const double elapsed = detail::ms_since(start);
      ms[r].push_back(i == 0 ? detail::batched_ms(queue, runs[r], elapsed, batch[r])
                             : elapsed / batch[r]);
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& m : ms) {
    std::sort(m.begin(), m.end());
    medians.push_back(m[m.size() / 2]);
  }
  return medians;
}

std::string BenchShape::label() const {
  if (m == n && n == k) return std::to_string(m);
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::vector<BenchShape> parse_shapes(const std::string& text) {
  std::vector<BenchShape> out;
  std::string rest = text + ",";
  for (std::size_t start = 0, comma; (comma = rest.find(',', start)) != std::string::npos;
       start = comma + 1) {
    const std::string item = rest.substr(start, comma - start);
    if (item.empty()) continue;
    std::vector<std::size_t> dims;
    std::string part;
    for (char c : item + "x") {
      if (c != 'x') {
        part += c;
        continue;
      }
      std::size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(part, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (part.empty() || used != part.size() || v < 1 || v > 65536) {
        throw Error("size \"" + item.substr(0, 40) +
                    "\": each dimension must be an integer from 1 to 65536");
      }
      dims.push_back(static_cast<std::size_t>(v));
      part.clear();
    }
    if (dims.size() == 1) dims = {dims[0], dims[0], dims[0]};
    if (dims.size() != 3) {
      throw Error("size \"" + item.substr(0, 40) + "\": expected N or MxNxK");
    }
    out.push_back({dims[0], dims[1], dims[2]});
  }
  if (out.empty()) throw Error("no sizes given");
  return out;
}

std::vector<BenchShape> default_shapes(const DeviceCaps& caps) {
  if (caps.is_gpu()) {
    return {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
            {8192, 8192, 8192}, {4096, 4096, 256},  {8192, 64, 8192}};
  }
  return {{256, 256, 256},    {512, 512, 512},   {1024, 1024, 1024},
          {2048, 2048, 2048}, {2048, 2048, 128}, {2048, 32, 2048}};
}

const BenchResult* BenchSize::best_fatcl() const {
  const BenchResult* best = nullptr;
  for (const BenchResult& r : results) {
    if (r.variant.empty() || !r.ok || !r.failure.empty()) continue;
    if (!best || r.gflops > best->gflops) best = &r;
  }
  return best;
}

const BenchResult* BenchSize::vendor() const {
  for (const BenchResult& r : results) {
    if (r.vendor && r.ok && r.failure.empty()) return &r;
  }
  return nullptr;
}

const BenchResult* BenchSize::clblast() const {
  for (const BenchResult& r : results) {
    if (r.variant.empty() && !r.vendor && r.ok && r.failure.empty()) return &r;
  }
  return nullptr;
}

const BenchResult* BenchSize::find(const std::string& kernel, const std::string& variant) const {
  const BenchResult* best = nullptr;
  for (const BenchResult& r : results) {
    if (r.kernel != kernel || (!variant.empty() && r.variant != variant) || !r.failure.empty()) {
      continue;
    }
    if (!best || r.gflops > best->gflops) best = &r;
  }
  return best;
}

void check_problem_fits(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                        const std::string& who) {
  // Sizes in the unit that shows them (a driver may say 1 byte).
  auto gib = [](double bytes) {
    return bytes >= double(1ull << 30) ? detail::format("%.1f GiB", bytes / double(1ull << 30))
           : bytes >= double(1ull << 20) ? detail::format("%.1f MiB", bytes / double(1ull << 20))
           : bytes >= 1024.0             ? detail::format("%.1f KiB", bytes / 1024.0)
                                         : detail::format("%.0f B", bytes);
  };
  const std::string size = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  // In doubles: 2^20 x 2^20 floats do not overflow them.
  const double a = 4.0 * double(m) * double(k), b = 4.0 * double(k) * double(n),
               c = 4.0 * double(m) * double(n);
  const std::pair<const char*, double> matrices[3] = {{"A", a}, {"B", b}, {"C", c}};
  for (const auto& [name, bytes] : matrices) {
    if (caps.max_mem_alloc_bytes && bytes > double(caps.max_mem_alloc_bytes)) {
      throw Error(who + ": " + size + ": " + name + " needs " + gib(bytes) +
                  ", more than the largest buffer this device allows (" +
                  gib(double(caps.max_mem_alloc_bytes)) + ", CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    }
  }
  if (caps.global_mem_bytes && a + b + c > double(caps.global_mem_bytes)) {
    throw Error(who + ": " + size + ": A, B and C need " + gib(a + b + c) + ", more than the " +
                gib(double(caps.global_mem_bytes)) +
                " of this device's global memory (CL_DEVICE_GLOBAL_MEM_SIZE)");
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 && a + b + c > double(pages) * double(page)) {
    throw Error(who + ": " + size + ": the host copies of A, B and C need " + gib(a + b + c) +
                ", more than this machine's " + gib(double(pages) * double(page)) + " of memory");
  }
}

namespace {

// One fatcl kernel the bench runs at every size: a variant in a tier (none:
// the loader's choice), built on first use.
struct BenchEntry {
  MatmulKernel kernel;
  std::string variant;
  std::optional<Tier> tier;
  std::unique_ptr<Matmul> matmul;
  std::string failure;           // why it does not load
  std::string slow;              // why it is timed once where a run is long ("" while it is not)
  double slow_ms_per_gflop = 0;  // its time per GFLOP where it was found slow
};

// Every variant of the naive, tiled and skinny families (the skinny ones run
// only where they serve the shape, bench_runs), and the blocked family in
// its own ranking (its top N with options.top, and the automatic choices,
// so that they are timed in the same turns), each in each tier asked for
// that the device takes for it.
std::vector<BenchEntry> bench_entries(const DeviceCaps& caps, const BenchOptions& options,
                                      const std::vector<BenchShape>& shapes,
                                      const Matmul& automatic, const Matmul& heuristic) {
  std::vector<std::optional<Tier>> tiers;
  for (Tier t : options.tiers) tiers.push_back(t);
  if (tiers.empty()) tiers.push_back(std::nullopt);
  std::vector<BenchEntry> entries;
  for (MatmulKernel k : {MatmulKernel::Naive, MatmulKernel::Tiled, MatmulKernel::Blocked,
                         MatmulKernel::FewRows, MatmulKernel::FewCols}) {
    const Family& family = matmul_family(k);
    std::vector<std::string> names;
    if (k == MatmulKernel::Blocked) {
      for (const Variant* v :
           plan(family.manifest(), caps, {}, family.description().ranking).variants()) {
        names.push_back(v->name);
      }
      if (options.top > 0 && names.size() > options.top) names.resize(options.top);
      std::vector<std::string> chosen{heuristic.loaded().variant.name};
      for (const BenchShape& s : shapes) {
        chosen.push_back(automatic.loaded_for(s.m, s.n, s.k).variant.name);
        chosen.push_back(heuristic.loaded_for(s.m, s.n, s.k).variant.name);
      }
      for (const std::string& c : chosen) {
        if (matmul_kernel_of(c) == k && std::find(names.begin(), names.end(), c) == names.end()) {
          names.push_back(c);
        }
      }
    } else {
      for (const Variant& v : family.manifest().variants) names.push_back(v.name);
    }
    for (const std::string& name : names) {
      for (const std::optional<Tier>& t : tiers) {
        // Only the tiers the device takes for this variant (plan() says).
        if (t && plan(family.manifest(), caps, {name, t, {}}).chain.empty()) continue;
        entries.push_back({k, name, t, nullptr, "", ""});
      }
    }
  }
  return entries;
}

// Progress lines with the time left: after the first size, each kernel's
// last time scaled by the work of the sizes to come, as many runs as it
// will take (a check and its timed rounds).
class BenchClock {
 public:
  BenchClock(const BenchOptions& options, std::size_t steps)
      : progress_(options.progress), steps_(steps), start_(Clock::now()) {}

  void step(const BenchShape& s, const std::string& what) {
    ++done_;
    if (!progress_) return;
    std::string left;
    if (estimate_ >= 0) {
      const double size_elapsed = seconds(size_start_);
      left =
          detail::format(", about %.0f s left", std::max(0.0, estimate_ - size_elapsed) + later_);
    }
    progress_("[" + std::to_string(done_) + "/" + std::to_string(steps_) + "] " + s.label() + ": " +
              what + " (" + detail::format("%.1f", seconds(start_)) + " s" + left + ")");
  }
  void say(const std::string& line) const {
    if (progress_) progress_(line);
  }
  // At the start of each size: the seconds this size and the later ones
  // are expected to take (-1: nothing measured yet).
  void begin_size(double this_size, double later) {
    size_start_ = Clock::now();
    estimate_ = this_size;
    later_ = later;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }
  std::function<void(const std::string&)> progress_;
  std::size_t steps_, done_ = 0;
  Clock::time_point start_, size_start_;
  double estimate_ = -1, later_ = 0;
};

// Seconds the runs of `previous` would take at `next`: each result's time
// scaled by the work, times the runs it gets (one check, then its rounds).
double expected_seconds(const BenchSize& previous, const BenchShape& next) {
  double ms = 0;
  for (const BenchResult& r : previous.results) {
    if (r.failure.empty() && r.ms > 0) ms += r.ms * double(1 + r.rounds);
  }
  return ms / 1e3 * next.flop() / previous.shape.flop();
}

// The entry's Matmul, built on first use; a failure stays with the entry.
void build_once(const cl::Context& context, const cl::Device& device, BenchEntry& e) {
  if (e.matmul || !e.failure.empty()) return;
  try {
    MatmulOptions o;
    o.variant = e.variant;
    o.tier = e.tier;
    e.matmul = std::make_unique<Matmul>(context, device, o);
  } catch (const Error& error) {
    e.failure = std::string(error.what()).substr(0, 300);
  }
}

// A slow kernel is timed once where its run would take this long or more
// (estimated from its rate where it was found slow).
constexpr double kOnceAboveMs = 50;

// A slow kernel's one run is its checked run, timed by the host clock
// around the launch and a finished queue.
void time_by_its_check(const cl::CommandQueue& queue, const MatmulProblem& p,
                       const std::function<std::string()>& run, BenchResult& r) {
  double ms = 0;
  const bool ran = detail::check(
      queue, p,
      [&] {
        check_cl(queue.finish(), "clFinish");
        const auto t0 = std::chrono::steady_clock::now();
        std::string failure = run();
        check_cl(queue.finish(), "clFinish");
        ms = detail::ms_since(t0);
        return failure;
      },
      r);
  if (ran && ms > 0) {
    r.ms = ms;
    r.gflops = BenchShape{p.m, p.n, p.k}.flop() / (ms * 1e6);
    r.rounds = 1;
  }
}

// A skinny family runs only at the shapes it may serve, M (few-rows) or N
// (few-columns) at most kMatmulSkinny (elsewhere it reads the large
// operand once per few rows or columns: minutes a run at 2048); the others
// at every shape.
bool bench_runs(MatmulKernel kernel, const BenchShape& s) {
  if (kernel == MatmulKernel::FewRows) return s.m <= kMatmulSkinny;
  if (kernel == MatmulKernel::FewCols) return s.n <= kMatmulSkinny;
  return true;
}

// Builds (on first use) and runs the entries at one size: the others timed
// in turn (round-robin: a machine that speeds up or slows down mid-way
// affects each alike), each slow one checked and timed once after them.
void run_entries(const cl::Context& context, const cl::Device& device, const DeviceCaps& caps,
                 const cl::CommandQueue& queue, const MatmulProblem& p, int reps,
                 std::vector<BenchEntry>& entries, BenchSize& size, BenchClock& clock) {
  const BenchShape& s = size.shape;
  std::vector<std::function<std::string()>> runs, slow_runs;
  std::vector<std::size_t> slots, slow_slots;
  for (BenchEntry& e : entries) {
    if (!bench_runs(e.kernel, s)) continue;
    clock.step(s, std::string(to_string(e.kernel)) + " " + e.variant +
                      (e.tier ? std::string(" (") + to_string(*e.tier) + ")" : ""));
    BenchResult r;
    r.kernel = to_string(e.kernel);
    r.variant = e.variant;
    build_once(context, device, e);
    if (!e.matmul) {
      r.failure = e.failure;
    } else {
      r.tier = e.matmul->loaded().tier;
      // Where a run would be short, it is timed in turn like the others:
      // timed once, a few-microsecond product is timed with its check.
      const bool once = !e.slow.empty() && e.slow_ms_per_gflop * s.flop() / 1e9 >= kOnceAboveMs;
      r.note = once ? "timed once: " + e.slow : "";
      auto run = [&e, &p, &queue, &s] {
        e.matmul->enqueue(queue, p.a, p.b, p.c, s.m, s.n, s.k);
        return std::string();
      };
      (once ? slow_runs : runs).push_back(run);
      (once ? slow_slots : slots).push_back(size.results.size());
    }
    size.results.push_back(r);
  }
  auto results_at = [&size](const std::vector<std::size_t>& at) {
    std::vector<BenchResult*> out;
    for (std::size_t i : at) out.push_back(&size.results[i]);
    return out;
  };
  clock.say(s.label() + ": checking, then timing the " + std::to_string(runs.size()) +
            " kernels in turn, " + std::to_string(reps) + " rounds" +
            (slow_runs.empty() ? ""
                               : "; then " + std::to_string(slow_runs.size()) +
                                     " far slower kernels once each, their checked run timed"));
  measure(queue, p, reps, runs, results_at(slots));
  for (BenchResult* r : results_at(slots)) r->rounds = reps;
  for (std::size_t i = 0; i < slow_runs.size(); ++i) {
    time_by_its_check(queue, p, slow_runs[i], size.results[slow_slots[i]]);
  }
}

// After a size: an entry at most 1/factor of the fastest checked result is
// timed once at the sizes after (still checked), which keeps a CPU's bench
// to minutes where the naive kernel takes tens of seconds a run.
void mark_slow_entries(const BenchSize& size, double factor, std::vector<BenchEntry>& entries) {
  if (factor <= 1) return;
  double leader = 0;
  for (const BenchResult& r : size.results) {
    if (r.ok && r.failure.empty()) leader = std::max(leader, r.gflops);
  }
  for (BenchEntry& e : entries) {
    if (!e.slow.empty()) continue;
    for (const BenchResult& r : size.results) {
      if (r.variant != e.variant || r.kernel != to_string(e.kernel) || !r.ok) continue;
      if (e.tier && r.tier != e.tier) continue;
      // Slow, and costly: a few-microsecond run at 1/10 of a faster one is
      // all launch and says nothing of its rate at larger sizes.
      if (r.gflops * factor <= leader && r.ms >= kOnceAboveMs) {
        e.slow = detail::format("%.3fx the fastest at ", r.gflops / leader) + size.shape.label();
        e.slow_ms_per_gflop = 1e3 / r.gflops;
      }
    }
  }
}

// A product's first calls: a fresh Matmul learning online (shipped entries
// only, in memory), each call timed and checked; then its choice timed.
BenchOnline bench_online(const cl::Context& context, const cl::Device& device,
                         const cl::CommandQueue& queue, const MatmulProblem& p, int reps,
                         int calls) {
  MatmulOptions o;
  o.online = true;
  o.store = std::make_shared<Store>();
  Matmul matmul(context, device, o);
  BenchOnline out;
  // The class's first use: the current choice's build and, learning, the
  // candidates' (OnlineOptions::build_first), before any call.
  const auto first_use = std::chrono::steady_clock::now();
  out.learned = !matmul.online_report(p.m, p.n, p.k).empty();
  out.first_use_ms = detail::ms_since(first_use);
  // The calls asked for, then on (untimed by the bench, at most
  // kOnlineSettleSeconds) until the choice is made, so that what is timed
  // after is the eventual choice.
  const auto start_all = std::chrono::steady_clock::now();
  for (int call = 1;; ++call) {
    const bool asked = call <= calls;
    if (!asked &&
        (!out.learned || out.settled_at ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start_all).count() >
             kOnlineSettleSeconds)) {
      break;
    }
    double ms = 0;
    const CheckedRun r = run_checked(queue, p, [&] {
      queue.finish();
      const auto start = std::chrono::steady_clock::now();
      matmul.enqueue(queue, p.a, p.b, p.c, p.m, p.n, p.k);
      queue.finish();
      ms = detail::ms_since(start);
      return std::string();
    });
    out.all_ok = out.all_ok && r.ok;
    if (asked) out.call_ms.push_back(ms);
    const std::string said = matmul.online_report(p.m, p.n, p.k);
    if (out.learned && !out.settled_at && said.find("(chosen)") != std::string::npos) {
      out.settled_at = std::size_t(call);
    }
  }
  out.report = matmul.online_report(p.m, p.n, p.k);
  const LoadedKernel& chosen = matmul.loaded_for(p.m, p.n, p.k);
  out.choice = chosen.variant.name;
  out.choice_tier = chosen.tier;
  const double ms = median_ms(
      queue, [&] { matmul.enqueue(queue, p.a, p.b, p.c, p.m, p.n, p.k); }, reps);
  out.choice_gflops = ms > 0 ? 2.0 * double(p.m) * double(p.n) * double(p.k) / (ms * 1e6) : 0;
  return out;
}

}  // namespace

BenchReport run_bench(const cl::Context& context, const cl::Device& device,
                      const BenchOptions& options) {
  const DeviceCaps caps = DeviceCaps::query(device);
  BenchReport report;
  report.device = caps.summary();
  report.vendor = options.vendor ? options.vendor->name : "none: " + options.no_vendor;
  report.date = utc_timestamp();
  const std::vector<BenchShape> shapes =
      options.shapes.empty() ? default_shapes(caps) : options.shapes;
  for (const BenchShape& s : shapes) check_problem_fits(caps, s.m, s.n, s.k, "bench");
  const int reps = std::max(1, options.repetitions);
  const cl::CommandQueue queue = queue_for(context, device);

  // The automatic choice, as a product would make it, and without tuning.
  Matmul automatic(context, device);
  MatmulOptions untuned;
  untuned.use_tuning = false;
  Matmul heuristic(context, device, untuned);
  std::vector<BenchEntry> entries = bench_entries(caps, options, shapes, automatic, heuristic);
  BenchClock clock(options, shapes.size() * (entries.size() + 2 + options.external.size() +
                                             (options.vendor ? 1 : 0)));

  std::mt19937 rng(std::random_device{}());
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const BenchShape& s = shapes[si];
    if (si > 0) {
      double later = 0;
      for (std::size_t j = si + 1; j < shapes.size(); ++j) {
        later += expected_seconds(report.sizes.back(), shapes[j]);
      }
      clock.begin_size(expected_seconds(report.sizes.back(), s), later);
    }
    const MatmulProblem p = make_matmul_problem(context, s.m, s.n, s.k, MatmulInputs::Random, &rng);
    BenchSize size;
    size.shape = s;
    run_entries(context, device, caps, queue, p, reps, entries, size, clock);
    auto progress = [&clock](const BenchShape& at, const std::string& what) {
      clock.step(at, what);
    };
    // The automatic choice with the store (per shape), and the
    // families' own ranking without it.
    const LoadedKernel& tuned = automatic.loaded_for(s.m, s.n, s.k);
    size.auto_variant = tuned.variant.name;
    size.auto_tier = tuned.tier;
    size.auto_tuning = tuned.explanation.tuning.substr(0, tuned.explanation.tuning.find('\n'));
    // Measured here: not carried from a similar device (Store::find_tuning).
    size.tuned = tuned_here(tuned.tuning_entry, {s.m, s.n, s.k}, caps);
    size.auto_gflops =
        choice_gflops(queue, p, reps, automatic, size, size.auto_variant, tuned.tier, progress);
    const LoadedKernel& untuned_choice = heuristic.loaded_for(s.m, s.n, s.k);
    size.heuristic_variant = untuned_choice.variant.name;
    size.heuristic_tier = untuned_choice.tier;
    size.heuristic_gflops = choice_gflops(queue, p, reps, heuristic, size, size.heuristic_variant,
                                          untuned_choice.tier, progress);
    for (const ExternalKernel& x : options.external) {
      clock.step(s, x.name);
      BenchResult r;
      r.kernel = x.name;
      measure(
          queue, p, reps, [&] { return x.run(queue, p.a, p.b, p.c, s.m, s.n, s.k); }, r);
      r.rounds = reps;
      size.results.push_back(r);
    }
    if (options.vendor) {
      clock.step(s, options.vendor->name);
      size.results.push_back(measure_vendor(queue, p, reps, *options.vendor));
    }
    if (options.online_calls > 0) {
      clock.step(s, "online learning, " + std::to_string(options.online_calls) + " calls");
      size.online = bench_online(context, device, queue, p, reps, options.online_calls);
    }
    mark_slow_entries(size, options.slow_factor, entries);
    report.sizes.push_back(std::move(size));
  }
  return report;
}

}  // namespace fatcl
