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

// The demo's stages over what they share: the device, the problem, the
// report (text on stdout as it happens; with --json one document at the end).
class Demo {
 public:
  explicit Demo(const DemoOptions& options) : options_(options) {}

  int run() {
    open_device();
    const LoadedKernel& choice = choose();
    Matmul naive(context_, device_, [] {
      MatmulOptions o;
      o.kernel = MatmulKernel::Naive;
      return o;
    }());
    make_problem();
    const std::size_t m = options_.m, n = options_.n, k = options_.k;
    const MatmulProblem& p = problem_;
    auto run_chosen = [&] { return automatic_->enqueue(queue_, p.a, p.b, p.c, m, n, k); };
    auto run_naive = [&] { return naive.enqueue(queue_, p.a, p.b, p.c, m, n, k); };
    const std::string chosen_name =
        "fatcl " + choice.variant.name + " [" + to_string(choice.tier) + "]";
    verify(chosen_name, run_chosen);
    verify("naive", run_naive);
    rows_.push_back({chosen_name, median_ms(queue_, run_chosen, options_.repetitions)});
    rows_.push_back({"naive (global memory)", median_ms(queue_, run_naive, options_.repetitions)});
    time_clblast();
    print_timings();
    report_["ok"] = failures_ == 0;
    if (options_.json) std::printf("%s\n", report_.dump(2).c_str());
    return failures_ == 0 ? 0 : 1;
  }

 private:
  struct Row {
    std::string name;
    double ms;
  };

  template <typename... Args>
  void say(const char* format, Args... args) const {
    if (!options_.json) std::printf(format, args...);
  }

  void open_device() {
    device_ = pick_device(options_.platform, options_.device);
    const DeviceCaps caps = DeviceCaps::query(device_);
    check_problem_fits(caps, options_.m, options_.n, options_.k, "demo");
    // The explanation below starts with the device.
    report_["device"] = {{"platform", caps.platform_name},
                         {"name", caps.device_name},
                         {"driver_version", caps.driver_version},
                         {"summary", caps.summary()}};
    context_ = context_for(device_);
    queue_ = queue_for(context_, device_);
  }

  // fatcl's choice for this shape (a tuning entry may name another than the
  // constructor's), with its explanation.
  const LoadedKernel& choose() {
    MatmulOptions chosen_options;
    chosen_options.variant = options_.variant;
    if (!options_.tier.empty()) chosen_options.tier = parse_tier(options_.tier);
    const auto load_start = std::chrono::steady_clock::now();
    automatic_ = std::make_unique<Matmul>(context_, device_, chosen_options);
    const LoadedKernel& choice = automatic_->loaded_for(options_.m, options_.n, options_.k);
    const double load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
            .count();
    const Explanation::Detail detail =
        options_.explain == "all" ? Explanation::Detail::EveryStep : Explanation::Detail::Grouped;
    say("\nfatcl's choice (loaded in %.0f ms):\n%s", load_ms,
        choice.explanation.to_string(detail).c_str());
    report_["choice"] = {
        {"variant", choice.variant.name},
        {"tier", to_string(choice.tier)},
        {"load_ms", load_ms},
        {"explanation", choice.explanation.to_string(Explanation::Detail::EveryStep)}};
    return choice;
  }

  // Fresh random inputs; the reference costs M*N*K double multiply-adds on
  // one core: past 2^30 of them, a spread of whole rows of C is checked
  // (always the first and last).
  void make_problem() {
    const unsigned seed = std::random_device{}();
    std::mt19937 rng(seed);
    problem_ = make_matmul_problem(context_, options_.m, options_.n, options_.k,
                                   MatmulInputs::Random, &rng, std::size_t(1) << 30);
    say("\nC = A*B with M=%zu N=%zu K=%zu, inputs uniform in [-1,1] (seed %u)\n", options_.m,
        options_.n, options_.k, seed);
    report_["problem"] = {{"m", options_.m}, {"n", options_.n}, {"k", options_.k}, {"seed", seed}};
    report_["checks"] = nlohmann::json::array();
  }

  void verify(const std::string& what, const std::function<cl::Event()>& run) {
    const CheckedRun r = run_checked(queue_, problem_, [&] {
      run();
      return std::string();
    });
    if (!r.ran) throw Error("demo: " + what + " did not run: " + r.failure);
    failures_ += r.ok ? 0 : 1;
    say("check %-34s relative error %.2e vs double-precision CPU reference (%s): %s\n",
        what.c_str(), r.relative_error, problem_.scope().c_str(),
        r.ok ? "OK" : "FAILED (tolerance 1e-5)");
    report_["checks"].push_back(
        {{"name", what},
         {"relative_error", std::isnan(r.relative_error) ? -1.0 : r.relative_error},
         {"rows_checked", problem_.rows.size()},
         {"ok", r.ok}});
  }

  void time_clblast() {
#ifdef FATCL_WITH_CLBLAST
    if (!options_.clblast) return;
    cl_command_queue raw_queue = queue_();
    const std::size_t m = options_.m, n = options_.n, k = options_.k;
    auto run_clblast = [&] {
      cl_event e = nullptr;
      auto status = clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                  clblast::Transpose::kNo, m, n, k, 1.0f, problem_.a(), 0, k,
                                  problem_.b(), 0, n, 0.0f, problem_.c(), 0, n, &raw_queue, &e);
      if (status != clblast::StatusCode::kSuccess) {
        throw Error("CLBlast SGEMM failed with status " + std::to_string(static_cast<int>(status)));
      }
      return cl::Event(e, false);
    };
    verify("CLBlast SGEMM", run_clblast);
    rows_.push_back({"CLBlast SGEMM (Debian libclblast)",
                     median_ms(queue_, run_clblast, options_.repetitions)});
#endif
  }

  void print_timings() {
    const double flop = BenchShape{options_.m, options_.n, options_.k}.flop();
    say("\ntiming, median of %d runs after a checked warm-up (host clock around a finished "
        "queue):\n",
        options_.repetitions);
    report_["timings"] = nlohmann::json::array();
    for (const Row& r : rows_) {
      say("  %-40s %10.2f ms %9.2f GFLOP/s\n", r.name.c_str(), r.ms, flop / (r.ms * 1e6));
      report_["timings"].push_back(
          {{"name", r.name}, {"ms", r.ms}, {"gflops", flop / (r.ms * 1e6)}});
    }
    say("  fatcl / naive: %.2fx", rows_[1].ms / rows_[0].ms);
    report_["fatcl_vs_naive"] = rows_[1].ms / rows_[0].ms;
    if (rows_.size() > 2) {
      say("   fatcl / CLBlast: %.2fx", rows_[2].ms / rows_[0].ms);
      report_["fatcl_vs_clblast"] = rows_[2].ms / rows_[0].ms;
    }
    say("   (speed ratios, same run)\n");
  }

  const DemoOptions& options_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::unique_ptr<Matmul> automatic_;
  MatmulProblem problem_;
  nlohmann::json report_;
  std::vector<Row> rows_;
  int failures_ = 0;
};

int run_demo(const DemoOptions& options) {
  if (options.m == 0 || options.n == 0 || options.k == 0) {
    throw Error("demo: M, N and K must be at least 1 (got " + std::to_string(options.m) + "x" +
                std::to_string(options.n) + "x" + std::to_string(options.k) + ")");
  }
  return Demo(options).run();
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
