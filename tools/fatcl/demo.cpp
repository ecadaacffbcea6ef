// fatcl demo: choose a variant of the bundled SGEMM for a device, check it
// against a double-precision CPU reference, and time it next to the naive
// kernel (and CLBlast) in the same run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "fatcl/bench.hpp"
#include "fatcl/matmul.hpp"
#include "verbs.hpp"
#ifdef FATCL_WITH_CLBLAST
#include <clblast.h>
#endif

namespace fatcl::tool {
namespace {

struct DemoOptions {
  std::size_t m = 1024, n = 1024, k = 1024;
  int repetitions = 3;
  std::string platform;    // substring of the platform name; "" = first with a device
  std::size_t device = 0;  // index within that platform
  std::string variant;     // force a variant
  std::string tier;        // force a tier
  bool clblast = true;
  bool json = false;
  std::string explain = "grouped";  // or "all": a line for every (variant, tier)
};

int run_demo(const DemoOptions& options) {
  if (options.m == 0 || options.n == 0 || options.k == 0) {
    throw Error("demo: M, N and K must be at least 1 (got " + std::to_string(options.m) + "x" +
                std::to_string(options.n) + "x" + std::to_string(options.k) + ")");
  }
  // Text goes to stdout as it happens; with --json, one document at the end.
  auto say = [&](const char* format, auto... args) {
    if (!options.json) std::printf(format, args...);
  };
  nlohmann::json report;
  cl::Device device = pick_device(options.platform, options.device);
  const DeviceCaps caps = DeviceCaps::query(device);
  check_problem_fits(caps, options.m, options.n, options.k, "demo");
  say("device: %s\n", caps.summary().c_str());
  report["device"] = {{"platform", caps.platform_name},
                      {"name", caps.device_name},
                      {"driver_version", caps.driver_version},
                      {"summary", caps.summary()}};
  const cl::Context context = context_for(device);
  const cl::CommandQueue queue = queue_for(context, device);

  MatmulOptions chosen_options;
  chosen_options.variant = options.variant;
  if (!options.tier.empty()) chosen_options.tier = parse_tier(options.tier);
  auto load_start = std::chrono::steady_clock::now();
  Matmul automatic(context, device, chosen_options);
  // The variant for this shape: a tuning entry may name another.
  const LoadedKernel& choice = automatic.loaded_for(options.m, options.n, options.k);
  double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  const Explanation::Detail detail =
      options.explain == "all" ? Explanation::Detail::EveryStep : Explanation::Detail::Grouped;
  say("\nfatcl's choice (loaded in %.0f ms):\n%s", load_ms,
      choice.explanation.to_string(detail).c_str());
  report["choice"] = {
      {"variant", choice.variant.name},
      {"tier", to_string(choice.tier)},
      {"load_ms", load_ms},
      {"explanation", choice.explanation.to_string(Explanation::Detail::EveryStep)}};
  MatmulOptions naive_options;
  naive_options.kernel = MatmulKernel::Naive;
  Matmul naive(context, device, naive_options);

  const std::size_t m = options.m, n = options.n, k = options.k;
  std::random_device seed_source;
  const unsigned seed = seed_source();
  std::mt19937 rng(seed);
  // The reference costs M*N*K double multiply-adds on one core: past 2^30 of
  // them, check a spread of whole rows of C (always the first and last).
  const MatmulProblem problem =
      make_matmul_problem(context, m, n, k, MatmulInputs::Random, &rng, std::size_t(1) << 30);
  say("\nC = A*B with M=%zu N=%zu K=%zu, inputs uniform in [-1,1] (seed %u)\n", m, n, k, seed);
  report["problem"] = {{"m", m}, {"n", n}, {"k", k}, {"seed", seed}};
  report["checks"] = nlohmann::json::array();
  const std::string scope = problem.scope();
  int failures = 0;
  auto verify = [&](const char* what, const std::function<cl::Event()>& run) {
    const CheckedRun r = run_checked(queue, problem, [&] {
      run();
      return std::string();
    });
    if (!r.ran) throw Error(std::string("demo: ") + what + " did not run: " + r.failure);
    failures += r.ok ? 0 : 1;
    say("check %-34s relative error %.2e vs double-precision CPU reference (%s): %s\n", what,
        r.relative_error, scope.c_str(), r.ok ? "OK" : "FAILED (tolerance 1e-5)");
    report["checks"].push_back(
        {{"name", what},
         {"relative_error", std::isnan(r.relative_error) ? -1.0 : r.relative_error},
         {"rows_checked", problem.rows.size()},
         {"ok", r.ok}});
  };
  const cl::Buffer &da = problem.a, &db = problem.b, &dc = problem.c;
  auto run_chosen = [&] { return automatic.enqueue(queue, da, db, dc, m, n, k); };
  auto run_naive = [&] { return naive.enqueue(queue, da, db, dc, m, n, k); };
  const std::string chosen_name =
      "fatcl " + choice.variant.name + " [" + to_string(choice.tier) + "]";
  verify(chosen_name.c_str(), run_chosen);
  verify("naive", run_naive);

  struct Row {
    std::string name;
    double ms;
  };
  std::vector<Row> rows;
  rows.push_back({chosen_name, median_ms(queue, run_chosen, options.repetitions)});
  rows.push_back({"naive (global memory)", median_ms(queue, run_naive, options.repetitions)});
#ifdef FATCL_WITH_CLBLAST
  if (options.clblast) {
    cl_command_queue raw_queue = queue();
    auto run_clblast = [&] {
      cl_event e = nullptr;
      auto status = clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                  clblast::Transpose::kNo, m, n, k, 1.0f, da(), 0, k, db(), 0, n,
                                  0.0f, dc(), 0, n, &raw_queue, &e);
      if (status != clblast::StatusCode::kSuccess) {
        throw Error("CLBlast SGEMM failed with status " + std::to_string(static_cast<int>(status)));
      }
      return cl::Event(e, false);
    };
    verify("CLBlast SGEMM", run_clblast);
    rows.push_back(
        {"CLBlast SGEMM (Debian libclblast)", median_ms(queue, run_clblast, options.repetitions)});
  }
#endif
  const double flop = 2.0 * double(m) * double(n) * double(k);
  say("\ntiming, median of %d runs after a checked warm-up (host clock around a finished "
      "queue):\n",
      options.repetitions);
  report["timings"] = nlohmann::json::array();
  for (const Row& r : rows) {
    say("  %-40s %10.2f ms %9.2f GFLOP/s\n", r.name.c_str(), r.ms, flop / (r.ms * 1e6));
    report["timings"].push_back({{"name", r.name}, {"ms", r.ms}, {"gflops", flop / (r.ms * 1e6)}});
  }
  say("  fatcl / naive: %.2fx", rows[1].ms / rows[0].ms);
  report["fatcl_vs_naive"] = rows[1].ms / rows[0].ms;
  if (rows.size() > 2) {
    say("   fatcl / CLBlast: %.2fx", rows[2].ms / rows[0].ms);
    report["fatcl_vs_clblast"] = rows[2].ms / rows[0].ms;
  }
  say("   (speed ratios, same run)\n");
  report["ok"] = failures == 0;
  if (options.json) std::printf("%s\n", report.dump(2).c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace

VerbRun add_demo(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto size = std::make_shared<std::size_t>(0);
  CLI::App* d = app.add_subcommand("demo",
                                   "choose a variant, check it against a CPU reference, "
                                   "time it next to the naive kernel (and CLBlast)");
  auto dim = [&](const char* name, std::size_t& target, const char* what) {
    return add_whole_number(d, name, target, 1, std::size_t{1} << 20, what);
  };
  CLI::Option* size_option = dim("--size", *size, "M = N = K (1 to 1048576)");
  dim("-m", o->m, "rows of A and C");
  dim("-n", o->n, "columns of B and C");
  dim("-k", o->k, "columns of A, rows of B");
  d->add_option("--reps", o->repetitions, "timed runs, median reported (1 to 1000)")
      ->check(CLI::Range(1, 1000));
  d->add_option("--platform", o->platform, "substring of the platform name");
  add_whole_number(d, "--device", o->device, 0, 65535, "device index within the platform");
  d->add_option("--variant", o->variant, "force a variant, e.g. matmul_tiled_TILE16");
  d->add_option("--tier", o->tier, "force a tier: spirv, ptx or source");
  d->add_option("--explain", o->explain,
                "grouped: one line per reason for the (variant, tier) pairs passed over, with "
                "their number; all: a line for each")
      ->check(CLI::IsMember({"grouped", "all"}))
      ->capture_default_str();
  d->add_flag("!--no-clblast", o->clblast, "do not time CLBlast");
  d->add_flag("--json", o->json, "print the results as one JSON document");
  return [o, size, size_option] {
    if (*size_option) o->m = o->n = o->k = *size;
    return run_demo(*o);
  };
}

}  // namespace fatcl::tool
