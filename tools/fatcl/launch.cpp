// fatcl launch BUNDLE|BINARY...: runs a product's own families as their
// launch descriptions say (fatcl::check_launches does the work), and the
// same under Oclgrind for fatcl validate --oclgrind.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "fatcl/detail/process.hpp"
#include "fatcl/launch.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<fs::path> paths;
  std::vector<std::string> families;
  std::string variant, tier, platform;
  std::size_t device = 0, seed = 0;
  std::vector<std::string> problems;
  bool progress = false, json = false;
};

// With --progress every line of the report starts with kReportLine, so
// that the reader of a run under Oclgrind tells it from the simulator's.
constexpr const char* kReportLine = "fatcl-launch: ";

int run_launch(const Options& o) {
  auto emit = [&o](const std::string& text) {
    for (std::string_view line : split_lines(text)) {
      std::printf("%s%.*s\n", o.progress ? kReportLine : "", static_cast<int>(line.size()),
                  line.data());
    }
    std::fflush(stdout);
  };
  std::vector<std::string> problems;
  const std::vector<Family> read = read_families(o.paths, problems);
  std::vector<const Family*> chosen;
  std::vector<std::string> notes;
  for (const Family& f : read) {
    const std::string& name = f.manifest().family;
    const bool named = std::find(o.families.begin(), o.families.end(), name) != o.families.end();
    if (!o.families.empty() && !named) continue;
    if (f.manifest().launch) {
      chosen.push_back(&f);
    } else if (named) {
      problems.push_back("family " + name + " carries no launch description (LAUNCH)");
    } else {
      notes.push_back("not run: family " + name + " carries no launch description (LAUNCH)");
    }
  }
  for (const std::string& name : o.families) {
    bool found = false;
    for (const Family& f : read) found |= f.manifest().family == name;
    if (!found) problems.push_back("--family " + name + ": no such family in the paths given");
  }
  if (chosen.empty() && problems.empty()) {
    throw Error("none of the families found carries a launch description (LAUNCH in "
                "fatcl_add_kernel_variants, --launch in fatcl-compile family)");
  }
  LaunchCheckOptions options;
  for (const std::string& p : o.problems) {
    std::vector<long long> sizes;
    for (std::size_t s : parse_problem(p)) sizes.push_back(static_cast<long long>(s));
    options.problems.push_back(sizes);
  }
  options.variant = o.variant;
  if (!o.tier.empty()) options.tier = parse_tier(o.tier);
  options.seed = static_cast<unsigned>(o.seed);
  if (o.progress) {
    options.progress = [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    };
  }
  bool ok = problems.empty();
  nlohmann::json reports = nlohmann::json::array();
  if (!chosen.empty()) {
    const cl::Device device = pick_device(o.platform, o.device);
    const cl::Context context = context_for(device);
    for (const Family* f : chosen) {
      const LaunchCheckReport report = check_launches(context, device, *f, options);
      ok = ok && report.ok();
      if (o.json) {
        reports.push_back(nlohmann::json::parse(report.to_json()));
      } else {
        emit(report.to_text());
      }
    }
  }
  if (o.json) {
    nlohmann::json doc = {{"ok", ok}, {"families", reports}, {"notes", notes},
                          {"problems", problems}};
    emit(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    for (const std::string& n : notes) emit(n);
    for (const std::string& p : problems) emit("problem: " + p);
  }
  return ok ? 0 : 1;
}

}  // namespace

OclgrindCheck check_under_oclgrind(const std::vector<fs::path>& paths,
                                   const std::string& oclgrind, std::size_t seed) {
  std::vector<std::string> argv{oclgrind, "--data-races", "--uninitialized",
                                fs::read_symlink("/proc/self/exe").string(), "launch",
                                "--progress", "--platform", "Oclgrind"};
  if (seed) argv.insert(argv.end(), {"--seed", std::to_string(seed)});
  for (const fs::path& p : paths) argv.push_back(fs::absolute(p).string());
  const detail::ProcessResult r = detail::run_process(argv);
  OclgrindCheck check;
  const std::vector<SimulatorFinding> findings = simulator_findings(r.output);
  // What fatcl launch printed: its report lines, marked; an error of its
  // own (fatcl: error: ...) or of the simulator, or why it did not start,
  // at the margin.
  std::string text;
  for (std::string_view view : split_lines(r.output)) {
    const std::string line(view);
    if (line.rfind(kReportLine, 0) == 0) {
      text += "  " + line.substr(std::string(kReportLine).size()) + "\n";
    } else if (line.rfind("fatcl: ", 0) == 0 || line.rfind("oclgrind: ", 0) == 0 ||
               line.rfind("cannot run ", 0) == 0) {
      text += "  " + line + "\n";
    }
  }
  check.text = "oclgrind (data races, uninitialised values, divergent barriers, accesses out of "
               "bounds):\n" + text;
  nlohmann::json list = nlohmann::json::array();
  for (const SimulatorFinding& f : findings) {
    std::string where = f.launch.empty() ? "outside any launch" : f.launch;
    for (std::size_t i = 0; i < f.problems.size(); ++i) {
      where += (i == 0 ? " at " : ", ") + f.problems[i];
    }
    check.text += "  problem: " + where + ": " + f.report +
                  (f.where.empty() ? "" : " (" + f.where + ")") +
                  (f.count > 1 ? "; " + std::to_string(f.count) + " reports of its kind" : "") +
                  "\n";
    list.push_back({{"variant", f.launch},
                    {"problems", f.problems},
                    {"report", f.report},
                    {"where", f.where},
                    {"count", f.count}});
  }
  check.ok = r.exit_code == 0 && findings.empty();
  if (r.exit_code != 0 && findings.empty()) {
    check.text += "  problem: `" + oclgrind + " ... fatcl launch` ended with exit status " +
                  std::to_string(r.exit_code) + "\n";
  }
  check.json = {{"ok", check.ok},
                {"exit_status", r.exit_code},
                {"findings", list},
                {"output", text}};
  return check;
}

VerbRun add_launch(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "run a product's own kernel families as their launch descriptions say (LAUNCH in "
      "fatcl_add_kernel_variants): every variant at the tile edges of every variant (or at "
      "--problem), on random inputs the same for every variant, outputs poisoned before each "
      "launch and compared between variants; a variant that does not build, launch or agree is "
      "a problem (exit status 1); one that does not fit the device is named as refused");
  cmd->add_option("paths", o->paths,
                  "bundle folders, manifest.json files, or programs and libraries that embed "
                  "families")
      ->required();
  cmd->add_option("--family", o->families, "only this family; repeat for more")
      ->allow_extra_args(false);
  cmd->add_option("--variant", o->variant, "only this variant");
  cmd->add_option("--tier", o->tier, "only this tier: spirv, ptx or source")
      ->check(CLI::IsMember({"spirv", "ptx", "source"}));
  cmd->add_option("--problem", o->problems,
                  "a problem's sizes in the description's order (e.g. 129 or 33x17x65) instead "
                  "of the tile edges; repeat for more")
      ->allow_extra_args(false);
  cmd->add_option("--platform", o->platform, "substring of the platform name");
  add_whole_number(cmd, "--device", o->device, 0, 65535, "device index within the platform");
  add_whole_number(cmd, "--seed", o->seed, 1, 0xffffffffu,
                   "the inputs' seed, to repeat a run (default: drawn; the report names it)");
  cmd->add_flag("--progress", o->progress,
                "print a line before and after each launch (what fatcl validate --oclgrind "
                "reads the simulator's reports by)");
  cmd->add_flag("--json", o->json, "print one JSON document");
  return [o] { return run_launch(*o); };
}

}  // namespace fatcl::tool
