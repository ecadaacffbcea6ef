#include "fatcl/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "fatcl/detail/format.hpp"
#include "measure.hpp"

namespace fatcl {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// How far apart two variants are: the sum over parameters of the log2
// distance, so that 16 -> 32 counts as much as 4 -> 8.
double parameter_distance(const Variant& a, const Variant& b) {
  double d = 0;
  for (const auto& [k, va] : a.params) {
    long long vb = -1;
    for (const auto& [kb, v] : b.params) {
      if (kb == k) vb = v;
    }
    d += std::fabs(std::log2(double(va) + 1) - std::log2(double(vb) + 1));
  }
  return d;
}

}  // namespace

std::vector<BenchShape> default_tune_shapes(const DeviceCaps& caps) {
  if (caps.is_gpu()) return {{4096, 4096, 4096}, {8192, 8192, 8192}};
  return {{1024, 1024, 1024}};
}

double parse_budget(const std::string& text) {
  std::size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = used ? text.substr(used) : "";
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "m" || unit == "min") scale = 60;
  if (!used || scale == 0 || !std::isfinite(value) || value <= 0 || value * scale > 86400) {
    throw Error("budget \"" + text.substr(0, 40) +
                "\" is not a duration from 1s to 24h such as 30s, 2m or 90");
  }
  return value * scale;
}

std::vector<MatmulKernel> tune_families(const TuneOptions& options, const BenchShape& shape,
                                        const DeviceCaps& caps) {
  if (options.families.empty()) {
    return {matmul_family_for(shape.m, shape.n, MatmulKernel::Blocked, caps.is_gpu())};
  }
  std::vector<MatmulKernel> out;
  for (MatmulKernel f : options.families) {
    if (f == MatmulKernel::Auto) throw Error("tune: Auto is a choice among families, not a family");
    if (f == MatmulKernel::FewRows && shape.m > kMatmulSkinny) continue;
    if (f == MatmulKernel::FewCols && shape.n > kMatmulSkinny) continue;
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

std::string TuneCandidate::key() const { return variant->name + "/" + to_string(tier); }

TuneSearch::TuneSearch(std::vector<TuneCandidate> ranked)
    : ranked_(std::move(ranked)), done_(ranked_.size(), false) {}

const TuneCandidate* TuneSearch::next() {
  if (picked_ == ranked_.size()) return nullptr;
  std::size_t chosen = ranked_.size();
  if (!best_ || picked_ % 3 == 2) {
    while (next_in_ranking_ < ranked_.size() && done_[next_in_ranking_]) ++next_in_ranking_;
    chosen = next_in_ranking_;
  }
  if (chosen == ranked_.size()) {
    // The unmeasured one nearest to the best (its other tiers are nearest
    // of all: distance 0); ties keep the ranking's order.
    double nearest = 0;
    for (std::size_t i = 0; i < ranked_.size(); ++i) {
      if (done_[i]) continue;
      const double d = parameter_distance(*ranked_[i].variant, *best_->variant);
      if (chosen == ranked_.size() || d < nearest) {
        chosen = i;
        nearest = d;
      }
    }
  }
  done_[chosen] = true;
  ++picked_;
  return &ranked_[chosen];
}

void TuneSearch::record(const TuneCandidate& candidate, double gflops) {
  if (gflops > best_gflops_) {
    best_gflops_ = gflops;
    best_ = &candidate;
  }
}

namespace {

// One product's time: where it takes kBatchMs or more, its launch's
// event's where the driver's timestamps are real and the product is one
// launch (Matmul::launches), else the host clock around it; a shorter
// product by the host clock over a batch, as bench times it, so that the
// families weighed against each other at small sizes (a split product is
// two launches) are timed alike, launch cost included.
class LaunchTimer {
 public:
  LaunchTimer(const cl::CommandQueue& queue, bool events_real)
      : queue_(queue), events_real_(events_real) {}
  double ms(const Matmul& mm, const MatmulProblem& p) {
    const Clock::time_point h0 = Clock::now();
    cl::Event e = mm.enqueue(queue_, p.a, p.b, p.c, p.m, p.n, p.k);
    check_cl(queue_.finish(), "clFinish");
    const double host_ms = detail::ms_since(h0);
    if (host_ms >= kBatchMs && events_real_ && mm.launches(p.m, p.n, p.k) == 1) {
      cl_ulong a = 0, b = 0;
      if (e.getProfilingInfo(CL_PROFILING_COMMAND_START, &a) == CL_SUCCESS &&
          e.getProfilingInfo(CL_PROFILING_COMMAND_END, &b) == CL_SUCCESS && b > a) {
        return double(b - a) * 1e-6;
      }
      events_real_ = false;  // timestamps read zero: the host clock from now on
    }
    if (host_ms >= kBatchMs) return host_ms;
    // A short product by the host clock: a batch of back-to-back runs, as
    // bench times them (median_ms), so that the queue's round trip does not
    // count against it.
    int batch = 1;
    return detail::batched_ms(
        queue_, [&] { mm.enqueue(queue_, p.a, p.b, p.c, p.m, p.n, p.k); }, host_ms, batch);
  }
  bool events_real() const { return events_real_; }

 private:
  const cl::CommandQueue& queue_;
  bool events_real_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// What a tune run shares across shapes: the device, the candidates in the
// family's ranking, each built once (a candidate that fails to load stays
// failed), the clock and what measuring has cost so far.
struct TuneRun {
  const cl::Context& context;
  const cl::Device& device;
  const TuneOptions& options;
  DeviceCaps caps;
  int reps = 5;
  Clock::time_point start = Clock::now();
  // Each family's candidates: each variant in each tier the device takes
  // for it (a variant's PTX and source builds differ in speed on NVIDIA), in
  // the family's ranking.
  std::map<MatmulKernel, std::vector<TuneCandidate>> ranked;
  const std::vector<TuneCandidate>& candidates(MatmulKernel kernel) {
    auto it = ranked.find(kernel);
    if (it != ranked.end()) return it->second;
    const Family& family = matmul_family(kernel);
    LoadOptions fit;
    fit.tier = options.tier;
    std::vector<TuneCandidate> list;
    for (const Candidate& c :
         plan(family.manifest(), caps, fit, family.description().ranking).chain) {
      list.push_back({c.variant, c.tier});
    }
    return ranked.emplace(kernel, std::move(list)).first->second;
  }
  std::map<std::string, std::unique_ptr<Matmul>> built;
  std::map<std::string, std::string> load_failure;
  std::size_t measured_total = 0;
  double spent_measuring = 0;
  // Each candidate's first use (its build, and its first checked launch,
  // where a driver such as PoCL finishes compiling), part of
  // spent_measuring: a cost of the run, not of the size where it fell.
  double spent_building = 0;

  Matmul* matmul_of(const TuneCandidate& c) {
    const std::string key = c.key();
    if (load_failure.count(key)) return nullptr;
    auto it = built.find(key);
    if (it != built.end()) return it->second.get();
    try {
      MatmulOptions o;
      o.variant = c.variant->name;
      o.tier = c.tier;
      o.use_tuning = false;
      return built.emplace(key, std::make_unique<Matmul>(context, device, o)).first->second.get();
    } catch (const Error& e) {
      load_failure[key] = std::string(e.what()).substr(0, 300);
      return nullptr;
    }
  }
  bool stopped() const { return options.stop && options.stop->load(); }
  double elapsed() const { return seconds_since(start); }
};

// Checks one candidate, then times a warm-up and `reps` launches (median).
TuneMeasurement measure_candidate(TuneRun& run, const TuneCandidate& c, const MatmulProblem& p,
                                  const cl::CommandQueue& queue, LaunchTimer& timer) {
  TuneMeasurement m;
  m.variant = c.variant->name;
  m.tier = c.tier;
  const Clock::time_point t0 = Clock::now();
  const bool first_use = !run.built.count(c.key()) && !run.load_failure.count(c.key());
  auto first_use_done = [&] {
    if (first_use) run.spent_building += seconds_since(t0);
  };
  Matmul* mm = run.matmul_of(c);
  if (!mm) {
    first_use_done();
    m.failure = run.load_failure[c.key()];
    return m;
  }
  m.tier = mm->loaded().tier;
  BenchResult r;
  auto once = [&] {
    mm->enqueue(queue, p.a, p.b, p.c, p.m, p.n, p.k);
    return std::string();
  };
  const bool checked = detail::check(queue, p, once, r);
  first_use_done();
  if (!checked) {
    m.failure = r.failure;
    return m;
  }
  m.relative_error = r.relative_error;
  m.ok = r.ok;
  if (!r.ok)
    m.failure = "wrong result (relative error " + detail::format("%.1e", r.relative_error) + ")";
  try {
    timer.ms(*mm, p);  // warm-up beyond the checked launch (caches, thread pools)
    std::vector<double> ms;
    for (int i = 0; i < run.reps; ++i) ms.push_back(timer.ms(*mm, p));
    m.ms = median(ms);
    m.gflops = BenchShape{p.m, p.n, p.k}.flop() / (m.ms * 1e6);
  } catch (const Error& e) {
    m.failure = e.what();
    m.ok = false;
  }
  return m;
}

// The leaders again, in turn and twice as often: measured minutes apart,
// near-equal variants trade places on a busy machine; side by side they do
// not.
// Measured again: the (up to 4) fastest within 0.8 of the best, fastest first.
std::vector<TuneMeasurement*> leaders_of(TuneShapeResult& result, double best_gflops) {
  std::vector<TuneMeasurement*> leaders;
  for (TuneMeasurement& m : result.measured) {
    if (m.ok && m.failure.empty() && m.gflops >= 0.8 * best_gflops) leaders.push_back(&m);
  }
  std::sort(leaders.begin(), leaders.end(), [](const TuneMeasurement* a, const TuneMeasurement* b) {
    return a->gflops > b->gflops;
  });
  if (leaders.size() > 4) leaders.resize(4);
  if (leaders.size() < 2) leaders.clear();
  return leaders;
}
constexpr int kRemeasureRounds = 2;  // times run.reps launches of each leader

// What measuring the leaders again will take, in seconds (their launches
// only: they are built), kept out of the search's share of the budget.
double remeasure_seconds(const TuneRun& run, TuneShapeResult& result, double best_gflops) {
  double ms = 0;
  for (const TuneMeasurement* m : leaders_of(result, best_gflops)) ms += m->ms;
  return ms * kRemeasureRounds * run.reps / 1e3;
}

void remeasure_leaders(TuneRun& run, TuneShapeResult& result, double best_gflops,
                       const MatmulProblem& p, LaunchTimer& timer) {
  const std::vector<TuneMeasurement*> leaders = leaders_of(result, best_gflops);
  if (leaders.empty() || run.stopped()) return;
  std::vector<std::vector<double>> ms(leaders.size());
  try {
    for (int i = 0; i < kRemeasureRounds * run.reps; ++i) {
      for (std::size_t l = 0; l < leaders.size(); ++l) {
        const std::string key = leaders[l]->variant + "/" + to_string(leaders[l]->tier);
        ms[l].push_back(timer.ms(*run.built.at(key), p));
      }
    }
  } catch (const Error&) {
    return;  // keep the first measurements
  }
  for (std::size_t l = 0; l < leaders.size(); ++l) {
    leaders[l]->ms = median(ms[l]);
    leaders[l]->gflops = result.shape.flop() / (leaders[l]->ms * 1e6);
  }
  if (run.options.progress) {
    run.options.progress(result.shape.label() + ": the " + std::to_string(leaders.size()) +
                         " fastest measured again in turn");
  }
}

// The checked measurements ranked, fastest first, as a tuning entry.
std::optional<TuningEntry> tuning_entry(const TuneRun& run, const Family& family,
                                        const TuneShapeResult& result) {
  std::vector<const TuneMeasurement*> good;
  for (const TuneMeasurement& m : result.measured) {
    if (m.ok && m.failure.empty()) good.push_back(&m);
  }
  if (good.empty()) return std::nullopt;
  std::stable_sort(
      good.begin(), good.end(),
      [](const TuneMeasurement* a, const TuneMeasurement* b) { return a->gflops > b->gflops; });
  TuningEntry e = measured_entry(run.caps, family.manifest().family, "",
                                 {result.shape.m, result.shape.n, result.shape.k}, "fatcl tune");
  for (const TuneMeasurement* m : good) {
    const Variant& v = family.manifest().variant(m->variant);
    e.ranking.push_back(
        {m->variant, tier_sha256(family.manifest(), v, m->tier), m->tier, m->gflops});
  }
  return e;
}

void say_progress(const TuneRun& run, const TuneShapeResult& result, const TuneSearch& search,
                  const TuneCandidate& c, const TuneMeasurement& m, double deadline) {
  if (!run.options.progress) return;
  const double left = std::max(
      0.0, std::min(deadline - run.elapsed(), run.spent_measuring / double(run.measured_total) *
                                                  double(search.size() - search.picked())));
  const TuneCandidate* best = search.best();
  run.options.progress(
      "[" + std::to_string(search.picked()) + "/" + std::to_string(search.size()) + "] " +
      result.shape.label() + ": " + c.key() + " " +
      (m.failure.empty() ? detail::format("%.1f GFLOP/s", m.gflops)
                         : "failed: " + m.failure.substr(0, 80)) +
      "; best " +
      (best ? detail::format("%.1f", search.best_gflops()) + " (" + best->key() + ")" : "none") +
      "; " + detail::format("%.1f s", run.elapsed()) + " elapsed, ~" +
      detail::format("%.0f s", left) + " left for this size");
}

// One shape in one family (tune_families): the search until the
// candidates, the pair's share of the budget or the user run out, the
// leaders again, the entry.
TuneShapeResult tune_shape(TuneRun& run, const BenchShape& s, MatmulKernel kernel, double deadline,
                           const cl::CommandQueue& queue, LaunchTimer& timer, std::mt19937& rng,
                           bool* interrupted) {
  const Family& family = matmul_family(kernel);
  TuneShapeResult result;
  result.shape = s;
  result.family = family.manifest().family;
  const std::vector<TuneCandidate>& candidates = run.candidates(kernel);
  result.candidates = candidates.size();
  const MatmulProblem p =
      make_matmul_problem(run.context, s.m, s.n, s.k, MatmulInputs::Random, &rng);
  TuneSearch search(candidates);
  const double building_before = run.spent_building;
  while (true) {
    if (run.stopped()) {
      *interrupted = true;
      break;
    }
    // Budget: go on while the mean cost so far fits before the deadline,
    // with the leaders' second measurement (seconds at 2048^3 on a CPU)
    // still to come inside it. The candidates' first builds count against
    // the whole run, not the size that met them (on the H200, 2026-12-02,
    // the first sizes of a 104-size tune measured 2 to 24 of 31 blocked
    // variants while the builds took their share, the later ones all), as
    // far as the run's budget allows.
    const double mean =
        run.measured_total ? (run.spent_measuring - run.spent_building) / double(run.measured_total)
                           : 0;
    const double until =
        std::min(deadline + (run.spent_building - building_before), run.options.budget_seconds);
    if (search.picked() > 0 &&
        run.elapsed() + mean + remeasure_seconds(run, result, search.best_gflops()) > until) {
      break;
    }
    const TuneCandidate* c = search.next();
    if (!c) break;
    const Clock::time_point t0 = Clock::now();
    const TuneMeasurement m = measure_candidate(run, *c, p, queue, timer);
    run.spent_measuring += seconds_since(t0);
    ++run.measured_total;
    search.record(*c, m.ok && m.failure.empty() ? m.gflops : 0);
    result.measured.push_back(m);
    say_progress(run, result, search, *c, m, deadline);
  }
  result.exhaustive = search.picked() == search.size();
  remeasure_leaders(run, result, search.best_gflops(), p, timer);
  result.entry = tuning_entry(run, family, result);
  return result;
}

}  // namespace

TuneReport run_tune(const cl::Context& context, const cl::Device& device,
                    const TuneOptions& options) {
  TuneRun run{context, device, options, DeviceCaps::query(device)};
  TuneReport report;
  report.device = run.caps.summary();
  report.date = utc_timestamp();
  const std::vector<BenchShape> shapes =
      options.shapes.empty() ? default_tune_shapes(run.caps) : options.shapes;
  for (const BenchShape& s : shapes) check_problem_fits(run.caps, s.m, s.n, s.k, "tune");
  run.reps = std::max(5, options.repetitions);
  const cl::CommandQueue queue = queue_for(context, device, CL_QUEUE_PROFILING_ENABLE);
  LaunchTimer timer(queue, !has_driver_quirk(run.caps, "zero-profiling-timestamps"));

  std::vector<std::pair<BenchShape, MatmulKernel>> pairs;
  for (const BenchShape& s : shapes) {
    for (MatmulKernel f : tune_families(options, s, run.caps)) pairs.push_back({s, f});
  }
  std::mt19937 rng(std::random_device{}());
  for (std::size_t i = 0; i < pairs.size() && !report.interrupted; ++i) {
    // Each pair measures at least one variant once started: past the
    // budget, none is started.
    if (run.elapsed() >= options.budget_seconds) {
      report.unmeasured = pairs.size() - i;
      if (options.progress) {
        options.progress("the budget is spent: " + std::to_string(report.unmeasured) +
                         " (size, family) pairs not measured");
      }
      break;
    }
    // This pair's share of what is left of the budget.
    const double deadline =
        run.elapsed() + (options.budget_seconds - run.elapsed()) / double(pairs.size() - i);
    report.shapes.push_back(tune_shape(run, pairs[i].first, pairs[i].second, deadline, queue, timer,
                                       rng, &report.interrupted));
  }
  const std::string launches =
      "median of " + std::to_string(run.reps) + " launches after a checked warm-up";
  report.timing =
      (timer.events_real() ? "event profiling (CL_PROFILING_COMMAND_START/END) where a product is "
                             "one launch of 2 ms or more, else the host clock around a finished "
                             "queue"
                           : "host clock around a finished queue (the driver's timestamps are not "
                             "used)") +
      std::string(", in batches of back-to-back runs where one is under 2 ms, ") + launches;
  report.seconds = run.elapsed();
  return report;
}

std::string TuneReport::to_text() const {
  std::string out = "device: " + device + "\ndate: " + date + "\ntiming: " + timing + "\n";
  for (const TuneShapeResult& s : shapes) {
    out += "\n" + s.shape.label() + " (" + s.family + "): measured " +
           std::to_string(s.measured.size()) + " of " + std::to_string(s.candidates) +
           " variant builds (variant x tier)" + (s.exhaustive ? " (all)" : "") + "\n";
    std::vector<const TuneMeasurement*> sorted;
    for (const TuneMeasurement& m : s.measured) sorted.push_back(&m);
    std::stable_sort(
        sorted.begin(), sorted.end(),
        [](const TuneMeasurement* a, const TuneMeasurement* b) { return a->gflops > b->gflops; });
    for (const TuneMeasurement* m : sorted) {
      if (!m->failure.empty()) {
        out += "  " + m->variant + ": " + m->failure.substr(0, 200) + "\n";
        continue;
      }
      out += detail::format("  %-82s %-6s %9.3f ms %9.1f GFLOP/s\n", m->variant.c_str(),
                            to_string(m->tier), m->ms, m->gflops);
    }
  }
  if (unmeasured) {
    out += "\n" + std::to_string(unmeasured) +
           " (size, family) pairs not measured: the budget was spent\n";
  }
  out +=
      "\n" + detail::format("%.1f", seconds) + " s" + (interrupted ? " (interrupted)" : "") + "\n";
  return out;
}

std::string TuneReport::to_json() const {
  using nlohmann::json;
  json j = {{"device", device},           {"date", date},
            {"timing", timing},           {"seconds", seconds},
            {"interrupted", interrupted}, {"unmeasured", unmeasured},
            {"shapes", json::array()}};
  for (const TuneShapeResult& s : shapes) {
    json shape = {{"m", s.shape.m},
                  {"n", s.shape.n},
                  {"k", s.shape.k},
                  {"label", s.shape.label()},
                  {"family", s.family},
                  {"candidates", s.candidates},
                  {"exhaustive", s.exhaustive},
                  {"measured", json::array()}};
    for (const TuneMeasurement& m : s.measured) {
      shape["measured"].push_back({{"variant", m.variant},
                                   {"tier", to_string(m.tier)},
                                   {"ms", m.ms},
                                   {"gflops", m.gflops},
                                   {"ok", m.ok},
                                   {"failure", m.failure}});
    }
    if (s.entry) {
      shape["best_variant"] = s.entry->ranking.front().variant;
      shape["best_gflops"] = s.entry->ranking.front().gflops;
    }
    j["shapes"].push_back(shape);
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace fatcl
