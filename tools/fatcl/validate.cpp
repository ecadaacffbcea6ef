// fatcl validate PATH...: offline validation of kernel bundles for a user's
// CI (fatcl::validate_paths does the work); with --device, the loader's
// choice on each described device as well (fatcl::check_devices).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "fatcl/compiler.hpp"
#include "fatcl/gemm.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/offline.hpp"
#include "fatcl/store.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<fs::path> paths;
  bool json = false;
  std::string barriers = "refuse";
  std::vector<std::string> devices;
  bool bundled = false;
  std::vector<std::string> source_ok;
  std::string problem;
  std::string form;
  std::vector<std::string> tuning;
  bool explain = false;
  bool oclgrind = false;
  std::string oclgrind_path = "oclgrind";
  std::size_t seed = 0;
};

// A bundle folder or manifest: its modules are validated as well.
bool is_bundle(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) || p.filename() == "manifest.json";
}

// The paths fatcl launch reads families from: all but SPIR-V modules.
std::vector<fs::path> family_paths(const std::vector<fs::path>& paths) {
  std::vector<fs::path> out;
  for (const fs::path& p : paths) {
    if (p.extension() != ".spv") out.push_back(p);
  }
  return out;
}

int run_validate(const Options& o) {
  using json = nlohmann::json;
  if ((o.seed || o.oclgrind_path != "oclgrind") && !o.oclgrind) {
    throw Error("--oclgrind-path and --seed go with --oclgrind");
  }
  std::optional<OclgrindCheck> simulated;
  if (o.oclgrind) {
    const std::vector<fs::path> paths = family_paths(o.paths);
    if (paths.empty()) {
      throw Error("--oclgrind: name the bundles or programs whose families to run");
    }
    simulated = check_under_oclgrind(paths, o.oclgrind_path, o.seed);
  }
  if (o.devices.empty()) {
    if (o.bundled || !o.source_ok.empty() || !o.problem.empty() || !o.tuning.empty() ||
        o.explain || !o.form.empty()) {
      throw Error("--bundled, --source-ok, --problem, --form, --tuning and --explain go with "
                  "--device (the devices to predict the choice for)");
    }
    if (o.paths.empty()) throw Error("name bundle folders, manifest.json files or SPIR-V modules");
    // Programs and libraries are read only by --device and --oclgrind.
    std::vector<fs::path> modules;
    for (const fs::path& p : o.paths) {
      if (!simulated || is_bundle(p) || p.extension() == ".spv") modules.push_back(p);
    }
    const ValidationReport report = validate_paths(modules, parse_barrier_check(o.barriers));
    const bool ok = report.ok() && (!simulated || simulated->ok);
    if (o.json && simulated) {
      json doc = json::parse(report.to_json());
      doc["ok"] = ok;
      doc["oclgrind"] = simulated->json;
      std::printf("%s\n", doc.dump(2, ' ', false, json::error_handler_t::replace).c_str());
    } else {
      std::fputs((o.json ? report.to_json() : report.to_text()).c_str(), stdout);
      if (simulated) std::fputs(simulated->text.c_str(), stdout);
    }
    return ok ? 0 : 1;
  }
  if (o.paths.empty() && !o.bundled) {
    throw Error("--device: name the families to check (bundle folders, manifest.json files, "
                "programs or libraries that embed families) or --bundled for fatcl's own");
  }
  std::vector<DeviceDescription> devices;
  for (const std::string& d : o.devices) {
    for (DeviceDescription& desc : read_device_descriptions(d)) devices.push_back(std::move(desc));
  }
  // The bundles' modules, as without --device.
  std::vector<fs::path> bundles, modules, binaries;
  for (const fs::path& p : o.paths) {
    if (is_bundle(p)) {
      bundles.push_back(p);
      modules.push_back(p);
    } else if (p.extension() == ".spv") {
      modules.push_back(p);
    } else {
      binaries.push_back(p);
    }
  }
  std::optional<ValidationReport> validation;
  if (!modules.empty()) validation = validate_paths(modules, parse_barrier_check(o.barriers));
  // The families: read off disk with the loader's defaults (the manifest's
  // order; no trial launch), and fatcl's own with their descriptions.
  std::vector<std::string> read_problems;
  std::vector<fs::path> to_read = bundles;
  to_read.insert(to_read.end(), binaries.begin(), binaries.end());
  const std::vector<Family> read = read_families(to_read, read_problems);
  std::vector<const Family*> families;
  for (const Family& f : read) families.push_back(&f);
  if (o.bundled) {
    for (MatmulKernel k : matmul_kernels()) families.push_back(&matmul_family(k));
    for (int bits : {16, 32, 64}) {
      for (const Family* f : gemm_families(bits)) families.push_back(f);
    }
  }
  DeviceCheckOptions options;
  options.source_ok = o.source_ok;
  if (!o.problem.empty()) options.load.problem = parse_problem(o.problem);
  options.load.form = o.form;
  auto store = std::make_shared<Store>();
  for (const std::string& t : o.tuning) {
    if (std::error_code ec; !fs::is_regular_file(t, ec)) {
      throw Error("--tuning " + t + ": no such file");
    }
    store->add_layer(t);
  }
  for (const std::string& n : store->layer_notes()) read_problems.push_back("--tuning: " + n);
  options.load.store = store;
  const DeviceCheckReport report = check_devices(families, devices, options);
  const bool ok = report.ok() && read_problems.empty() && (!validation || validation->ok()) &&
                  (!simulated || simulated->ok);
  if (o.json) {
    json doc = {{"ok", ok},
                {"devices", json::parse(report.to_json())},
                {"problems", read_problems},
                {"validation", validation ? json::parse(validation->to_json()) : json(nullptr)},
                {"oclgrind", simulated ? simulated->json : json(nullptr)}};
    std::printf("%s\n", doc.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    if (validation) std::fputs(validation->to_text().c_str(), stdout);
    std::fputs(report.to_text(o.explain).c_str(), stdout);
    for (const std::string& p : read_problems) std::printf("problem: %s\n", p.c_str());
    if (simulated) std::fputs(simulated->text.c_str(), stdout);
  }
  return ok ? 0 : 1;
}

}  // namespace

VerbRun add_validate(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "check bundles offline: every SPIR-V module with SPIRV-Tools under the environment its "
      "manifest declares, and every manifest entry against its module (size, SHA-256, entry "
      "point, work-group size, local memory, SPIR-V version, capabilities), and no barrier "
      "that only some work-items may reach; with --device, which variant and tier the loader "
      "would choose on each described device, computed without the device; one line per "
      "problem, exit status 1 on any");
  cmd->add_option("paths", o->paths,
                  "bundle folders, manifest.json files or SPIR-V modules; with --device or "
                  "--oclgrind also programs and libraries that embed families");
  cmd->add_flag("--json", o->json, "print the report as JSON");
  cmd->add_option("--barrier-check", o->barriers,
                  "a barrier only some work-items of a group may reach (under control flow that "
                  "depends on the work-item): a problem (refuse, the default), a warning (warn) "
                  "or not looked for (off)")
      ->check(CLI::IsMember({"refuse", "warn", "off"}));
  cmd->add_option("--device", o->devices,
                  "a device description (`fatcl devices --json` writes one; fatcl installs those "
                  "of the devices it was measured on in share/fatcl/devices): predict the "
                  "loader's choice of each family on each device it describes; a device that "
                  "would get no precompiled tier is a problem; repeat for more")
      ->allow_extra_args(false);
  cmd->add_flag("--bundled", o->bundled,
                "with --device: check fatcl's own families too, with their rankings and shipped "
                "tuning");
  cmd->add_option("--source-ok", o->source_ok,
                  "with --device: a device where building the OpenCL C source is acceptable (a "
                  "substring of \"PLATFORM / DEVICE NAME\", or * for all); repeat for more")
      ->allow_extra_args(false);
  cmd->add_option("--problem", o->problem,
                  "with --device: the problem's sizes the product loads for (e.g. 1024x1024x512), "
                  "as LoadOptions::problem; default: none (the largest problem tuned)");
  cmd->add_option("--form", o->form, "with --device: the problem's form (LoadOptions::form)");
  cmd->add_option("--tuning", o->tuning,
                  "with --device: a tuning store file whose entries rank as the product's store "
                  "would (default: only the families' shipped entries); repeat for more layers")
      ->allow_extra_args(false);
  cmd->add_flag("--oclgrind", o->oclgrind,
                "run each family's variants that carries a launch description (LAUNCH) at the "
                "tile edges of every variant under Oclgrind (--data-races --uninitialized), "
                "from its OpenCL C source: a data race, a divergent barrier, an uninitialised "
                "value, an access out of bounds, a variant that does not build or launch, or "
                "outputs that differ between variants is a problem, named with the launch");
  cmd->add_option("--oclgrind-path", o->oclgrind_path,
                  "with --oclgrind: the oclgrind command (default: oclgrind on PATH)");
  add_whole_number(cmd, "--seed", o->seed, 1, 0xffffffffu,
                   "with --oclgrind: the inputs' seed, to repeat a run (default: drawn)");
  cmd->add_flag("--explain", o->explain,
                "with --device: print each choice's explanation, as load() gives it");
  return [o] { return run_validate(*o); };
}

}  // namespace fatcl::tool
