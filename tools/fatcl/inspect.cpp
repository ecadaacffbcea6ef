// fatcl inspect BUNDLE|BINARY...: what a bundle or a product binary holds
// (fatcl::inspect_paths does the work).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "fatcl/compiler.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

std::vector<Family> read_families(const std::vector<std::filesystem::path>& paths,
                                  std::vector<std::string>& problems) {
  std::vector<Family> read;
  if (paths.empty()) return read;
  InspectReport found = inspect_paths(paths);
  problems.insert(problems.end(), found.problems.begin(), found.problems.end());
  for (InspectedFamily& f : found.families) {
    for (const std::string& p : f.problems) {
      problems.push_back(f.manifest.family + " in " + f.origin + ": " + p);
    }
    if (!f.problems.empty()) continue;
    try {
      read.emplace_back(std::make_shared<const FamilyBytes>(std::move(f.bytes)));
    } catch (const Error& e) {
      problems.push_back(f.origin + ": " + e.what());
    }
  }
  return read;
}

VerbRun add_inspect(CLI::App& app) {
  struct Options {
    std::vector<std::filesystem::path> paths;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "what a bundle or a product binary holds, as cuobjdump lists a CUDA fat binary: per family "
      "and variant the parameters, work-group, local memory and each tier's code (SPIR-V version "
      "and capabilities, PTX target with ptxas's registers, stack and spills, the source or its "
      "absence), sizes and hashes, the toolchain that made them, and the size per tier; in a "
      "binary each module is found by its SHA-256; exit status 1 if one is missing or differs");
  cmd->add_option("paths", o->paths,
                  "bundle folders, manifest.json files, or programs and libraries that embed "
                  "families")
      ->required();
  cmd->add_flag("--json", o->json, "print one JSON document");
  return [o] {
    const InspectReport report = inspect_paths(o->paths);
    std::fputs((o->json ? report.to_json() : report.to_text()).c_str(), stdout);
    return report.ok() ? 0 : 1;
  };
}

}  // namespace fatcl::tool
