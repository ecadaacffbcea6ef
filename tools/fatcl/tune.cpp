// fatcl tune: measures the blocked SGEMM variants that fit one device within a
// time budget and records the ranking in the store, which the
// loader then trusts (fatcl::run_tune and fatcl::Store do the work).
#include "fatcl/tune.hpp"

#include <csignal>
#include <cstdio>

#include "fatcl/compiler.hpp"
#include "fatcl/gemm_bench.hpp"
#include "verbs.hpp"

namespace fatcl::tool {
namespace {

std::atomic<bool> interrupted{false};
// The first Ctrl-C stops after the measurement in flight; a second one
// ends the process at once.
extern "C" void on_sigint(int) {
  if (interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

}  // namespace

// --export and --merge: tuning entries shared between nodes, no device.
template <typename Options>
int share_entries(const Options& o, const std::shared_ptr<Store>& store) {
  if (!o.export_to.empty()) {
    Store out{std::filesystem::path(o.export_to)};
    if (!out.why_not_used().empty()) {
      throw Error("the export file " + o.export_to + " is left as found: " + out.why_not_used());
    }
    const Store::MergeCount c = out.merge(store->tuning());
    out.save();
    std::fprintf(stderr,
                 "fatcl tune: %zu tuning entries of %s exported to %s (%zu new, %zu "
                 "replaced, %zu older kept)\n",
                 c.added + c.replaced + c.kept, store->path().c_str(), o.export_to.c_str(), c.added,
                 c.replaced, c.kept);
  }
  for (const std::string& file : o.merge) {
    std::string text;
    try {
      text = read_text(file);
    } catch (const Error& e) {
      throw Error(std::string("--merge: ") + e.what());
    }
    const Store::MergeCount c = store->merge(parse_tuning_entries(text, file));
    std::fprintf(stderr, "fatcl tune: merged %s into %s: %zu new, %zu replaced, %zu kept\n",
                 file.c_str(), store->path().c_str(), c.added, c.replaced, c.kept);
  }
  if (!o.merge.empty()) store->save();
  return 0;
}

// fatcl tune --gemm: each variant of the precision's GEMM family in every
// tier the device takes it in, timed through the entry points in each form
// asked (run_gemm_bench), one tuning entry per form and size.
template <typename Options>
int tune_gemm(const Options& o, const std::shared_ptr<Store>& store) {
  const cl::Device device = pick_device(o.platform, o.device);
  const cl::Context context = context_for(device);
  const DeviceCaps caps = DeviceCaps::query(device);
  const GemmForm asked = o.gemm.form();
  // --forms all: the row-major forms (a column-major call runs as one of
  // them).
  const std::vector<GemmForm> forms =
      o.gemm.forms == "all" ? gemm_forms(asked.bits, asked.batch, {Layout::kRowMajor})
                            : std::vector<GemmForm>{asked};
  const std::vector<BenchShape> shapes =
      o.sizes.empty() ? default_shapes(caps) : parse_shapes(o.sizes);
  GemmBenchOptions options;
  options.repetitions = o.reps;
  options.reference = false;  // the entries rank the family's variants
  options.tiers = o.tier.empty() ? all_tiers() : std::vector<Tier>{parse_tier(o.tier)};
  options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  std::size_t entries = 0;
  std::string json = "[";
  // One size at a time, each size's entry kept as soon as it is measured (a
  // GPU tune of a thin shape takes half a minute a size and form); the
  // first Ctrl-C stops after the size in flight, as the SGEMM's tune does.
  std::signal(SIGINT, on_sigint);
  for (const GemmForm& form : forms) {
    if (interrupted) break;
    options.form = form;
    GemmBenchReport report;
    for (const BenchShape& shape : shapes) {
      if (interrupted) break;
      options.shapes = {shape};
      GemmBenchReport one = run_gemm_bench(context, device, options);
      for (const GemmBenchRow& row : one.rows) {
        const std::vector<TuningEntry> made = gemm_tuning_entries(form, row, caps, "fatcl tune");
        if (made.empty()) {
          std::fprintf(stderr, "fatcl tune: %s at %s: no variant ran right, no entry\n",
                       form.describe().c_str(), row.shape.label().c_str());
          continue;
        }
        for (const TuningEntry& e : made) {
          if (store) store->put_tuning(e);
          ++entries;
        }
      }
      if (store) store->save();
      if (report.rows.empty()) {
        report = std::move(one);
      } else {
        report.rows.insert(report.rows.end(), one.rows.begin(), one.rows.end());
      }
    }
    if (report.rows.empty()) continue;
    if (o.json) {
      json += (json.size() > 1 ? ",\n" : "\n") + report.to_json();
    } else {
      std::fputs(report.to_text().c_str(), stdout);
      std::fflush(stdout);
    }
  }
  std::signal(SIGINT, SIG_DFL);
  if (o.json) std::fputs((json + "]\n").c_str(), stdout);
  if (interrupted) {
    std::fputs("fatcl tune: (interrupted) every size measured before is kept\n",
               o.json ? stderr : stdout);
  }
  if (store) {
    store->save();
    std::fprintf(stderr, "fatcl tune: %zu tuning entr%s written to %s\n", entries,
                 entries == 1 ? "y" : "ies", store->path().c_str());
  }
  return interrupted ? 130 : 0;
}

// The options as CLI11 declares them, then the run: the store checked
// before any measuring, SIGINT kept for the measurement in flight.
VerbRun add_tune(CLI::App& app) {
  struct Options {
    std::string platform, sizes, budget = "30s", tier, database, export_to;
    std::vector<std::string> merge, families;
    std::size_t device = 0;
    int reps = 5;
    bool json = false, save = true;
    GemmFormOptions gemm;  // any given: the GEMM entry points' families in a form
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "measure the SGEMM variants that fit one device (the blocked family, or for a skinny size "
      "the few-rows or few-columns one; --families: others too) within a time budget, each result "
      "checked, and record their ranking in the store the loader uses; progress on "
      "stderr, Ctrl-C keeps what was measured (twice: stop now)");
  cmd->add_option("--platform", o->platform, "substring of the platform name");
  add_whole_number(cmd, "--device", o->device, 0, 65535, "device index within the platform");
  cmd->add_option("--sizes", o->sizes,
                  "comma-separated N or MxNxK, one tuning entry each (default: CPU 1024, GPU "
                  "4096 and 8192)");
  cmd->add_option("--budget", o->budget, "time for all sizes, builds included: 30s, 2m, 90");
  cmd->add_option("--reps", o->reps, "timed launches per variant, median (5 to 100)")
      ->check(CLI::Range(5, 100));
  cmd->add_option("--tier", o->tier,
                  "measure in this tier only (spirv, ptx or source; default: each variant in "
                  "every tier the device takes)");
  cmd->add_option("--families", o->families,
                  "measure these families at each size, one entry each, so that the automatic "
                  "choice weighs them against each other: all, or names from " +
                      matmul_kernel_names() +
                      " (few-rows only where M <= 16, few-columns only where N <= 16; default: "
                      "the family that serves each size)")
      ->delimiter(',');
  cmd->add_option("--database", o->database,
                  "the store to update (default: FATCL_TUNING, else "
                  "$XDG_CONFIG_HOME/fatcl/tuning.json)");
  cmd->add_flag("!--no-save", o->save, "measure and print only");
  cmd->add_option("--export", o->export_to,
                  "instead of measuring: write the store's tuning entries to this file (merged "
                  "into it if it is a store), for other nodes' --merge or a system layer");
  cmd->add_option("--merge", o->merge,
                  "instead of measuring: merge these stores' tuning entries into the store (per "
                  "key this fatcl version's measurement wins, then the newer)")
      ->delimiter(',');
  cmd->add_flag("--json", o->json, "print one JSON document to stdout");
  add_gemm_form_options(cmd, &o->gemm,
                        "tune the GEMM entry points (fatcl/gemm.hpp) instead: every variant of "
                        "the precision's family in every tier, in the form the next options give, "
                        "one entry per form and size (no budget: the families are small)",
                        "GEMM: all = the four row-major op(A), op(B) forms (a column-major call "
                        "runs as one of them)");
  return [o] {
    TuneOptions options;
    options.budget_seconds = parse_budget(o->budget);
    if (!o->sizes.empty()) options.shapes = parse_shapes(o->sizes);
    if (!o->tier.empty()) options.tier = parse_tier(o->tier);
    options.repetitions = o->reps;
    for (const std::string& name : o->families) {
      if (name == "all") {
        options.families = matmul_kernels();
      } else {
        options.families.push_back(matmul_kernel_named(name));
      }
    }
    options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    options.stop = &interrupted;
    // The database first: a file that cannot be used stops before any work.
    std::shared_ptr<Store> store;
    if (o->save || !o->export_to.empty() || !o->merge.empty()) {
      const std::filesystem::path path =
          o->database.empty() ? Store::user_path() : std::filesystem::path(o->database);
      if (path.empty()) throw Error("no store: FATCL_TUNING is off (use --database)");
      store = std::make_shared<Store>(path);
      if (!store->why_not_used().empty()) {
        throw Error("the store " + path.string() + " is left as found: " + store->why_not_used());
      }
    }
    if (!o->export_to.empty() || !o->merge.empty()) return share_entries(*o, store);
    if (o->gemm.asked()) return tune_gemm(*o, store);
    const cl::Device device = pick_device(o->platform, o->device);
    const cl::Context context = context_for(device);
    std::signal(SIGINT, on_sigint);
    const TuneReport report = run_tune(context, device, options);
    std::signal(SIGINT, SIG_DFL);
    std::fputs((o->json ? report.to_json() : report.to_text()).c_str(), stdout);
    if (store) {
      std::size_t entries = 0;
      for (const TuneShapeResult& s : report.shapes) {
        if (s.entry) {
          store->put_tuning(*s.entry);
          ++entries;
        }
      }
      store->save();
      std::fprintf(stderr, "fatcl tune: %zu tuning entr%s written to %s\n", entries,
                   entries == 1 ? "y" : "ies", store->path().c_str());
    }
    return report.interrupted ? 130 : 0;
  };
}

}  // namespace fatcl::tool
