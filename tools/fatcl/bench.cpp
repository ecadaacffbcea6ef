// fatcl bench: GFLOP/s of the naive kernel, the tiled variants, the
// register-blocked variants, the automatic choice and CLBlast on one device,
// over a size sweep, each result checked (fatcl::run_bench does the work).
#include "fatcl/bench.hpp"
#include "fatcl/gemm_bench.hpp"

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
  bool json = false, clblast = true, vendor = true, startup = false;
  // Any of these times the GEMM entry points in that form instead of the
  // SGEMM families.
  GemmFormOptions gemm;
};

// Each fatcl variant in this tier: spirv, ptx, source, or all ("both");
// none for "".
std::vector<Tier> tiers_asked(const std::string& tier) {
  if (tier == "all" || tier == "both") return all_tiers();
  if (!tier.empty()) return {parse_tier(tier)};
  return {};
}

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

// CLBlast's same routine (Gemm, or GemmStridedBatched for a batch) in the
// same form on the same buffers.
template <typename T>
std::string clblast_form(cl_command_queue q, const GemmForm& f, const GemmCall& c, T one, T zero) {
  const auto layout = static_cast<clblast::Layout>(f.layout);
  const auto ta = static_cast<clblast::Transpose>(f.a_transpose);
  const auto tb = static_cast<clblast::Transpose>(f.b_transpose);
  const clblast::StatusCode s =
      f.batch == 1
          ? clblast::Gemm<T>(layout, ta, tb, c.m, c.n, c.k, one, c.a, 0, c.a_ld, c.b, 0, c.b_ld,
                             zero, c.c, 0, c.c_ld, &q, nullptr)
          : clblast::GemmStridedBatched<T>(layout, ta, tb, c.m, c.n, c.k, one, c.a, 0, c.a_ld,
                                           c.a_stride, c.b, 0, c.b_ld, c.b_stride, zero, c.c, 0,
                                           c.c_ld, c.c_stride, f.batch, &q, nullptr);
  return s == clblast::StatusCode::kSuccess
             ? std::string()
             : "CLBlast failed with status " + std::to_string(static_cast<int>(s));
}
GemmExternal clblast_gemm() {
  return {"CLBlast", [](cl_command_queue q, const GemmForm& f, const GemmCall& c) {
            if (f.bits == 64) return clblast_form<double>(q, f, c, 1.0, 0.0);
            if (f.bits == 16) {
              return clblast_form<cl_half>(q, f, c, FloatToHalf(1.0f), FloatToHalf(0.0f));
            }
            return clblast_form<float>(q, f, c, 1.0f, 0.0f);
          }};
}
#endif

// The vendor's BLAS for `device` unless --no-vendor; none, with `no_vendor`
// saying why (on stderr too where it was asked for).
std::optional<VendorGemm> vendor_asked(const BenchVerbOptions& o, const cl::Device& device,
                                       std::string* no_vendor) {
  if (!o.vendor) {
    *no_vendor = "not asked for (--no-vendor)";
    return std::nullopt;
  }
  std::optional<VendorGemm> vendor = find_vendor_gemm(device, no_vendor);
  if (!vendor) std::fprintf(stderr, "fatcl bench: no vendor BLAS timed: %s\n", no_vendor->c_str());
  return vendor;
}

int run_gemm_bench_verb(const BenchVerbOptions& o) {
  GemmBenchOptions options;
  if (!o.sizes.empty()) options.shapes = parse_shapes(o.sizes);
  options.repetitions = o.reps;
  options.top = o.top;
  options.form = o.gemm.form();
  options.tiers = tiers_asked(o.tier);
  options.online_calls = o.online_calls;
  options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const cl::Device device = pick_device(o.platform, o.device);
  const cl::Context context = context_for(device);
#ifdef FATCL_WITH_CLBLAST
  if (o.clblast) options.external.push_back(clblast_gemm());
#else
  if (o.clblast) {
    std::fprintf(stderr, "fatcl bench: built without CLBlast (libclblast-dev): not timed\n");
  }
#endif
  if (o.gemm.forms.empty()) {
    options.vendor = vendor_asked(o, device, &options.no_vendor);
  } else {
    options.no_vendor = o.vendor ? "not timed with --forms" : "not asked for (--no-vendor)";
  }
  if (o.gemm.forms == "all") {
    GemmFormsOptions f;
    f.bits = options.form.bits;
    f.batch = options.form.batch;
    f.shapes = options.shapes;
    f.repetitions = options.repetitions;
    f.external = options.external;
    f.progress = options.progress;
    const GemmFormsReport report = run_gemm_forms_bench(context, device, f);
    std::fputs((o.json ? report.to_json() : report.to_text()).c_str(), stdout);
    return 0;
  }
  const GemmBenchReport report = run_gemm_bench(context, device, options);
  std::fputs((o.json ? report.to_json() : report.to_text()).c_str(), stdout);
  return 0;
}

int run_bench_verb(const BenchVerbOptions& o) {
  if (!o.startup_child.empty()) return run_startup_child(o.platform, o.device, o.startup_child);
  if (o.startup) return run_startup(o.platform, o.device, o.json);
  if (o.gemm.asked()) return run_gemm_bench_verb(o);
  BenchOptions options;
  if (!o.sizes.empty()) options.shapes = parse_shapes(o.sizes);
  options.tiers = tiers_asked(o.tier);
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
  options.vendor = vendor_asked(o, device, &options.no_vendor);
  const BenchReport report = run_bench(context, device, options);
  if (!o.chart.empty()) {
    detail::write_file_atomic(o.chart, report.to_svg());
    std::fprintf(stderr, "fatcl bench: chart written to %s\n", o.chart.c_str());
  }
  std::fputs((o.json ? report.to_json() : report.to_text()).c_str(), stdout);
  return 0;
}

}  // namespace

bool GemmFormOptions::asked() const {
  return gemm || trans_a || trans_b || precision != "single" || layout != "row" || batch != 1 ||
         !forms.empty();
}

GemmForm GemmFormOptions::form() const {
  GemmForm f;
  f.bits = precision == "double" ? 64 : precision == "half" ? 16 : 32;
  f.layout = layout == "col" ? Layout::kColMajor : Layout::kRowMajor;
  f.a_transpose = trans_a ? Transpose::kYes : Transpose::kNo;
  f.b_transpose = trans_b ? Transpose::kYes : Transpose::kNo;
  f.batch = batch;
  return f;
}

void add_gemm_form_options(CLI::App* cmd, GemmFormOptions* o, const std::string& what,
                           const std::string& forms) {
  cmd->add_flag("--gemm", o->gemm, what);
  cmd->add_option("--precision", o->precision, "GEMM form: single, double or half")
      ->check(CLI::IsMember({"single", "double", "half"}));
  cmd->add_option("--forms", o->forms, forms)->check(CLI::IsMember({"all"}));
  cmd->add_option("--layout", o->layout, "GEMM form: row or col (column-major)")
      ->check(CLI::IsMember({"row", "col"}));
  cmd->add_flag("--transA", o->trans_a, "GEMM form: op(A) = A^T");
  cmd->add_flag("--transB", o->trans_b, "GEMM form: op(B) = B^T");
  add_whole_number(cmd, "--batch", o->batch, 1, 1000000,
                   "GEMM form: this many products in one strided-batched call");
}

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
                   "blocked variants (with --gemm, the precision's GEMM family's): the "
                   "family's top N for the device (0: all)");
  cmd->add_option("--tier", o->tier,
                  "time every fatcl variant in this tier: spirv, ptx, source, or all (every tier "
                  "the device takes, in one run; \"both\" is another name for it); default: "
                  "each in the tier the size's tuning entry measured it fastest in, as the "
                  "automatic choice runs it, else the loader's first");
  cmd->add_option("--reps", o->reps, "timed runs per kernel and size, median (1 to 100)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--online", o->online_calls,
                  "also call each size N times (0 to 1000) as a product learning its choice "
                  "online would (FATCL_TUNE=online, shipped entries only), each call timed and "
                  "checked")
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("!--no-clblast", o->clblast, "do not time CLBlast");
  cmd->add_flag("!--no-vendor", o->vendor,
                "do not time the vendor's BLAS (by default cuBLAS on NVIDIA devices, OpenBLAS on "
                "the host beside CPU devices, each opened at run time where it is installed)");
  add_gemm_form_options(cmd, &o->gemm,
                        "time the GEMM entry points (fatcl/gemm.hpp: the automatic choice and "
                        "each variant), CLBlast's same call and, in the single-precision "
                        "row-major NN form, the vendor's BLAS, in the form the next options give",
                        "GEMM: all = every layout and op(A), op(B) of the precision and batch, "
                        "the automatic choice and CLBlast's same calls timed in turn, each form's "
                        "time against the row-major NN call");
  cmd->add_flag("--json", o->json, "print one JSON document to stdout");
  cmd->add_option("--chart", o->chart, "write GFLOP/s against size as an SVG file");
  cmd->add_flag("--startup", o->startup,
                "instead: time to a ready kernel per tier, cold (empty program cache, driver "
                "cache off) and warm (from the program cache), each in a fresh process");
  cmd->add_option("--startup-child", o->startup_child)->group("");  // internal: one measurement
  return [o] { return run_bench_verb(*o); };
}

}  // namespace fatcl::tool
