// fatcl bench: GFLOP/s of the naive kernel, the tiled variants, the
// register-blocked variants, the automatic choice and CLBlast on one device,
// over a size sweep, each result checked (fatcl::run_bench does the work).
#include "fatcl/bench.hpp"

#include <cstdio>
#include <fstream>
#include <memory>

#include "fatcl/detail/atomic_file.hpp"
#include "startup.hpp"
#include "verbs.hpp"
#ifdef FATCL_WITH_CLBLAST
#include <clblast.h>
#endif

namespace fatcl::tool {

namespace {

struct BenchVerbOptions {
  std::string platform, sizes, chart, tier, startup_child;
  std::size_t device = 0, top = 0;
  int reps = 5, online_calls = 0;
  bool json = false, clblast = true, startup = false;
};

#ifdef FATCL_WITH_CLBLAST
// CLBlast's SGEMM on the same buffers, timed beside fatcl's kernels.
ExternalKernel clblast_sgemm() {
  return {"CLBlast", [](const cl::CommandQueue& queue, const cl::Buffer& a, const cl::Buffer& b,
                        const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k) {
            cl_command_queue raw = queue();
            const auto status = clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                              clblast::Transpose::kNo, m, n, k, 1.0f, a(), 0, k,
                                              b(), 0, n, 0.0f, c(), 0, n, &raw, nullptr);
            return status == clblast::StatusCode::kSuccess
                       ? std::string()
                       : "CLBlast SGEMM failed with status " +
                             std::to_string(static_cast<int>(status));
          }};
}
#endif

int run_bench_verb(const BenchVerbOptions& o) {
  if (!o.startup_child.empty()) return run_startup_child(o.platform, o.device, o.startup_child);
  if (o.startup) return run_startup(o.platform, o.device, o.json);
  BenchOptions options;
  if (!o.sizes.empty()) options.shapes = parse_shapes(o.sizes);
  if (o.tier == "all" || o.tier == "both") {
    options.tiers = all_tiers();
  } else if (!o.tier.empty()) {
    options.tiers = {parse_tier(o.tier)};
  }
  options.top = o.top;
  options.repetitions = o.reps;
  options.online_calls = o.online_calls;
  options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const cl::Device device = pick_device(o.platform, o.device);
  const cl::Context context = context_for(device);
#ifdef FATCL_WITH_CLBLAST
  if (o.clblast) options.external.push_back(clblast_sgemm());
#else
  if (o.clblast) {
    std::fprintf(stderr, "fatcl bench: built without CLBlast (libclblast-dev): not timed\n");
  }
#endif
  const BenchReport report = run_bench(context, device, options);
  if (!o.chart.empty()) {
    detail::write_file_atomic(o.chart, report.to_svg());
    std::fprintf(stderr, "fatcl bench: chart written to %s\n", o.chart.c_str());
  }
  std::fputs((o.json ? report.to_json() : report.to_text()).c_str(), stdout);
  return 0;
}

}  // namespace

VerbRun add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchVerbOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "time every SGEMM kernel (naive, tiled, blocked, the automatic choice, CLBlast) over a size "
      "sweep on one device, each result checked; progress on stderr, with the time left");
  cmd->add_option("--platform", o->platform, "substring of the platform name");
  add_whole_number(cmd, "--device", o->device, 0, 65535, "device index within the platform");
  cmd->add_option("--sizes", o->sizes,
                  "comma-separated N or MxNxK (default: CPU 256...2048, GPU 1024...8192, with "
                  "non-square shapes); a kernel at 1/10 of the fastest or less is timed once at "
                  "the sizes after");
  add_whole_number(cmd, "--top", o->top, 0, 100000,
                   "blocked variants: the family's top N for the device (0: all)");
  cmd->add_option("--tier", o->tier,
                  "time every fatcl variant in this tier: spirv, ptx, source, or all (every tier "
                  "the device takes, in one run; \"both\" is another name for it)");
  cmd->add_option("--reps", o->reps, "timed runs per kernel and size, median (1 to 100)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--online", o->online_calls,
                  "also call each size N times (0 to 1000) as a product learning its choice "
                  "online would (FATCL_TUNE=online, shipped entries only), each call timed and "
                  "checked")
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("!--no-clblast", o->clblast, "do not time CLBlast");
  cmd->add_flag("--json", o->json, "print one JSON document to stdout");
  cmd->add_option("--chart", o->chart, "write GFLOP/s against size as an SVG file");
  cmd->add_flag("--startup", o->startup,
                "instead: time to a ready kernel per tier, cold (empty program cache, driver "
                "cache off) and warm (from the program cache), each in a fresh process");
  cmd->add_option("--startup-child", o->startup_child)->group("");  // internal: one measurement
  return [o] { return run_bench_verb(*o); };
}

}  // namespace fatcl::tool
