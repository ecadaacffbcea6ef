// fatcl validate PATH...: offline validation of kernel bundles for a user's
// CI (fatcl::validate_paths does the work).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "fatcl/compiler.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

VerbRun add_validate(CLI::App& app) {
  struct Options {
    std::vector<std::filesystem::path> paths;
    bool json = false;
    std::string barriers = "refuse";
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "check bundles offline: every SPIR-V module with SPIRV-Tools under the environment its "
      "manifest declares, and every manifest entry against its module (size, SHA-256, entry "
      "point, work-group size, local memory, SPIR-V version, capabilities), and no barrier "
      "that only some work-items may reach; one line per problem, exit status 1 on any");
  cmd->add_option("paths", o->paths, "bundle folders, manifest.json files or SPIR-V modules")
      ->required();
  cmd->add_flag("--json", o->json, "print the report as JSON");
  cmd->add_option("--barrier-check", o->barriers,
                  "a barrier only some work-items of a group may reach (under control flow that "
                  "depends on the work-item): a problem (refuse, the default), a warning (warn) "
                  "or not looked for (off)")
      ->check(CLI::IsMember({"refuse", "warn", "off"}));
  return [o] {
    const ValidationReport report = validate_paths(o->paths, parse_barrier_check(o->barriers));
    std::fputs((o->json ? report.to_json() : report.to_text()).c_str(), stdout);
    return report.ok() ? 0 : 1;
  };
}

}  // namespace fatcl::tool
