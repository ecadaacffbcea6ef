// fatcl cache: the persistent program-binary cache (fatcl::ProgramCache):
// stats, clear, and warm (build every fitting variant, in each tier, of the bundled
// families for every device, e.g. at install time, so that no product start
// compiles).
#include "fatcl/cache.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "fatcl/matmul.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

// The options, then the run: stats, clear, or warm (warm_matmul_programs on
// each device), each reported as text or one JSON document.
VerbRun add_cache(CLI::App& app) {
  struct Options {
    std::string action;
    std::vector<std::string> families;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "cache",
      "the program-binary cache (FATCL_CACHE_DIR, else $XDG_CACHE_HOME/fatcl/programs; "
      "FATCL_CACHE=0 turns it off): stats, clear, or warm (build every fitting variant, in every "
      "tier the device takes, of the "
      "bundled families on every device)");
  cmd->add_option("action", o->action, "stats, clear or warm")
      ->required()
      ->check(CLI::IsMember({"stats", "clear", "warm"}));
  cmd->add_option(
      "--family", o->families,
      "warm: only this family (" + matmul_kernel_names() + "); repeat for more (default: all)");
  cmd->add_flag("--json", o->json, "print one JSON document to stdout");
  return [o] {
    if (!o->families.empty() && o->action != "warm") {
      throw Error("--family chooses what `fatcl cache warm` builds; `cache " + o->action +
                  "` takes the whole cache");
    }
    const std::shared_ptr<ProgramCache> cache = ProgramCache::user();
    nlohmann::json report = {{"folder", cache->dir().string()}, {"enabled", cache->enabled()}};
    if (!cache->enabled()) {
      if (o->json) {
        std::puts(report.dump(2).c_str());
      } else {
        std::puts("the program cache is off (FATCL_CACHE=0, or no home folder)");
      }
      return o->action == "stats" ? 0 : 1;
    }
    if (o->action == "clear") {
      report["removed"] = cache->clear();
    } else if (o->action == "warm") {
      report["devices"] = nlohmann::json::array();
      for (const PlatformDevices& p : list_platforms()) {
        for (const cl::Device& device : p.devices) {
          const DeviceCaps caps = DeviceCaps::query(device);
          const cl::Context context = context_for(device);
          const MatmulWarmth w = warm_matmul_programs(context, device, cache, o->families);
          nlohmann::json failed = nlohmann::json::array();
          for (const Step& f : w.failed) {
            failed.push_back({{"variant", f.variant},
                              {"tier", f.tier ? to_string(*f.tier) : ""},
                              {"reason", f.reason.substr(0, 300)}});
          }
          const std::size_t built = w.built, cached = w.already_cached;
          std::fprintf(stderr, "%s: %zu built, %zu already cached, %zu failed\n",
                       caps.device_name.c_str(), built, cached, failed.size());
          report["devices"].push_back({{"device", caps.summary()},
                                       {"built", built},
                                       {"already_cached", cached},
                                       {"failed", failed}});
        }
      }
    }
    const ProgramCache::Stats s = cache->stats();
    report["entries"] = s.entries;
    report["bytes"] = s.bytes;
    if (o->json) {
      std::puts(report.dump(2).c_str());
    } else {
      std::printf(
          "program cache %s: %zu entries, %.1f MiB%s\n", cache->dir().c_str(), s.entries,
          double(s.bytes) / (1 << 20),
          report.contains("removed")
              ? (", " + std::to_string(report["removed"].get<std::size_t>()) + " removed").c_str()
              : "");
    }
    return 0;
  };
}

}  // namespace fatcl::tool
