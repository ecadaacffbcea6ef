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

TuneReport run_tune(const cl::Context& context, const cl::Device& device,
                    const TuneOptions& options) {
  const Clock::time_point start = Clock::now();
  const DeviceCaps caps = DeviceCaps::query(device);
  TuneReport report;
  report.device = caps.summary();
  report.date = utc_timestamp();
  const std::vector<BenchShape> shapes =
      options.shapes.empty() ? default_tune_shapes(caps) : options.shapes;
  for (const BenchShape& s : shapes) check_problem_fits(caps, s.m, s.n, s.k, "tune");
  const int reps = std::max(5, options.repetitions);
  cl_int err = CL_SUCCESS;
  cl::CommandQueue queue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  check_cl(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");
  // Event timestamps where the driver gives real ones and the product is
  // one launch; the host clock otherwise.
  bool events_real = !has_driver_quirk(caps, "zero-profiling-timestamps");

  const Family& family = matmul_family(MatmulKernel::Blocked);
  LoadOptions fit;
  fit.tier = options.tier;
  // Candidates: each variant in each tier the device takes for it (a
  // variant's PTX and source builds differ in speed on NVIDIA), in the
  // family's ranking.
  struct Candidate {
    const Variant* variant;
    Tier tier;
    std::string key;  // "variant/tier"
  };
  std::vector<Candidate> ranked;
  for (const fatcl::Candidate& c :
       plan(family.manifest(), caps, fit, family.description().ranking).chain) {
    ranked.push_back({c.variant, c.tier, c.variant->name + "/" + to_string(c.tier)});
  }
  // Built once, shared by every shape; a candidate that fails to load stays failed.
  std::map<std::string, std::unique_ptr<Matmul>> built;
  std::map<std::string, std::string> load_failure;
  auto matmul_of = [&](const Candidate& c) -> Matmul* {
    if (load_failure.count(c.key)) return nullptr;
    auto it = built.find(c.key);
    if (it != built.end()) return it->second.get();
    try {
      MatmulOptions o;
      o.variant = c.variant->name;
      o.tier = c.tier;
      o.use_tuning = false;
      return built.emplace(c.key, std::make_unique<Matmul>(context, device, o)).first->second.get();
    } catch (const Error& e) {
      load_failure[c.key] = std::string(e.what()).substr(0, 300);
      return nullptr;
    }
  };

  std::mt19937 rng(std::random_device{}());
  std::size_t measured_total = 0;
  double spent_measuring = 0;
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const BenchShape& s = shapes[si];
    TuneShapeResult result;
    result.shape = s;
    result.candidates = ranked.size();
    const MatmulProblem p = make_matmul_problem(context, s.m, s.n, s.k, MatmulInputs::Random, &rng);
    const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const bool single_launch = s.k <= matmul_k_per_launch(caps);
    // One launch: its event's time where the driver's timestamps are real,
    // else the host clock around it.
    auto launch_ms = [&](Matmul& mm) {
      const Clock::time_point h0 = Clock::now();
      cl::Event e = mm.enqueue(queue, p.a, p.b, p.c, s.m, s.n, s.k);
      check_cl(queue.finish(), "clFinish");
      const double host_ms = std::chrono::duration<double, std::milli>(Clock::now() - h0).count();
      if (events_real && single_launch) {
        cl_ulong a = 0, b = 0;
        if (e.getProfilingInfo(CL_PROFILING_COMMAND_START, &a) == CL_SUCCESS &&
            e.getProfilingInfo(CL_PROFILING_COMMAND_END, &b) == CL_SUCCESS && b > a) {
          return double(b - a) * 1e-6;
        }
        events_real = false;  // timestamps read zero: the host clock from now on
      }
      return host_ms;
    };
    // This shape's share of what is left of the budget.
    const double shape_deadline =
        seconds_since(start) +
        (options.budget_seconds - seconds_since(start)) / double(shapes.size() - si);

    std::set<std::string> done;
    const Candidate* best = nullptr;
    double best_gflops = 0;
    std::size_t next_in_ranking = 0;
    for (std::size_t pick = 0; pick < ranked.size(); ++pick) {
      if (options.stop && options.stop->load()) {
        report.interrupted = true;
        break;
      }
      // Budget: go on while the mean cost so far fits before the deadline.
      const double mean = measured_total ? spent_measuring / double(measured_total) : 0;
      if (pick > 0 && seconds_since(start) + mean > shape_deadline) break;
      // The next variant: the ranking's next on every third pick or before a
      // first success, else the unmeasured one nearest to the best.
      // (The best's other tiers are nearest of all: distance 0.)
      const Candidate* v = nullptr;
      if (!best || pick % 3 == 2) {
        while (next_in_ranking < ranked.size() && done.count(ranked[next_in_ranking].key)) {
          ++next_in_ranking;
        }
        if (next_in_ranking < ranked.size()) v = &ranked[next_in_ranking];
      }
      if (!v) {
        double nearest = 0;
        for (const Candidate& c : ranked) {
          if (done.count(c.key)) continue;
          const double d = best ? parameter_distance(*c.variant, *best->variant) : 0;
          if (!v || d < nearest) {
            v = &c;
            nearest = d;
          }
        }
      }
      if (!v) break;
      done.insert(v->key);

      const Clock::time_point t0 = Clock::now();
      TuneMeasurement m;
      m.variant = v->variant->name;
      m.tier = v->tier;
      Matmul* mm = matmul_of(*v);
      if (!mm) {
        m.failure = load_failure[v->key];
      } else {
        m.tier = mm->loaded().tier;
        BenchResult r;
        auto run = [&] {
          mm->enqueue(queue, p.a, p.b, p.c, s.m, s.n, s.k);
          return std::string();
        };
        if (!detail::check(queue, p, run, r)) {
          m.failure = r.failure;
        } else {
          m.relative_error = r.relative_error;
          m.ok = r.ok;
          if (!r.ok)
            m.failure =
                "wrong result (relative error " + detail::format("%.1e", r.relative_error) + ")";
          try {
            launch_ms(*mm);  // warm-up beyond the checked launch (caches, thread pools)
            std::vector<double> ms;
            for (int i = 0; i < reps; ++i) ms.push_back(launch_ms(*mm));
            std::sort(ms.begin(), ms.end());
            m.ms = ms[ms.size() / 2];
            m.gflops = flop / (m.ms * 1e6);
          } catch (const Error& e) {
            m.failure = e.what();
            m.ok = false;
          }
        }
      }
      spent_measuring += seconds_since(t0);
      ++measured_total;
      if (m.ok && m.failure.empty() && m.gflops > best_gflops) {
        best_gflops = m.gflops;
        best = v;
      }
      result.measured.push_back(m);
      if (options.progress) {
        const double left = std::max(0.0, std::min(shape_deadline - seconds_since(start),
                                                   spent_measuring / double(measured_total) *
                                                       double(ranked.size() - done.size())));
        options.progress(
            "[" + std::to_string(done.size()) + "/" + std::to_string(ranked.size()) + "] " +
            s.label() + ": " + v->key + " " +
            (m.failure.empty() ? detail::format("%.1f GFLOP/s", m.gflops)
                               : "failed: " + m.failure.substr(0, 80)) +
            "; best " +
            (best ? detail::format("%.1f", best_gflops) + " (" + best->key + ")" : "none") + "; " +
            detail::format("%.1f s", seconds_since(start)) + " elapsed, ~" +
            detail::format("%.0f s", left) + " left for this size");
      }
    }
    result.exhaustive = done.size() == ranked.size();
    // The leaders again, in turn and twice as often: measured minutes apart,
    // near-equal variants trade places on a busy machine; side by side they
    // do not.
    std::vector<TuneMeasurement*> leaders;
    for (TuneMeasurement& m : result.measured) {
      if (m.ok && m.failure.empty() && m.gflops >= 0.8 * best_gflops) leaders.push_back(&m);
    }
    std::sort(
        leaders.begin(), leaders.end(),
        [](const TuneMeasurement* a, const TuneMeasurement* b) { return a->gflops > b->gflops; });
    if (leaders.size() > 4) leaders.resize(4);
    if (leaders.size() > 1 && !(options.stop && options.stop->load())) {
      std::vector<std::vector<double>> ms(leaders.size());
      try {
        for (int i = 0; i < 2 * reps; ++i) {
          for (std::size_t l = 0; l < leaders.size(); ++l) {
            ms[l].push_back(
                launch_ms(*built.at(leaders[l]->variant + "/" + to_string(leaders[l]->tier))));
          }
        }
        for (std::size_t l = 0; l < leaders.size(); ++l) {
          std::sort(ms[l].begin(), ms[l].end());
          leaders[l]->ms = ms[l][ms[l].size() / 2];
          leaders[l]->gflops = flop / (leaders[l]->ms * 1e6);
        }
        if (options.progress) {
          options.progress(s.label() + ": the " + std::to_string(leaders.size()) +
                           " fastest measured again in turn");
        }
      } catch (const Error&) {
        // Keep the first measurements.
      }
    }
    std::vector<const TuneMeasurement*> good;
    for (const TuneMeasurement& m : result.measured) {
      if (m.ok && m.failure.empty()) good.push_back(&m);
    }
    std::stable_sort(
        good.begin(), good.end(),
        [](const TuneMeasurement* a, const TuneMeasurement* b) { return a->gflops > b->gflops; });
    if (!good.empty()) {
      TuningEntry e;
      e.family = family.manifest().family;
      e.platform = caps.platform_name;
      e.device = caps.device_name;
      e.driver = caps.driver_version;
      e.problem = {s.m, s.n, s.k};
      e.measured = utc_timestamp();
      e.fatcl_version = fatcl_version();
      for (const TuneMeasurement* m : good) {
        const Variant& v = family.manifest().variant(m->variant);
        e.ranking.push_back(
            {m->variant, tier_sha256(family.manifest(), v, m->tier), m->tier, m->gflops});
      }
      result.entry = std::move(e);
    }
    report.shapes.push_back(std::move(result));
    if (report.interrupted) break;
  }
  report.timing = events_real ? "event profiling (CL_PROFILING_COMMAND_START/END), median of " +
                                    std::to_string(reps) + " launches after a checked warm-up"
                              : "host clock around a finished queue (the driver's timestamps are "
                                "not used), median of " +
                                    std::to_string(reps) + " launches after a checked warm-up";
  report.seconds = seconds_since(start);
  return report;
}

std::string TuneReport::to_text() const {
  std::string out = "device: " + device + "\ndate: " + date + "\ntiming: " + timing + "\n";
  for (const TuneShapeResult& s : shapes) {
    out += "\n" + s.shape.label() + ": measured " + std::to_string(s.measured.size()) + " of " +
           std::to_string(s.candidates) + " variant builds (variant x tier)" +
           (s.exhaustive ? " (all)" : "") + "\n";
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
  out +=
      "\n" + detail::format("%.1f", seconds) + " s" + (interrupted ? " (interrupted)" : "") + "\n";
  return out;
}

std::string TuneReport::to_json() const {
  using nlohmann::json;
  json j = {{"device", device},           {"date", date},
            {"timing", timing},           {"seconds", seconds},
            {"interrupted", interrupted}, {"shapes", json::array()}};
  for (const TuneShapeResult& s : shapes) {
    json shape = {{"m", s.shape.m},
                  {"n", s.shape.n},
                  {"k", s.shape.k},
                  {"label", s.shape.label()},
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
