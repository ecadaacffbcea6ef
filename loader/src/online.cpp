#include "fatcl/online.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "environment.hpp"
#include "fatcl/detail/clock.hpp"
#include "fatcl/detail/format.hpp"
#include "fatcl/store.hpp"

namespace fatcl {

bool online_tuning_requested() { return detail::online_tuning_from_environment(); }

OnlineTrial::OnlineTrial(std::size_t candidates, const OnlineOptions& options)
    : state_(std::max<std::size_t>(1, candidates)), options_(options) {
  state_[0].ready = true;
}

void OnlineTrial::ready(std::size_t c) { state_.at(c).ready = true; }
void OnlineTrial::fail(std::size_t c) { state_.at(c).failed = true; }

OnlineTrial::Turn OnlineTrial::next() const {
  // No timing while a build runs: on a CPU it takes cores from the call.
  for (const State& s : state_) {
    if (!s.ready && !s.failed) return {best(), false};
  }
  std::optional<std::size_t> pick;
  for (std::size_t c = 0; c < state_.size(); ++c) {
    const State& s = state_[c];
    if (!s.ready || s.failed || s.dropped || s.runs >= options_.warmup + options_.rounds) continue;
    if (!pick || s.runs < state_[*pick].runs) pick = c;
  }
  if (pick) return {*pick, true};
  return {best(), false};
}

void OnlineTrial::record(std::size_t c, double ms) {
  State& s = state_.at(c);
  fastest_seen_ = std::min(fastest_seen_, ms);
  if (s.runs++ < options_.warmup) {
    // A warm-up does not count, except that one already far slower than
    // every call so far (warm-ups included: each a first launch) ends the
    // candidate.
    if (ms > options_.drop_factor * fastest_seen_) s.dropped = true;
    return;
  }
  s.ms.push_back(ms);
  const std::size_t b = best();
  for (std::size_t i = 0; i < state_.size(); ++i) {
    if (i != b && !state_[i].ms.empty() && best_ms(i) > options_.drop_factor * best_ms(b)) {
      state_[i].dropped = true;
    }
  }
}

bool OnlineTrial::settled() const {
  for (const State& s : state_) {
    if (s.failed || s.dropped) continue;
    if (!s.ready || s.ms.size() < std::size_t(options_.rounds)) return false;
  }
  return true;
}

double OnlineTrial::best_ms(std::size_t c) const {
  const std::vector<double>& ms = state_.at(c).ms;
  return ms.empty() ? std::numeric_limits<double>::infinity()
                    : *std::min_element(ms.begin(), ms.end());
}

std::size_t OnlineTrial::best() const {
  std::size_t b = 0;
  for (std::size_t c = 1; c < state_.size(); ++c) {
    if (state_[c].failed || best_ms(c) * options_.margin >= best_ms(0)) continue;
    if (b == 0 || best_ms(c) < best_ms(b)) b = c;
  }
  return b;
}

std::size_t OnlineTrial::timings(std::size_t c) const { return state_.at(c).ms.size(); }
bool OnlineTrial::dropped(std::size_t c) const { return state_.at(c).dropped; }

constexpr double kPredictedTooSlow = 3;

// An entry's leader is weighed only near the problem: each of the entry's
// sizes (the batch's too) within kNearProblem times the problem's, so that a
// point measured fastest at a thin product is not timed on a square one. On
// an H100 (2026-12-07) the H200's leader of a thin class, the 8 x 128 tile,
// was the third candidate of every size learned through the GEMM entry
// points, and its warm-up call took 3.5 to 5.5 times the choice's time at
// 3000^3, 5000 x 3000 x 1000 and 13659 x 1392 x 481. A problem or entry
// without sizes is near every one.
constexpr double kNearProblem = 4;
bool near_problem(const std::vector<std::size_t>& entry, const std::vector<std::size_t>& problem) {
  if (entry.empty() || problem.empty()) return true;
  if (entry.size() != problem.size()) return false;
  for (std::size_t i = 0; i < entry.size(); ++i) {
    const double a = double(std::max<std::size_t>(entry[i], 1));
    const double b = double(std::max<std::size_t>(problem[i], 1));
    if (std::max(a, b) > kNearProblem * std::min(a, b)) return false;
  }
  return true;
}

std::vector<std::string> online_candidates(const Family& family, const DeviceCaps& caps,
                                           const LoadOptions& options, const std::string& current,
                                           std::size_t n) {
  std::vector<std::string> out{current};
  std::set<std::string> fits;
  LoadOptions ranked = options;
  ranked.variant.clear();
  ranked.tier.reset();
  std::optional<TuningEntry> entry;
  const Plan p = ranked_plan(family, caps, ranked, nullptr, nullptr, &entry);
  for (const Variant* v : p.variants()) fits.insert(v->name);
  const std::shared_ptr<Store> store = options.store ? options.store : Store::user();
  // A variant predicted here at under a third of the current choice's rate
  // would cost a slow call to find that out: by the entry that ranks the
  // plan, its rates carried to the problem by the family's model, else by
  // the family's model of the problem alone. The rates the entry measured
  // at its own sizes do not say it: the Xeon's entry at 1024^3 has the 16 x
  // 32 CPU point at 198 GFLOP/s and the 24 x 16 one at 131, and at 664 x 24
  // x 325 (fewer columns than the first's tile: its guarded path) they ran
  // 13 and 82 (Intel's CPU runtime, 2026-12-07), the first a candidate
  // then, its call 6.8 times the choice's; on an H100 the dot family's CPU
  // point (K in one work-item, a model score of a hundredth) took 3.9 times
  // the GPU point's call at 8192 x 1 x 8192.
  std::map<std::string, double> predicted;
  if (entry) {
    const TuningEntry here = carry_tuning(*entry, family, caps, options.problem, nullptr, nullptr,
                                          launch_floor_ms(*store, family, caps));
    for (const TunedVariant& t : here.ranking) {
      predicted[t.variant] = std::max(predicted[t.variant], t.gflops);
    }
  } else if (const auto& model = family.description().ranking.shape_score;
             model && !options.problem.empty()) {
    for (const Variant* v : p.variants()) predicted[v->name] = model(*v, caps, options.problem);
  }
  double reference = 0;
  if (auto it = predicted.find(current); it != predicted.end()) {
    reference = it->second;
  } else {
    for (const auto& [name, rate] : predicted) reference = std::max(reference, rate);
  }
  auto predicted_slow = [&](const std::string& name) {
    const auto it = predicted.find(name);
    return it != predicted.end() && it->second * kPredictedTooSlow < reference;
  };
  auto add = [&](const std::string& name) {
    if (out.size() < n && fits.count(name) && !predicted_slow(name) &&
        std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  };
  // Half the places for the plan's leaders, the rest for what led on other
  // devices of this compiler: the plan's order is a guess here.
  const std::size_t from_plan = std::max<std::size_t>(2, (n + 1) / 2);
  for (const Variant* v : p.variants()) {
    if (out.size() >= from_plan) break;
    add(v->name);
  }
  std::vector<TuningEntry> entries = store->tuning();
  const auto& shipped = shipped_tuning_for(family, caps);
  entries.insert(entries.end(), shipped.begin(), shipped.end());
  const DeviceProfile here = caps.profile();
  std::vector<std::pair<double, std::string>> leaders;
  for (const TuningEntry& e : entries) {
    if (e.family != family.manifest().family || e.form != options.form || !e.measured_on ||
        e.ranking.empty() || !near_problem(e.problem, options.problem)) {
      continue;
    }
    const double similarity = device_similarity(*e.measured_on, here);
    if (similarity > 0) leaders.push_back({similarity, e.ranking.front().variant});
  }
  std::stable_sort(leaders.begin(), leaders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& l : leaders) add(l.second);
  for (const Variant* v : p.variants()) add(v->name);
  return out;
}

struct OnlineChoice::Impl {
  cl::Context context;
  cl::Device device;
  const Family* family = nullptr;
  std::vector<std::size_t> problem;
  std::vector<std::string> variants;
  std::vector<std::optional<Tier>> first_tier;  // where the ranked plan tries each first
  LoadOptions load;
  std::shared_ptr<Store> store;  // load.store, else the user's: the entry's
  DeviceCaps caps;

  mutable std::mutex mutex;  // guards built, failures and trial
  std::vector<std::optional<LoadedKernel>> built;
  std::vector<std::string> failures;
  OnlineTrial trial;
  std::vector<std::pair<std::string, double>> calls;
  std::vector<double> operations;  // per candidate, of its timings
  bool stored = false;
  std::string store_note;
  // The entry as far as the calls do not decide it, made at first use: the
  // call that settles only adds the timings.
  TuningEntry skeleton;

  std::atomic<bool> stop{false};
  // Builds the candidates (unless OnlineOptions::build_first), then saves
  // the store once the trial settles (save_asked), or ends at `stop`.
  std::thread worker;
  std::condition_variable wake;  // with `mutex`: save_asked or stop
  bool save_asked = false;
  std::atomic<bool> saving{false};

  Impl(std::size_t n, const OnlineOptions& options) : built(n), failures(n), trial(n, options) {}

  void build_all() {
    for (std::size_t c = 1; c < variants.size() && !stop; ++c) {
      LoadOptions o = load;
      o.variant = variants[c];
      o.use_tuning = false;
      // In the tier the ranking tries it first (a tuning entry's, where it
      // measured one faster), else down the loader's chain.
      if (!o.tier) o.tier = first_tier[c];
      std::optional<LoadedKernel> k;
      std::string failure;
      for (int attempt = 0; attempt < 2 && !k; ++attempt) {
        try {
          k = fatcl::load(context, device, *family, o);
        } catch (const std::exception& e) {
          failure = e.what();
          failure = failure.substr(0, failure.find('\n'));
          if (!o.tier || load.tier) break;
          o.tier.reset();
        }
      }
      // A first launch here, on the family's small trial problem: a driver
      // may finish building the kernel then (PoCL compiles for the
      // work-group size), which the product's call would otherwise wait for.
      if (k && family->description().trial) {
        try {
          (void)family->description().trial(context, device, k->kernel, k->variant);
        } catch (const std::exception&) {
          // Only a warm-up: the timed calls check nothing less for it.
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (k) {
        built[c] = std::move(k);
        trial.ready(c);
      } else {
        failures[c] = "did not load (" + failure + ")";
        trial.fail(c);
      }
    }
  }

  // Waits for the trial to settle, then saves the store (a save asked for
  // is done even after `stop`: the entry is in the store's memory already).
  void save_when_asked() {
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait(lock, [this] { return stop || save_asked; });
    if (!save_asked) return;
    lock.unlock();
    std::string note = save_store();
    lock.lock();
    store_note = std::move(note);
    saving = false;
  }
  // Saves the store; what went wrong, in words, or "".
  std::string save_store() {
    try {
      store->save();
    } catch (const std::exception& x) {
      return std::string("the store could not be written: ") + x.what();
    }
    return "";
  }

  std::string describe_locked() const;
  void store_entry_locked();
};

OnlineChoice::OnlineChoice(const cl::Context& context, const cl::Device& device,
                           const Family& family, std::vector<std::size_t> problem,
                           LoadedKernel current, std::vector<std::string> variants,
                           LoadOptions load, const OnlineOptions& options) {
  if (variants.empty() || variants.front() != current.variant.name) {
    variants.insert(variants.begin(), current.variant.name);
  }
  impl_ = std::make_unique<Impl>(variants.size(), options);
  Impl& d = *impl_;
  d.context = context;
  d.device = device;
  d.family = &family;
  d.problem = std::move(problem);
  d.variants = std::move(variants);
  d.load = std::move(load);
  d.store = d.load.store ? d.load.store : Store::user();
  d.caps = DeviceCaps::query(device);
  d.first_tier.resize(d.variants.size());
  LoadOptions ranked = d.load;
  ranked.variant.clear();
  for (const Candidate& c : ranked_plan(family, d.caps, ranked).chain) {
    for (std::size_t i = 0; i < d.variants.size(); ++i) {
      if (d.variants[i] == c.variant->name && !d.first_tier[i]) d.first_tier[i] = c.tier;
    }
  }
  d.built[0] = std::move(current);
  d.operations.assign(d.variants.size(), 0);
  d.skeleton = measured_entry(d.caps, family.manifest().family, d.load.form, d.problem,
                              "fatcl online");
  if (options.build_first) d.build_all();
  d.worker = std::thread([&d, build = !options.build_first] {
    if (build) d.build_all();
    d.save_when_asked();
  });
}

OnlineChoice::~OnlineChoice() {
  if (!impl_ || !impl_->worker.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->wake.notify_one();
  impl_->worker.join();
}

OnlineChoice::Turn OnlineChoice::next() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const OnlineTrial::Turn t = impl_->trial.next();
  return {&*impl_->built[t.candidate], t.candidate, t.timed};
}

void OnlineChoice::record(const Turn& turn, double ms, double operations) {
  Impl& d = *impl_;
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!turn.timed || d.stored) return;
  d.trial.record(turn.candidate, ms);
  d.operations[turn.candidate] = operations;
  d.calls.push_back({d.variants[turn.candidate], ms});
  if (d.trial.settled()) d.store_entry_locked();
}

bool OnlineChoice::settled() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->trial.settled();
}

bool OnlineChoice::saving() const { return impl_->saving; }

const LoadedKernel& OnlineChoice::choice() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return *impl_->built[impl_->trial.best()];
}

std::size_t OnlineChoice::size() const { return impl_->variants.size(); }

const LoadedKernel* OnlineChoice::candidate(std::size_t c) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const std::optional<LoadedKernel>& k = impl_->built.at(c);
  return k && impl_->failures[c].empty() ? &*k : nullptr;
}

void OnlineChoice::leave_out(std::size_t c, const std::string& why) {
  Impl& d = *impl_;
  std::lock_guard<std::mutex> lock(d.mutex);
  if (c == 0 || c >= d.variants.size() || d.stored || !d.failures[c].empty()) return;
  d.failures[c] = "left out (" + why + ")";
  d.trial.fail(c);
  if (d.trial.settled()) d.store_entry_locked();
}

std::string OnlineChoice::report() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->describe_locked();
}

std::string OnlineChoice::Impl::describe_locked() const {
  const std::size_t best = trial.best();
  std::string out = "online: " + std::to_string(variants.size()) + " candidates for " +
                    problem_text(problem) + ", " + std::to_string(calls.size()) + " timed calls:";
  for (std::size_t c = 0; c < variants.size(); ++c) {
    out += (c ? "; " : " ") + variants[c];
    if (built[c]) out += std::string(" [") + to_string(built[c]->tier) + "]";
    if (trial.timings(c)) out += detail::format(" %.3f ms", trial.best_ms(c));
    if (!failures[c].empty()) out += " " + failures[c];
    if (trial.dropped(c)) out += " (dropped: slower than the fastest by the drop factor)";
    if (trial.settled() && c == best) out += " (chosen)";
  }
  if (stored) out += "; kept in the store";
  if (!store_note.empty()) out += "; " + store_note;
  return out;
}

// The entry: the choice first (the current one stays unless another was
// `margin` faster), then the other timed candidates, fastest first, each at
// the rate it ran.
void OnlineChoice::Impl::store_entry_locked() {
  TuningEntry e = skeleton;
  e.measured = utc_timestamp();
  std::vector<std::size_t> order;
  for (std::size_t c = 0; c < variants.size(); ++c) {
    if (built[c] && trial.timings(c)) order.push_back(c);
  }
  const std::size_t choice = trial.best();
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if ((a == choice) != (b == choice)) return a == choice;
    return trial.best_ms(a) < trial.best_ms(b);
  });
  for (std::size_t c : order) {
    const LoadedKernel& k = *built[c];
    const double gflops = operations[c] / (trial.best_ms(c) * 1e6);
    e.ranking.push_back({k.variant.name, tier_sha256(family->manifest(), k.variant, k.tier), k.tier,
                         std::isfinite(gflops) ? gflops : 0});
  }
  stored = true;
  LoadedKernel& chosen = *built[choice];
  chosen.tuning_entry = e;
  chosen.explanation.tuning = describe_locked();
  store->put_tuning(std::move(e));
  // The file on the worker thread: the settling call is a product's, and
  // saving the user's store reads, merges and rewrites its file under a
  // lock. Against calls of 25 us (Intel's CPU runtime, 2 Xeon cores,
  // 2026-12-07) a thread started there for it took 66-75 us, and the
  // entry's fixed fields 15-75 (made at first use now, the skeleton).
  saving = true;
  save_asked = true;
  wake.notify_one();
}

FamilyTuneReport tune_family(const cl::Context& context, const cl::Device& device,
                             const Family& family,
                             const std::vector<std::vector<std::size_t>>& problems,
                             const FamilyTuneOptions& options) {
  const std::string name = family.manifest().family;
  if (!family.description().timing) {
    throw Error("tune_family: the family " + name + " gives no timing launch");
  }
  const DeviceCaps caps = DeviceCaps::query(device);
  const std::shared_ptr<Store> store = options.store ? options.store : Store::user();
  const cl::CommandQueue queue = queue_for(context, device);
  FamilyTuneReport report;
  // Each fitting variant, loaded once.
  std::vector<LoadedKernel> loaded;
  LoadOptions lo;
  lo.store = store;
  lo.cache = options.cache;
  lo.use_tuning = false;
  lo.form = options.form;
  for (const Variant* v : plan(family.manifest(), caps, lo).variants()) {
    LoadOptions one = lo;
    one.variant = v->name;
    try {
      loaded.push_back(load(context, device, family, one));
    } catch (const std::exception& e) {
      const std::string what = e.what();
      report.failures.push_back(v->name + ": " + what.substr(0, what.find('\n')));
    }
  }
  const int reps = std::max(1, options.repetitions);
  for (const std::vector<std::size_t>& problem : problems) {
    const TimedProblem timed = family.description().timing(context, device, problem);
    std::vector<std::pair<double, const LoadedKernel*>> times;
    // A product's launch that throws is a failure of that variant.
    auto run = [&](const LoadedKernel& k) {
      try {
        return timed.run(queue, k.kernel, k.variant);
      } catch (const std::exception& e) {
        return std::string("the timing launch threw: ") + e.what();
      }
    };
    for (const LoadedKernel& k : loaded) {
      std::vector<double> ms;
      std::string failure = run(k);  // the warm-up
      const cl_int finished = clFinish(queue());
      if (failure.empty() && finished != CL_SUCCESS)
        failure = "clFinish: " + cl_status_name(finished);
      for (int r = 0; r < reps && failure.empty(); ++r) {
        const auto start = std::chrono::steady_clock::now();
        failure = run(k);
        check_cl(clFinish(queue()), "clFinish (tune_family " + name + ")");
        ms.push_back(detail::ms_since(start));
      }
      if (!failure.empty()) {
        report.failures.push_back(k.variant.name + " on " + problem_text(problem) + ": " + failure);
        continue;
      }
      std::sort(ms.begin(), ms.end());
      times.push_back({ms[ms.size() / 2], &k});
    }
    if (times.empty()) continue;
    std::stable_sort(times.begin(), times.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    TuningEntry e = measured_entry(caps, name, options.form, problem, "fatcl::tune_family");
    for (const auto& [ms, k] : times) {
      const double rate = ms > 0 ? timed.work / (ms * 1e6) : 0;
      e.ranking.push_back({k->variant.name, tier_sha256(family.manifest(), k->variant, k->tier),
                           k->tier, std::isfinite(rate) ? rate : 0});
    }
    store->put_tuning(e);
    report.entries.push_back(std::move(e));
  }
  try {
    store->save();
  } catch (const std::exception& x) {
    report.store_note = std::string("the store could not be written: ") + x.what();
  }
  return report;
}

}  // namespace fatcl
