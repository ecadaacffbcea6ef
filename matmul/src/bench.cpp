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

#include "fatcl/store.hpp"
#include "measure.hpp"

namespace fatcl {
namespace {

using detail::check;
using detail::make_problem;
using detail::Problem;

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Checks each run, then times those that ran, in turn (interleaved_median_ms).
void measure(const cl::CommandQueue& queue, const Problem& p, int reps,
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
    const BenchShape& s = p.shape;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      timed_results[i]->ms = ms[i];
      timed_results[i]->gflops = 2.0 * double(s.m) * double(s.n) * double(s.k) / (ms[i] * 1e6);
    }
  } catch (const Error& e) {
    for (BenchResult* r : timed_results) r->failure = e.what();
  }
}

void measure(const cl::CommandQueue& queue, const Problem& p, int reps,
             const std::function<std::string()>& run, BenchResult& r) {
  measure(queue, p, reps, {run}, {&r});
}

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A precompiled tier (spirv, ptx) against source, variant by variant, where
// a run measured both tiers of a variant (bench --tier all, timed in turn).
struct TierComparison {
  std::size_t variants = 0;
  double geomean = 0, lowest = 0, highest = 0;
  double fastest = 0;  // fastest result of the tier / fastest source result
};

std::optional<TierComparison> compare_tiers(const BenchSize& s, const std::string& tier) {
  TierComparison t;
  double log_sum = 0, best_tier = 0, best_source = 0;
  for (const BenchResult& a : s.results) {
    if (a.tier != tier || !a.ok || !a.failure.empty()) continue;
    best_tier = std::max(best_tier, a.gflops);
    for (const BenchResult& b : s.results) {
      if (b.tier != "source" || b.variant != a.variant || !b.ok || !b.failure.empty()) continue;
      const double ratio = a.gflops / b.gflops;
      log_sum += std::log(ratio);
      t.lowest = t.variants ? std::min(t.lowest, ratio) : ratio;
      t.highest = t.variants ? std::max(t.highest, ratio) : ratio;
      ++t.variants;
    }
  }
  for (const BenchResult& b : s.results) {
    if (b.tier == "source" && b.ok && b.failure.empty())
      best_source = std::max(best_source, b.gflops);
  }
  if (t.variants == 0 || best_source == 0) return std::nullopt;
  t.geomean = std::exp(log_sum / double(t.variants));
  t.fastest = best_tier / best_source;
  return t;
}

// The precompiled tiers compared with source, as bench names them.
const std::vector<std::pair<std::string, std::string>>& compared_tiers() {
  static const std::vector<std::pair<std::string, std::string>> tiers{{"spirv", "SPIR-V"},
                                                                      {"ptx", "PTX"}};
  return tiers;
}

// GFLOP/s of a choice: its result above if that variant and tier ran, else
// measured now (listed as kernel "auto").
template <typename Progress>
double choice_gflops(const cl::CommandQueue& queue, const Problem& p, int reps,
                     const Matmul& matmul, BenchSize& size, const std::string& variant,
                     const std::string& tier, const Progress& progress) {
  const BenchShape& s = p.shape;
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
  size.results.push_back(r);
  return r.failure.empty() && r.ok ? r.gflops : 0;
}

}  // namespace

std::vector<std::size_t> reference_rows(std::size_t m, std::size_t n, std::size_t k,
                                        std::size_t budget) {
  const std::size_t rows_in_budget = std::max<std::size_t>(1, budget / (n * k));
  const std::size_t step = std::max<std::size_t>(1, m / std::min(m, rows_in_budget));
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < m; i += step) rows.push_back(i);
  if (rows.back() != m - 1) rows.push_back(m - 1);
  return rows;
}

double median_ms(const cl::CommandQueue& queue, const std::function<void()>& run, int reps) {
  return interleaved_median_ms(queue, {run}, reps).front();
}

std::vector<double> interleaved_median_ms(const cl::CommandQueue& queue,
                                          const std::vector<std::function<void()>>& runs,
                                          int reps) {
  std::vector<std::vector<double>> ms(runs.size());
  for (int i = 0; i < std::max(1, reps); ++i) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      check_cl(queue.finish(), "clFinish");
      const auto start = std::chrono::steady_clock::now();
      runs[r]();
      check_cl(queue.finish(), "clFinish");
      ms[r].push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
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
  auto gib = [](double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1ull << 30));
    return std::string(text);
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
                gib(double(caps.global_mem_bytes)) + " of this device's global memory");
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 && a + b + c > double(pages) * double(page)) {
    throw Error(who + ": " + size + ": the host copies of A, B and C need " + gib(a + b + c) +
                ", more than this machine's " + gib(double(pages) * double(page)) + " of memory");
  }
}

BenchReport run_bench(const cl::Context& context, const cl::Device& device,
                      const BenchOptions& options) {
  const DeviceCaps caps = DeviceCaps::query(device);
  BenchReport report;
  report.device = caps.summary();
  report.date = utc_timestamp();
  const std::vector<BenchShape> shapes =
      options.shapes.empty() ? default_shapes(caps) : options.shapes;
  for (const BenchShape& s : shapes) check_problem_fits(caps, s.m, s.n, s.k, "bench");
  const int reps = std::max(1, options.repetitions);
  cl_int err = CL_SUCCESS;
  cl::CommandQueue queue(context, device, 0, &err);
  check_cl(err, "clCreateCommandQueue");

  // The automatic choice, as a product would make it, and without tuning.
  Matmul automatic(context, device);
  MatmulOptions untuned;
  untuned.use_tuning = false;
  Matmul heuristic(context, device, untuned);

  // The fatcl kernels: every variant of the naive and tiled families, and
  // the blocked family in its own ranking (its top N with options.top, and
  // the automatic choices, so that they are timed in the same turns).
  struct Entry {
    MatmulKernel kernel;
    std::string variant;
    std::optional<Tier> tier;  // none: the loader's choice
    std::unique_ptr<Matmul> matmul;
    std::string failure;
  };
  // Each variant in each tier asked for (all: every tier the device takes
  // for it, in the same run).
  std::vector<std::optional<Tier>> tiers;
  for (Tier t : options.tiers) tiers.push_back(t);
  if (tiers.empty()) tiers.push_back(std::nullopt);
  std::vector<Entry> entries;
  for (MatmulKernel k : {MatmulKernel::Naive, MatmulKernel::Tiled, MatmulKernel::Blocked}) {
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
        entries.push_back({k, name, t, nullptr, ""});
      }
    }
  }
  const std::size_t total = shapes.size() * (entries.size() + 2 + options.external.size());
  std::size_t done = 0;
  const auto start = std::chrono::steady_clock::now();
  auto progress = [&](const BenchShape& s, const std::string& what) {
    ++done;
    if (!options.progress) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    options.progress("[" + std::to_string(done) + "/" + std::to_string(total) + "] " + s.label() +
                     ": " + what + " (" + format("%.1f", elapsed) + " s)");
  };

  std::mt19937 rng(std::random_device{}());
  for (const BenchShape& s : shapes) {
    const Problem p = make_problem(context, s, rng);
    BenchSize size;
    size.shape = s;
    // Every variant in every tier, timed in turn (round-robin): a machine
    // that speeds up or slows down mid-way affects each alike.
    std::vector<std::function<std::string()>> runs;
    std::vector<std::size_t> slots;
    for (Entry& e : entries) {
      progress(s, std::string(to_string(e.kernel)) + " " + e.variant +
                      (e.tier ? std::string(" (") + to_string(*e.tier) + ")" : ""));
      BenchResult r;
      r.kernel = to_string(e.kernel);
      r.variant = e.variant;
      if (!e.matmul && e.failure.empty()) {
        try {
          MatmulOptions o;
          o.variant = e.variant;
          o.tier = e.tier;
          e.matmul = std::make_unique<Matmul>(context, device, o);
        } catch (const Error& error) {
          e.failure = std::string(error.what()).substr(0, 300);
        }
      }
      if (!e.matmul) {
        r.failure = e.failure;
      } else {
        r.tier = to_string(e.matmul->loaded().tier);
        runs.push_back([&e, &p, &queue, &s] {
          e.matmul->enqueue(queue, p.a, p.b, p.c, s.m, s.n, s.k);
          return std::string();
        });
        slots.push_back(size.results.size());
      }
      size.results.push_back(r);
    }
    std::vector<BenchResult*> results;
    for (std::size_t slot : slots) results.push_back(&size.results[slot]);
    if (options.progress) {
      options.progress(s.label() + ": checking, then timing the " + std::to_string(runs.size()) +
                       " kernels in turn, " + std::to_string(reps) + " rounds");
    }
    measure(queue, p, reps, runs, results);
    // The automatic choice with the tuning database (per shape), and the
    // families' own ranking without it.
    const LoadedKernel& tuned = automatic.loaded_for(s.m, s.n, s.k);
    size.auto_variant = tuned.variant.name;
    size.auto_tier = to_string(tuned.tier);
    size.auto_tuning = tuned.explanation.tuning.substr(0, tuned.explanation.tuning.find('\n'));
    size.auto_gflops =
        choice_gflops(queue, p, reps, automatic, size, size.auto_variant, size.auto_tier, progress);
    size.heuristic_variant = heuristic.loaded().variant.name;
    size.heuristic_tier = to_string(heuristic.loaded().tier);
    size.heuristic_gflops = choice_gflops(queue, p, reps, heuristic, size, size.heuristic_variant,
                                          size.heuristic_tier, progress);
    for (const ExternalKernel& x : options.external) {
      progress(s, x.name);
      BenchResult r;
      r.kernel = x.name;
      measure(
          queue, p, reps, [&] { return x.run(queue, p.a, p.b, p.c, s.m, s.n, s.k); }, r);
      size.results.push_back(r);
    }
    report.sizes.push_back(std::move(size));
  }
  return report;
}

std::string BenchReport::to_text() const {
  std::string out = "device: " + device + "\ndate: " + date +
                    "\ntiming: median of the timed runs, host clock around a finished queue; "
                    "every result checked against a double-precision reference\n";
  for (const BenchSize& s : sizes) {
    out += "\nM x N x K = " + std::to_string(s.shape.m) + " x " + std::to_string(s.shape.n) +
           " x " + std::to_string(s.shape.k) + "\n";
    const BenchResult* naive = s.find("naive");
    const BenchResult* clblast = nullptr;
    for (const BenchResult& r : s.results) {
      if (r.variant.empty() && r.failure.empty()) clblast = &r;
    }
    std::vector<const BenchResult*> sorted;
    for (const BenchResult& r : s.results) sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const BenchResult* a, const BenchResult* b) {
      return a->gflops > b->gflops;
    });
    char line[512];
    std::snprintf(line, sizeof line, "  %-8s %-72s %-6s %10s %10s %8s %8s  %s\n", "kernel",
                  "variant", "tier", "ms", "GFLOP/s", "/naive", "/CLBlast", "check");
    out += line;
    for (const BenchResult* r : sorted) {
      if (!r->failure.empty()) {
        out += "  " + r->kernel + " " + r->variant + ": did not run: " + r->failure + "\n";
        continue;
      }
      std::snprintf(line, sizeof line, "  %-8s %-72s %-6s %10.3f %10.1f %8s %8s  %s %.1e%s\n",
                    r->kernel.c_str(), r->variant.c_str(), r->tier.c_str(), r->ms, r->gflops,
                    naive ? format("%.2fx", r->gflops / naive->gflops).c_str() : "",
                    clblast ? format("%.2fx", r->gflops / clblast->gflops).c_str() : "",
                    r->ok ? "ok" : "WRONG", r->relative_error,
                    r->variant == s.auto_variant && r->tier == s.auto_tier
                        ? "  <- automatic choice"
                        : (r->variant == s.heuristic_variant && r->tier == s.heuristic_tier
                               ? "  <- choice without tuning"
                               : ""));
      out += line;
    }
    const BenchResult* best = s.best_fatcl();
    if (best) {
      out += "  best fatcl: " + best->variant + " " + format("%.1f", best->gflops) + " GFLOP/s";
      if (clblast) out += ", " + format("%.2f", best->gflops / clblast->gflops) + "x CLBlast";
      out += "; automatic choice " + s.auto_variant + " at " +
             format("%.2f", s.auto_gflops / best->gflops) + "x the best, without tuning " +
             s.heuristic_variant + " at " + format("%.2f", s.heuristic_gflops / best->gflops) +
             "x\n  " + s.auto_tuning + "\n";
    }
    for (const auto& [tier, name] : compared_tiers()) {
      if (const std::optional<TierComparison> t = compare_tiers(s, tier)) {
        out += "  " + name + " / source over " + std::to_string(t->variants) +
               " variants (each pair timed in turn): geometric mean " + format("%.2f", t->geomean) +
               "x (" + format("%.2f", t->lowest) + "x to " + format("%.2f", t->highest) +
               "x); fastest " + name + " / fastest source " + format("%.2f", t->fastest) + "x\n";
      }
    }
  }
  return out;
}

std::string BenchReport::to_json() const {
  using nlohmann::json;
  json j = {{"device", device}, {"date", date}, {"sizes", json::array()}};
  for (const BenchSize& s : sizes) {
    json size = {{"m", s.shape.m},           {"n", s.shape.n},
                 {"k", s.shape.k},           {"label", s.shape.label()},
                 {"results", json::array()}, {"auto_variant", s.auto_variant},
                 {"auto_tier", s.auto_tier}, {"auto_gflops", s.auto_gflops}};
    const BenchResult* clblast = nullptr;
    for (const BenchResult& r : s.results) {
      size["results"].push_back(
          {{"kernel", r.kernel},
           {"variant", r.variant},
           {"tier", r.tier},
           {"ms", r.ms},
           {"gflops", r.gflops},
           {"relative_error",
            std::isfinite(r.relative_error) ? json(r.relative_error) : json(nullptr)},
           {"ok", r.ok},
           {"failure", r.failure}});
      if (r.variant.empty() && r.failure.empty() && r.ok) clblast = &r;
    }
    const BenchResult* best = s.best_fatcl();
    size["best_fatcl_variant"] = best ? best->variant : "";
    size["best_fatcl_gflops"] = best ? best->gflops : 0.0;
    size["best_fatcl_vs_clblast"] =
        best && clblast ? json(best->gflops / clblast->gflops) : json(nullptr);
    size["auto_vs_best"] = best ? json(s.auto_gflops / best->gflops) : json(nullptr);
    size["auto_tuning"] = s.auto_tuning;
    size["heuristic_variant"] = s.heuristic_variant;
    size["heuristic_tier"] = s.heuristic_tier;
    size["heuristic_gflops"] = s.heuristic_gflops;
    size["heuristic_vs_best"] = best ? json(s.heuristic_gflops / best->gflops) : json(nullptr);
    if (const BenchResult* naive = s.find("naive"); naive && best) {
      size["best_fatcl_vs_naive"] = best->gflops / naive->gflops;
    }
    for (const auto& [tier, name] : compared_tiers()) {
      if (const std::optional<TierComparison> t = compare_tiers(s, tier)) {
        size[tier + "_vs_source"] = {{"variants", t->variants},
                                     {"geomean", t->geomean},
                                     {"lowest", t->lowest},
                                     {"highest", t->highest},
                                     {"fastest_vs_fastest", t->fastest}};
      }
    }
    j["sizes"].push_back(size);
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string BenchReport::to_svg() const {
  // Series: name -> GFLOP/s per size (NaN where it did not run).
  std::vector<std::pair<std::string, std::vector<double>>> series;
  auto add = [&](const std::string& name, const std::function<double(const BenchSize&)>& value) {
    std::vector<double> v;
    for (const BenchSize& s : sizes) v.push_back(value(s));
    series.emplace_back(name, v);
  };
  auto gflops = [](const BenchResult* r) {
    return r && r->ok ? r->gflops : std::numeric_limits<double>::quiet_NaN();
  };
  add("naive", [&](const BenchSize& s) { return gflops(s.find("naive")); });
  add("tiled (best TILE)", [&](const BenchSize& s) { return gflops(s.find("tiled")); });
  add("blocked (best variant)", [&](const BenchSize& s) { return gflops(s.find("blocked")); });
  add("fatcl automatic choice", [&](const BenchSize& s) {
    return s.auto_gflops > 0 ? s.auto_gflops : std::numeric_limits<double>::quiet_NaN();
  });
  add("automatic, without tuning", [&](const BenchSize& s) {
    return s.heuristic_gflops > 0 ? s.heuristic_gflops : std::numeric_limits<double>::quiet_NaN();
  });
  std::vector<std::string> externals;
  for (const BenchSize& s : sizes) {
    for (const BenchResult& r : s.results) {
      if (r.variant.empty() &&
          std::find(externals.begin(), externals.end(), r.kernel) == externals.end()) {
        externals.push_back(r.kernel);
      }
    }
  }
  for (const std::string& x : externals) {
    add(x, [&](const BenchSize& s) { return gflops(s.find(x)); });
  }
  double top = 1;
  for (const auto& [name, values] : series) {
    for (double v : values) {
      if (std::isfinite(v)) top = std::max(top, v);
    }
  }
  const double width = 960, height = 540, left = 80, right = 240, plot_top = 60, bottom = 80;
  const double pw = width - left - right, ph = height - plot_top - bottom;
  const std::size_t n = sizes.size();
  auto x = [&](std::size_t i) { return left + (n <= 1 ? pw / 2 : pw * double(i) / double(n - 1)); };
  auto y = [&](double v) { return plot_top + ph * (1 - v / (top * 1.05)); };
  const char* colors[] = {"#888888", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e"};
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + format("%.0f", width) +
                    "\" height=\"" + format("%.0f", height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n"
                    "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + format("%.0f", left) +
         "\" y=\"24\" font-size=\"15\">SGEMM GFLOP/s by size" + "</text>\n<text x=\"" +
         format("%.0f", left) + "\" y=\"42\" fill=\"#555\">" +
         xml_escape(device.size() > 110 ? device.substr(0, 107) + "..." : device) + ", " + date +
         "</text>\n";
  // Round ticks: a step of 1, 2 or 5 times a power of ten, at most 6 of them.
  double step = std::pow(10.0, std::floor(std::log10(top)));
  for (double f : {0.1, 0.2, 0.5, 1.0}) {
    if (top * 1.05 / (step * f) <= 6) {
      step *= f;
      break;
    }
  }
  for (double v = 0; v <= top * 1.05; v += step) {
    svg += "<line x1=\"" + format("%.1f", left) + "\" x2=\"" + format("%.1f", left + pw) +
           "\" y1=\"" + format("%.1f", y(v)) + "\" y2=\"" + format("%.1f", y(v)) +
           "\" stroke=\"#ddd\"/>\n<text x=\"" + format("%.1f", left - 8) + "\" y=\"" +
           format("%.1f", y(v) + 4) + "\" text-anchor=\"end\">" + format("%.0f", v) + "</text>\n";
  }
  for (std::size_t i = 0; i < n; ++i) {
    svg += "<text x=\"" + format("%.1f", x(i)) + "\" y=\"" + format("%.1f", plot_top + ph + 20) +
           "\" text-anchor=\"middle\">" + sizes[i].shape.label() + "</text>\n";
  }
  svg += "<text x=\"" + format("%.1f", left + pw / 2) + "\" y=\"" + format("%.1f", height - 20) +
         "\" text-anchor=\"middle\">size (N, or M x N x K)</text>\n";
  svg += "<text transform=\"translate(20," + format("%.1f", plot_top + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>\n";
  for (std::size_t si = 0; si < series.size(); ++si) {
    const auto& [name, values] = series[si];
    const std::string color = colors[si % (sizeof colors / sizeof colors[0])];
    std::string points;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) continue;
      points += format("%.1f", x(i)) + "," + format("%.1f", y(values[i])) + " ";
      svg += "<circle cx=\"" + format("%.1f", x(i)) + "\" cy=\"" + format("%.1f", y(values[i])) +
             "\" r=\"3\" fill=\"" + color + "\"/>\n";
    }
    // The automatic choice is dashed: it often lies on the best variant's line.
    const std::string dash = name == "fatcl automatic choice" ? "\" stroke-dasharray=\"6,4" : "";
    svg += "<polyline fill=\"none\" stroke=\"" + color + dash + "\" stroke-width=\"2\" points=\"" +
           points + "\"/>\n";
    const double ly = plot_top + 20 + 22 * double(si);
    svg += "<line x1=\"" + format("%.1f", left + pw + 20) + "\" x2=\"" +
           format("%.1f", left + pw + 44) + "\" y1=\"" + format("%.1f", ly) + "\" y2=\"" +
           format("%.1f", ly) + "\" stroke=\"" + color + "\" stroke-width=\"3\"/>\n<text x=\"" +
           format("%.1f", left + pw + 50) + "\" y=\"" + format("%.1f", ly + 4) + "\">" +
           xml_escape(name) + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

namespace detail {

constexpr double kTolerance = 1e-5;

Problem make_problem(const cl::Context& context, const BenchShape& s, std::mt19937& rng) {
  Problem p;
  p.shape = s;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(s.m * s.k), b(s.k * s.n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  cl_int err = CL_SUCCESS;
  p.a = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 4, a.data(), &err);
  check_cl(err, "clCreateBuffer(A, " + std::to_string(a.size() * 4) + " B)");
  p.b = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data(), &err);
  check_cl(err, "clCreateBuffer(B, " + std::to_string(b.size() * 4) + " B)");
  p.c = cl::Buffer(context, CL_MEM_READ_WRITE, s.m * s.n * 4, nullptr, &err);
  check_cl(err, "clCreateBuffer(C, " + std::to_string(s.m * s.n * 4) + " B)");
  p.rows = reference_rows(s.m, s.n, s.k, std::size_t(1) << 28);
  std::vector<float> a_rows;
  for (std::size_t i : p.rows) a_rows.insert(a_rows.end(), &a[i * s.k], &a[i * s.k] + s.k);
  p.reference = reference_matmul(a_rows, b, p.rows.size(), s.n, s.k);
  return p;
}

// Poisons C, runs once, compares the checked rows; false (with r.failure
// set) if it did not run.
bool check(const cl::CommandQueue& queue, const Problem& p, const std::function<std::string()>& run,
           BenchResult& r) {
  const BenchShape& s = p.shape;
  try {
    check_cl(
        queue.enqueueFillBuffer(p.c, std::numeric_limits<float>::quiet_NaN(), 0, s.m * s.n * 4),
        "clEnqueueFillBuffer(C, NaN)");
    std::string failure = run();
    if (failure.empty()) failure = queue.finish() == CL_SUCCESS ? "" : "clFinish failed";
    if (!failure.empty()) {
      r.failure = failure;
      return false;
    }
    std::vector<float> c(p.rows.size() * s.n);
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      check_cl(queue.enqueueReadBuffer(p.c, CL_TRUE, p.rows[i] * s.n * 4, s.n * 4, &c[i * s.n]),
               "clEnqueueReadBuffer(C)");
    }
    r.relative_error = relative_error(c, p.reference);
    r.ok = r.relative_error <= kTolerance;
    return true;
  } catch (const Error& e) {
    r.failure = e.what();
    return false;
  }
}

}  // namespace detail

}  // namespace fatcl
